"""``mse_loss`` and ``binary_cross_entropy_with_logits`` as one op each, with their derivative
kernels as ops of their own (so double backward works): the composites in
``nn/_functional_loss.py`` took 4-6 ops forward and as many backward. The forwards keep the
composites' arithmetic, so values are unchanged; node names are PyTorch's
(``MseLossBackward0``, ``BinaryCrossEntropyWithLogitsBackward0``).

``reduction`` is 'mean', 'sum' or 'none'; the gradient of a reduced loss is spread back with
``_spread`` (``grad / n`` broadcast for 'mean').
"""

from __future__ import annotations

import math

import numpy as np

from ._util import divide_count, half
from .elementwise import _sigmoid
from .primitive import Primitive
from .scalar import constant


def _reduce_array(xp, loss, reduction):
    if reduction == "none":
        return loss
    if half(loss.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
        return (xp.sum if reduction == "sum" else xp.mean)(loss, dtype=np.float32).astype(
            loss.dtype)
    if type(loss) is np.ndarray and loss.size:
        # NOTE: np.sum/np.mean's own steps (add.reduce, then for the mean a division of the
        # float result by the count, NEP 50), without their ~4 us of Python wrappers
        total = np.add.reduce(loss, axis=None, dtype=loss.dtype)
        return total if reduction == "sum" else loss.dtype.type(total / loss.size)
    if reduction == "sum":
        return xp.sum(loss, dtype=loss.dtype)
    return xp.mean(loss, dtype=loss.dtype)


def _spread_array(xp, grad, shape, reduction):
    if reduction == "none":
        return grad
    if reduction == "mean":
        grad = divide_count(grad, math.prod(shape))
    return xp.broadcast_to(grad, shape)


def _spread(grad, shape, reduction):
    """Tensor form of ``_spread_array`` (differentiable)."""
    if reduction == "none":
        return grad
    n = math.prod(shape)
    return (grad / n if reduction == "mean" else grad).expand(shape)


def _reduce(t, reduction):
    """Tensor form of ``_reduce_array``."""
    if reduction == "none":
        return t
    return t.sum() if reduction == "sum" else t.mean()


class MseLoss(Primitive):
    """``(x - target)**2`` reduced; ``x`` and ``target`` of one shape and dtype."""

    saves = ("x", "target")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, target, *, reduction):
        diff = x - target
        return _reduce_array(xp, diff * diff, reduction)

    @staticmethod
    def backward(grad, x, target, *, reduction, needs_input_grad):
        grad_x = MseLossBackward.apply(grad, x, target, reduction=reduction)
        return (grad_x if needs_input_grad[0] else None,
                -grad_x if needs_input_grad[1] else None)

    @staticmethod
    def backward_np(grad, x, target, *, reduction, needs_input_grad):
        # NOTE [Array backward] in autograd/engine_arrays.py: the rule above on arrays
        grad_x = MseLossBackward.forward(np, grad, x, target, reduction=reduction)
        return (grad_x if needs_input_grad[0] else None,
                -grad_x if needs_input_grad[1] else None)


class MseLossBackward(Primitive):
    """``2 * g * (x - target)``, ``g`` the loss's gradient spread over the elements."""

    saves = ("grad", "x", "target")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, x, target, *, reduction):
        scaled = _spread_array(xp, grad, x.shape, reduction) * (x - target)
        return scaled + scaled  # NOTE: as the composite: diff * diff's two paths, summed

    @staticmethod
    def backward(grad_grad, grad, x, target, *, reduction, needs_input_grad):
        grad_grad_out = grad_x = grad_target = None
        if needs_input_grad[0]:
            grad_grad_out = _reduce(grad_grad * (x - target) * 2, reduction)
        if needs_input_grad[1] or needs_input_grad[2]:
            d = grad_grad * _spread(grad, x.shape, reduction) * 2
            grad_x = d if needs_input_grad[1] else None
            grad_target = -d if needs_input_grad[2] else None
        return grad_grad_out, grad_x, grad_target


class BinaryCrossEntropyWithLogits(Primitive):
    """``(1 - target) * x + softplus(-x)`` reduced; no gradient for ``target`` (the fused path is
    taken only when it needs none)."""

    saves = ("x", "target")

    @staticmethod
    def forward(xp, x, target, *, reduction):
        one = constant(1, x.dtype)
        loss = (one - target) * x + xp.logaddexp(x.dtype.type(0), -x)
        return _reduce_array(xp, loss, reduction)

    @staticmethod
    def backward(grad, x, target, *, reduction):
        return BinaryCrossEntropyWithLogitsBackward.apply(grad, x, target,
                                                          reduction=reduction), None

    @staticmethod
    def backward_np(grad, x, target, *, reduction):
        return BinaryCrossEntropyWithLogitsBackward.forward(np, grad, x, target,
                                                            reduction=reduction), None


class BinaryCrossEntropyWithLogitsBackward(Primitive):
    """``g * ((1 - target) - sigmoid(-x))``, ``g`` the loss's gradient spread over the elements
    (the composite's softplus and product rules, combined)."""

    saves = ("grad", "x", "target")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, x, target, *, reduction):
        one = constant(1, x.dtype)
        return _spread_array(xp, grad, x.shape, reduction) * ((one - target) - _sigmoid(xp, -x))

    @staticmethod
    def backward(grad_grad, grad, x, target, *, reduction, needs_input_grad):
        grad_grad_out = grad_x = None
        if needs_input_grad[0]:
            grad_grad_out = _reduce(grad_grad * ((1 - target) - (-x).sigmoid()), reduction)
        if needs_input_grad[1]:
            s = x.sigmoid()
            grad_x = grad_grad * _spread(grad, x.shape, reduction) * (s * (1 - s))
        return grad_grad_out, grad_x, None
