"""Fill and copy primitives: ``clone``, ``fill_``/``zero_``, ``copy_``, ``masked_fill_``.

Their in-place forms go through ``Primitive.apply_inplace`` (see _tensor_methods.py).
"""

from __future__ import annotations

from . import primitive
from ._util import scalar
from .elementwise import where
from .primitive import Primitive


class Clone(Primitive):
    @staticmethod
    def forward(xp, x):
        return xp.array(x, copy=True, order="C")

    @staticmethod
    def backward(grad):
        return (grad,)


def clone(input, *, memory_format=None):
    """A copy with its own storage, differentiable (``torch.clone``); ``memory_format=
    glassgrad.channels_last`` (4-D) or ``channels_last_3d`` (5-D) lays the copy out channels
    innermost, as torch does (RuntimeError for another rank)."""
    if memory_format is not None:
        from .. import _memory_format as mf

        order = mf.order_of(memory_format, input.ndim, "clone")
        if order is not None:
            from .._tensor_methods_storage import ContiguousCopy

            return ContiguousCopy.apply(input, order=order)
    return Clone.apply(input)


class Fill(Primitive):
    @staticmethod
    def forward(xp, x, *, value):
        return xp.full_like(x, value)

    @staticmethod
    def backward(grad, *, value):
        return (Fill.apply(grad, value=0),)  # not grad * 0: NaN where grad is inf


class CopyFrom(Primitive):
    """``x.copy_(src)``: the result is ``src`` broadcast to ``x``'s shape."""

    node_name = "CopyBackwards"

    @staticmethod
    def forward(xp, x, src):
        return xp.broadcast_to(src, x.shape).copy()

    @staticmethod
    def backward(grad):
        return Fill.apply(grad, value=0), grad


class MaskedFill(Primitive):
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, value, *, mask):
        return xp.where(mask, value, x)

    @staticmethod
    def backward(grad, *, mask):
        cond = primitive._make(mask)
        zero = scalar(0, grad._array.dtype)
        return where(cond, zero, grad), where(cond, grad, zero)
