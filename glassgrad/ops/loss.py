"""Loss primitives whose PyTorch backward differs from the derivative of the forward expression.

``binary_cross_entropy`` clamps each log at -100 in forward, and its backward divides by
``max((1 - x) x, 1e-12)``: a saturated probability (x exactly 0 or 1, as a float32 sigmoid gives)
has a large finite gradient, not the ``0 * inf = nan`` a composed ``clamp(log(x))`` would give.
"""

from __future__ import annotations

import numpy as np

from .elementwise import clamp, log, log1p
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
