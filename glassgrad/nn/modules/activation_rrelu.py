"""``torch.nn.RReLU``: the randomized leaky ReLU module over ``nn.functional.rrelu``."""

from __future__ import annotations

from .._functional_rrelu import _LOWER, _UPPER, rrelu
from ..module import Module
from .activation import _inplace_suffix

__all__ = ["RReLU"]


class RReLU(Module):
    """``x`` for ``x > 0`` else ``a x``: ``a ~ U(lower, upper)`` per element in training (torch's
    draws after the same seed), ``(lower + upper) / 2`` in eval (``torch.nn.RReLU``)."""

    def __init__(self, lower: float = _LOWER, upper: float = _UPPER,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"
