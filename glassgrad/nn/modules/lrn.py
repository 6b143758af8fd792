"""Local response normalisation layers: ``LocalResponseNorm`` and the legacy ``CrossMapLRN2d``
(``torch.nn.LocalResponseNorm`` ...); reachable at ``nn.modules.normalization`` as in torch."""

from __future__ import annotations

from .. import functional as F
from .._functional_norm import cross_map_lrn2d
from ..module import Module

__all__ = ["CrossMapLRN2d", "LocalResponseNorm"]


class _LocalNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LocalResponseNorm(_LocalNorm):
    """Normalise each element by the sum of squares over ``size`` neighbouring channels:
    (N, C, *) -> same shape (``torch.nn.LocalResponseNorm``); see
    ``nn.functional.local_response_norm``.

    Example::

        >>> glassgrad.nn.LocalResponseNorm(2)(glassgrad.randn(2, 4, 3, 3)).shape
        glassgrad.Size([2, 4, 3, 3])
    """

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(_LocalNorm):
    """The Lua-Torch cross-channel LRN over (N, C, H, W) (``torch.nn.CrossMapLRN2d``): torch's
    forward values, window quirk included; the gradient is the exact derivative of those values
    (torch's hand-written backward is not, and fails its own gradcheck). ValueError for an input
    that is not 4-D."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)
