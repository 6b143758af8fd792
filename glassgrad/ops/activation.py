"""Activation primitives whose stable forms need their own kernel (``torch.nn.functional``).

``softplus(x) = log(1 + exp(x))`` is computed as ``logaddexp(0, x)``, finite for any ``x``; its
derivative ``sigmoid(x)`` is a primitive too, so double backward works. BCE-with-logits and
``logsigmoid`` are composed from it.
"""

from __future__ import annotations

from .elementwise import sigmoid
from .primitive import Primitive


class Softplus(Primitive):
    saves = ("x",)

    @staticmethod
    def forward(xp, x):
        return xp.logaddexp(x.dtype.type(0), x)

    @staticmethod
    def backward(grad, x):
        return (grad * sigmoid(x),)
