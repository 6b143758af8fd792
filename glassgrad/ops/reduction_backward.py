"""The derivative kernels of ``sum`` and ``mean`` as one op each (DESIGN.md: a fast backward kernel
is an op of its own): the gradient is reshaped to keep the reduced dims and broadcast back to the
input's shape as one read-only view, where the composite took a reshape and an expand op (and a
division for the mean). Their derivatives are ``sum`` and ``mean`` again.
"""

from __future__ import annotations

from ._util import divide_count
from .primitive import Primitive


def _kept(grad, dims, keepdim, shape):
    if keepdim or not dims:
        return grad
    return grad.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))


class SumBackward(Primitive):
    """``grad`` of ``x.sum(dims)`` broadcast to ``x``'s ``shape`` (PyTorch: an expand)."""

    node_name = "ExpandBackward0"

    @staticmethod
    def forward(xp, grad, *, dims, keepdim, shape):
        return xp.broadcast_to(_kept(grad, dims, keepdim, shape), shape)

    @staticmethod
    def backward(grad_grad, *, dims, keepdim, shape):
        from .reduction import Sum

        return (Sum.apply(grad_grad, dims=dims, keepdim=keepdim, shape=shape),)


class MeanBackward(Primitive):
    """``grad / n`` of ``x.mean(dims)`` (``n`` > 0 elements per mean) broadcast to ``shape``."""

    @staticmethod
    def forward(xp, grad, *, dims, keepdim, shape, n):
        return xp.broadcast_to(_kept(divide_count(grad, n), dims, keepdim, shape), shape)

    @staticmethod
    def backward(grad_grad, *, dims, keepdim, shape, n):
        from .reduction import Mean

        return (Mean.apply(grad_grad, dims=dims, keepdim=keepdim, shape=shape, n=n),)
