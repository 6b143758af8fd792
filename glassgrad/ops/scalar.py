"""Primitives with one Python-number operand: ``x + 2``, ``x - 2``, ``2 - x``, ``x * 2``, ``x / 2``.

NOTE [Scalar operands]: the operators of a floating tensor take these when the other operand is a
Python ``float`` or ``int`` (``_tensor_methods.py``). The number stays a Python number (an
attribute): no 0-d tensor is made for it, nothing is saved for it, and NumPy's weak-scalar rule
(NEP 50) keeps the tensor's dtype exactly as PyTorch's promotion does for a float tensor. Node
names and ``next_functions`` (the number's ``(None, 0)`` edge) read as PyTorch's; ``2 - x`` is
PyTorch's ``RsubBackward1`` with one edge. Every other operand mix goes through the public
functions (``ops.elementwise.add`` ...), which promote.
"""

from __future__ import annotations

from .primitive import Primitive


class AddScalar(Primitive):
    node_name = "AddBackward0"
    scalar_edge = True

    @staticmethod
    def forward(xp, x, *, other):
        return x + other

    @staticmethod
    def backward(grad, *, other):
        return grad, None


class SubScalar(Primitive):
    node_name = "SubBackward0"
    scalar_edge = True

    @staticmethod
    def forward(xp, x, *, other):
        return x - other

    @staticmethod
    def backward(grad, *, other):
        return grad, None


class RSubScalar(Primitive):
    """``other - x`` for a number ``other``."""

    node_name = "RsubBackward1"

    @staticmethod
    def forward(xp, x, *, other):
        return other - x

    @staticmethod
    def backward(grad, *, other):
        return (-grad,)


class MulScalar(Primitive):
    node_name = "MulBackward0"
    scalar_edge = True

    @staticmethod
    def forward(xp, x, *, other):
        return x * other

    @staticmethod
    def backward(grad, *, other):
        return grad * other, None


class DivScalar(Primitive):
    node_name = "DivBackward0"
    scalar_edge = True

    @staticmethod
    def forward(xp, x, *, other):
        return x / other

    @staticmethod
    def backward(grad, *, other):
        return grad / other, None
