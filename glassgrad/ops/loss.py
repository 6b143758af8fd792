"""Loss primitives whose PyTorch backward differs from the derivative of the forward expression.

``binary_cross_entropy`` clamps each log at -100 in forward, and its backward divides by
``max((1 - x) x, 1e-12)``: a saturated probability (x exactly 0 or 1, as a float32 sigmoid gives)
has a large finite gradient, not the ``0 * inf = nan`` a composed ``clamp(log(x))`` would give.
"""

from __future__ import annotations

import numpy as np

from .activation import Softplus
from .elementwise import clamp, log, log1p, sigmoid
from .primitive import Primitive

_EPSILON = 1e-12


class BinaryCrossEntropy(Primitive):
    saves = ("x", "target")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, target):
        with np.errstate(divide="ignore"):
            log_x = xp.maximum(xp.log(x), x.dtype.type(-100))
            log_1mx = xp.maximum(xp.log1p(-x), x.dtype.type(-100))
        return -(target * log_x + (1 - target) * log_1mx)

    @staticmethod
    def backward(grad, x, target, needs_input_grad):
        grad_x = grad_target = None
        if needs_input_grad[0]:
            grad_x = grad * (x - target) / clamp((1 - x) * x, min=_EPSILON)
        if needs_input_grad[1]:
            with np.errstate(divide="ignore"):  # x at 0 or 1 gives an infinite gradient, as PyTorch
                grad_target = grad * (log1p(-x) - log(x))
        return grad_x, grad_target


class BinaryCrossEntropyWithLogitsPosWeight(Primitive):
    """``(1 - t) x + (1 + (pw - 1) t) softplus(-x)``, unreduced and unweighted, with torch's
    gradient formulas: ``((pw t + 1 - t) sigmoid(x) - pw t)`` for x and
    ``log_sigmoid(-x) - pw log_sigmoid(x)`` for the target. The derivative of the expression
    above gives the same numbers except at infinities (``inf - inf`` where torch's form has
    none, and the other way round), so the NaN/Inf pattern of the gradients is torch's."""

    saves = ("x", "target", "pos_weight")

    @staticmethod
    def forward(xp, x, target, pos_weight):
        with np.errstate(invalid="ignore", over="ignore"):
            return (1 - target) * x + (1 + (pos_weight - 1) * target) * xp.logaddexp(0, -x)

    @staticmethod
    def backward(grad, x, target, pos_weight):
        weighted = pos_weight * target
        grad_x = grad * ((weighted + 1 - target) * sigmoid(x) - weighted)
        grad_target = grad * (Softplus.apply(-x) * pos_weight - Softplus.apply(x))
        grad_pos_weight = grad * target * Softplus.apply(-x)
        return grad_x, grad_target, grad_pos_weight
