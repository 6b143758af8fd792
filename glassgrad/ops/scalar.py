"""Primitives with one Python-number operand: ``x + 2``, ``x - 2``, ``2 - x``, ``x * 2``, ``x / 2``.

NOTE [Scalar operands]: the operators of a floating tensor take these when the other operand is a
Python ``float`` or ``int`` (``_tensor_methods.py``). The number stays a Python number (an
attribute): no 0-d tensor is made for it, nothing is saved for it, and NumPy's weak-scalar rule
(NEP 50) keeps the tensor's dtype exactly as PyTorch's promotion does for a float tensor. Node
names and ``next_functions`` (the number's ``(None, 0)`` edge) read as PyTorch's; ``2 - x`` is
PyTorch's ``RsubBackward1`` with one edge. Mul and Div are freed by backward (``frees_attrs``):
PyTorch saves their number as a tensor, so a second backward through them raises there too. Every other operand mix goes through the public
functions (``ops.elementwise.add`` ...), which promote.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .primitive import Primitive

_CONSTANTS: dict = {}  # (number, dtype) -> NumPy scalar
_F32, _F64 = np.float32, np.float64


def constant(value, dtype):
    """``value`` as a cached NumPy scalar of ``dtype`` (NumPy converts a Python number on every
    call, ~0.3 us: more than a 0-d op itself; a scalar, not a 0-d array, because scalar-with-scalar
    arithmetic is 5x faster: NOTE [Fast path] in fast_path.py). Same values and warnings as
    NumPy's own conversion of a Python operand (NEP 50); zeros (signed) and NaN pass uncached."""
    key = (value, dtype)
    arr = _CONSTANTS.get(key)
    if arr is None:
        if value == 0 or (value.__class__ is float and math.isnan(value)):
            return value
        try:
            arr = np.asarray(value, dtype=dtype)[()]
        except (OverflowError, TypeError, ValueError):
            return value  # NumPy raises its own error when the op runs
        if len(_CONSTANTS) >= 4096:
            _CONSTANTS.clear()
        _CONSTANTS[key] = arr
    return arr


class AddScalar(Primitive):
    node_name = "AddBackward0"
    scalar_edge = True

    scalar_op = operator.add

    @staticmethod
    def forward(xp, x, *, other):
        return x + constant(other, x.dtype)

    @staticmethod
    def backward(grad, *, other):
        return grad, None

    backward_np = backward  # NOTE [Array backward]: the same rule on arrays


class SubScalar(Primitive):
    node_name = "SubBackward0"
    scalar_edge = True

    scalar_op = operator.sub

    @staticmethod
    def forward(xp, x, *, other):
        return x - constant(other, x.dtype)

    @staticmethod
    def backward(grad, *, other):
        return grad, None

    backward_np = backward


class RSubScalar(Primitive):
    """``other - x`` for a number ``other``."""

    node_name = "RsubBackward1"

    scalar_op = staticmethod(lambda x, other: other - x)

    @staticmethod
    def forward(xp, x, *, other):
        return constant(other, x.dtype) - x

    @staticmethod
    def backward(grad, *, other):
        return (-grad,)

    backward_np = backward


class MulScalar(Primitive):
    node_name = "MulBackward0"
    scalar_edge = True
    frees_attrs = True

    scalar_op = operator.mul

    @staticmethod
    def forward(xp, x, *, other):
        return x * constant(other, x.dtype)

    @staticmethod
    def backward(grad, *, other):
        return grad * other, None

    @staticmethod
    def backward_np(grad, *, other):
        if type(grad) is _F32 or type(grad) is _F64:  # NEP 50 converts other as constant() does
            return grad * other, None
        return grad * constant(other, grad.dtype), None


class AlphaMulScalar(MulScalar):
    """``alpha * other`` of ``add``/``sub``: PyTorch keeps ``alpha`` as a number on its
    AddBackward0, which backward does not free (NOTE [Freed attributes] in primitive.py)."""

    frees_attrs = False
    scalar_op = None  # (no fast path: add/sub call apply_scalar)


class DivScalar(Primitive):
    node_name = "DivBackward0"
    scalar_edge = True
    frees_attrs = True

    @staticmethod
    def forward(xp, x, *, other):
        if other == 0:  # inf/nan, silently, as in PyTorch (the test is free; errstate is not)
            with np.errstate(divide="ignore", invalid="ignore"):
                return x / constant(other, x.dtype)
        return x / constant(other, x.dtype)

    @staticmethod
    def backward(grad, *, other):
        return grad / other, None

    @staticmethod
    def backward_np(grad, *, other):
        return DivScalar.forward(np, grad, other=other), None
