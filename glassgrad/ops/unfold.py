"""``Tensor.unfold``: sliding windows along one dim as a strided view, and its backward (the
windows summed back into place), each the other's derivative so double backward works."""

from __future__ import annotations

import numpy as np

from ._util import mark_view, wrap_dim
from .primitive import Primitive


def _windows(xp, x, dim, size, step):
    """The windows of ``x`` along ``dim`` (a view: that dim holds the window starts, a new last
    dim the window's elements), writable when ``x`` is; windows overlap when step < size."""
    if x.ndim == 0:
        return x.reshape(1)
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim, writeable=x.flags.writeable)
    return w[(slice(None),) * dim + (slice(None, None, step),)]


class Unfold(Primitive):
    @staticmethod
    def forward(xp, x, *, dim, size, step, shape):
        return _windows(xp, x, dim, size, step)

    @staticmethod
    def backward(grad, *, dim, size, step, shape):
        return (UnfoldBackward.apply(grad, dim=dim, size=size, step=step, shape=shape),)


class UnfoldBackward(Primitive):
    """Zeros of the unfolded tensor's ``shape`` with every window's gradient added at its place
    (overlapping windows add up)."""

    @staticmethod
    def forward(xp, grad, *, dim, size, step, shape):
        out = xp.zeros(shape, dtype=grad.dtype)
        if not shape:
            return grad.reshape(())
        n = grad.shape[dim]
        for k in range(size):  # NOTE: one offset at a time: within one, no element repeats
            idx = (slice(None),) * dim + (slice(k, k + step * (n - 1) + 1, step),)
            out[idx] += grad[..., k]
        return out

    @staticmethod
    def backward(grad, *, dim, size, step, shape):
        return (Unfold.apply(grad, dim=dim, size=size, step=step, shape=grad._array.shape),)


def unfold(input, dimension: int, size: int, step: int):
    """Windows of ``size`` elements every ``step`` along ``dimension`` (``torch.Tensor.unfold``):
    that dim becomes the window count ``(n - size) // step + 1`` and a new last dim of ``size``
    is added. A view (writes reach ``input``). RuntimeError for a window larger than the dim or
    a step that is not positive."""
    arr = input._array
    d = wrap_dim(dimension, max(arr.ndim, 1), "unfold")
    n = arr.shape[d] if arr.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    out = Unfold.apply(input, dim=d, size=int(size), step=int(step), shape=arr.shape)
    return mark_view(out, input, lambda b: unfold(b, d, size, step))
