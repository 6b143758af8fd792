"""``ChannelShuffle`` (``torch.nn.modules.channelshuffle``): a thin wrapper over
``F.channel_shuffle``."""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` from ``groups`` groups, as ShuffleNet does
    (``torch.nn.ChannelShuffle``)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
