"""Fused derivative kernels of elementwise ops: one op instead of three in every first-order
backward, each with its own backward so double backward still works (DESIGN.md: "a fast backward
kernel is an op of its own").

Each forward keeps the exact arithmetic order of the composite rule it replaces
(``grad * (1 - y * y)`` for ``y = tanh(x)``...), so values are unchanged. Node names are PyTorch's
(``TanhBackwardBackward0``, ``SigmoidBackwardBackward0``).
"""

from __future__ import annotations

import numpy as np

from . import primitive
from ._util import cj
from .primitive import Primitive
from .scalar import constant


class TanhBackward(Primitive):
    """``grad * (1 - y**2)``, the derivative of ``y = tanh(x)``."""

    saves = ("grad", "y")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, y):
        return grad * cj(1 - y * y)  # (a Python int keeps every float dtype, bfloat16 too)

    @staticmethod
    def backward(grad_grad, grad, y, needs_input_grad):
        return (TanhBackward.apply(grad_grad, cj(y)) if needs_input_grad[0] else None,
                cj(grad_grad * grad.conj() * y * -2) if needs_input_grad[1] else None)


class SigmoidBackward(Primitive):
    """``grad * y * (1 - y)``, the derivative of ``y = sigmoid(x)``."""

    saves = ("grad", "y")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, y):
        return grad * y * (1 - y)

    @staticmethod
    def backward(grad_grad, grad, y, needs_input_grad):
        return (SigmoidBackward.apply(grad_grad, y) if needs_input_grad[0] else None,
                grad_grad * grad * (1 - y * 2) if needs_input_grad[1] else None)


class PowScalarBackward(Primitive):
    """``grad * exponent * x ** (exponent - 1)``, the derivative of ``x ** exponent`` for a number
    ``exponent != 0``."""

    node_name = "PowBackward0Backward0"
    saves = ("grad", "x")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, x, *, exponent):
        return grad * constant(exponent, x.dtype) * x ** (exponent - 1)

    @staticmethod
    def backward(grad_grad, grad, x, *, exponent, needs_input_grad):
        grad_grad_x = grad_x = None
        if needs_input_grad[0]:
            grad_grad_x = PowScalarBackward.apply(grad_grad, x, exponent=exponent)
        if needs_input_grad[1]:
            if exponent == 1:
                grad_x = grad_grad * grad * 0
            else:
                grad_x = grad_grad * grad * (exponent * (exponent - 1)) * x ** (exponent - 2)
        return grad_grad_x, grad_x


class ThresholdBackward(Primitive):
    """``grad`` where ``y > 0`` (or NaN, as in PyTorch) else 0: the derivative of ``y = relu(x)``,
    one op where the composite took a comparison and a ``where``; zero derivative in ``y``."""

    saves = ("y",)
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, y):
        if type(grad) is np.ndarray and grad.dtype.kind == "f" and grad.shape == y.shape:
            # NOTE: where() bit for bit at a third of its cost here: AND each element's bits
            # with all-ones (keep) or zero (y <= 0); NaN and signed zeros come out as where's
            bits = np.dtype(f"i{grad.dtype.itemsize}")
            keep = (y <= 0).view(np.int8).astype(bits)
            keep -= 1
            return np.bitwise_and(grad.view(bits), keep).view(grad.dtype)
        return xp.where(y <= 0, grad.dtype.type(0), grad)

    @staticmethod
    def backward(grad_grad, y, needs_input_grad):
        zero = None
        if needs_input_grad[1]:
            zero = primitive._make(np.zeros(y._array.shape, dtype=y._array.dtype))
        return (ThresholdBackward.apply_binary(grad_grad, y) if needs_input_grad[0] else None,
                zero)


class SelectGrad(Primitive):
    """``grad`` where ``condition`` (a bool array attribute) else +0, PyTorch's select of a
    gradient (``where(condition, grad, 0)``); linear in ``grad``, so its derivative is itself."""

    node_name = "WhereBackward0"

    @staticmethod
    def forward(xp, grad, *, condition):
        if (type(grad) is np.ndarray and type(condition) is np.ndarray and grad.dtype.kind == "f"
                and grad.shape == condition.shape):
            # NOTE: where() bit for bit at a third of its cost (as ThresholdBackward): AND each
            # element's bits with all-ones (kept) or zero
            bits = np.dtype(f"i{grad.dtype.itemsize}")
            keep = condition.view(np.int8).astype(bits)
            np.negative(keep, out=keep)
            return np.bitwise_and(grad.view(bits), keep).view(grad.dtype)
        return xp.where(condition, grad, grad.dtype.type(0))

    @staticmethod
    def backward(grad_grad, *, condition):
        return (SelectGrad.apply(grad_grad, condition=condition),)
