"""``slice_inverse``'s primitive: ``src``'s geometry read over ``input``'s storage, with
PyTorch's derivative (``input`` gets the slice of ``grad``, ``src`` the rest)."""

from __future__ import annotations

from .. import _storage
from .primitive import Primitive


class SliceInverse(Primitive):
    """NOTE: forward copies the window (PyTorch returns it as a view of ``input``'s storage)."""

    @staticmethod
    def forward(xp, input, src, *, size, stride, offset, dim, start, end, step):
        return _storage.view_of(input, size, stride, offset).copy()

    @staticmethod
    def backward(grad, *, size, stride, offset, dim, start, end, step):
        from .._ops_scatter import slice_scatter

        grad_input = grad[(slice(None),) * dim + (slice(start, end, step),)]
        return grad_input, slice_scatter(grad, grad_input.mul(0), dim, start, end, step)
