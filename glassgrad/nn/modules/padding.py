"""Padding layers: ``ConstantPad``, ``ZeroPad``, ``ReflectionPad``, ``ReplicationPad`` and
``CircularPad`` in 1, 2 and 3 dims (``torch.nn.modules.padding``), thin wrappers over
``F.pad``. ``padding`` is an int (every side) or a tuple ``(left, right[, top, bottom[, front,
back]])``, the last dim first, as ``F.pad`` takes it."""

from __future__ import annotations

from .. import functional as F
from ..module import Module
from .utils import _ntuple

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]


class _PadNd(Module):
    """``F.pad(input, padding, mode)`` over the last ``_nd`` dims."""

    _nd = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(2 * self._nd)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input "
                             f"(got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Wrap-around padding of the last dim of ``(C, W)`` or ``(N, C, W)``
    (``torch.nn.CircularPad1d``); other ranks raise ValueError."""


class CircularPad2d(_CircularPadNd):
    """Wrap-around padding of the last 2 dims of ``(C, H, W)`` or ``(N, C, H, W)``
    (``torch.nn.CircularPad2d``); other ranks raise ValueError."""

    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Wrap-around padding of the last 3 dims of ``(C, D, H, W)`` or ``(N, C, D, H, W)``
    (``torch.nn.CircularPad3d``); other ranks raise ValueError."""

    _nd = 3


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Mirror padding of the last dim, the edge not repeated (``torch.nn.ReflectionPad1d``)."""


class ReflectionPad2d(_ReflectionPadNd):
    """Mirror padding of the last 2 dims (``torch.nn.ReflectionPad2d``)."""

    _nd = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Mirror padding of the last 3 dims (``torch.nn.ReflectionPad3d``)."""

    _nd = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Edge-value padding of the last dim (``torch.nn.ReplicationPad1d``)."""


class ReplicationPad2d(_ReplicationPadNd):
    """Edge-value padding of the last 2 dims (``torch.nn.ReplicationPad2d``)."""

    _nd = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Edge-value padding of the last 3 dims (``torch.nn.ReplicationPad3d``)."""

    _nd = 3


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value`` (``torch.nn.ConstantPad1d``)."""


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value`` (``torch.nn.ConstantPad2d``)."""

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value`` (``torch.nn.ConstantPad3d``)."""

    _nd = 3


class _ZeroPad:
    """``ZeroPadNd(padding)``: ``ConstantPadNd(padding, 0.0)`` with the short repr."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dim with zeros (``torch.nn.ZeroPad1d``)."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last 2 dims with zeros (``torch.nn.ZeroPad2d``), e.g. ``ZeroPad2d((1, 1, 2, 0))``
    adds one column each side and two rows on top."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last 3 dims with zeros (``torch.nn.ZeroPad3d``)."""
