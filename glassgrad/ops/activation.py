"""Pointwise primitives whose stable or one-node forms need their own kernel: ``softplus``,
``gelu`` (``torch.nn.functional``), and ``addcmul``/``addcdiv``/``lerp`` (``torch.*``), so the
graph holds PyTorch's one node (GeluBackward0, AddcmulBackward0, LerpBackward0/1).

``softplus(x) = log(1 + exp(x))`` is computed as ``logaddexp(0, x)``, finite for any ``x``; its
derivative ``sigmoid(x)`` is a primitive too, so double backward works. BCE-with-logits and
``logsigmoid`` are composed from it. Every backward here is written in Tensor ops, so it is
differentiable again.
"""

from __future__ import annotations

import math

from . import _special
from ._names import c_type
from ._util import is_tensor
from .elementwise import _BF16, add, div, erf, exp, mul, sigmoid, sub, tanh
from .primitive import Primitive

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)  # the tanh approximation's scale
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_C = 0.044715


class Softplus(Primitive):
    saves = ("x",)

    @staticmethod
    def forward(xp, x):
        return xp.logaddexp(x.dtype.type(0), x)

    @staticmethod
    def backward(grad, x):
        return (grad * sigmoid(x),)


class Gelu(Primitive):
    """``x * Phi(x)`` for a floating ``x``; ``approximate`` is "none" (erf) or "tanh"."""

    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, approximate):
        f = x.dtype.type
        if approximate == "tanh":
            inner = (x + x * x * x * f(_GELU_C)) * f(_SQRT_2_PI)
            return f(0.5) * x * (1 + xp.tanh(inner))
        return f(0.5) * x * (1 + _special.erf(x * f(_SQRT_HALF)))

    @staticmethod
    def backward(grad, x, *, approximate):
        if approximate == "tanh":
            t = tanh((x + x * x * x * _GELU_C) * _SQRT_2_PI)
            slope = (1 - t * t) * (x * x * (3 * _GELU_C) + 1) * (x * (0.5 * _SQRT_2_PI))
            return (grad * ((t + 1) * 0.5 + slope),)
        cdf = (erf(x * _SQRT_HALF) + 1) * 0.5
        return (grad * (cdf + x * exp(x * x * -0.5) * _INV_SQRT_2PI),)


class Silu(Primitive):
    """``x * sigmoid(x)``; the derivative is formed before it meets ``grad`` (PyTorch's
    ``grad * s * (1 + x * (1 - s))``), so an inf gradient gives -inf where the slope is negative,
    not the nan of a product rule's ``inf - inf``."""

    saves = ("x",)

    @staticmethod
    def forward(xp, x):
        from .elementwise import _sigmoid

        return x * _sigmoid(xp, x)

    @staticmethod
    def backward(grad, x):
        s = sigmoid(x)
        return (grad * (s * (x * (1 - s) + 1)),)


class Mish(Primitive):
    """``x * tanh(softplus(x))``, its derivative formed before it meets ``grad`` (as ``Silu``)."""

    saves = ("x",)

    @staticmethod
    def forward(xp, x):
        return x * xp.tanh(Softplus.forward(xp, x))

    @staticmethod
    def backward(grad, x):
        t = tanh(Softplus.apply(x))
        return (grad * (t + x * sigmoid(x) * (1 - t * t)),)


class Hardswish(Primitive):
    """``x * clamp(x + 3, 0, 6) / 6``; PyTorch's derivative: 0 up to -3 (selected: 0 even under an
    inf gradient), ``x / 3 + 0.5`` below 3, 1 from 3 on (NaN at NaN, as its vectorised kernel)."""

    saves = ("x",)

    @staticmethod
    def forward(xp, x):
        f = x.dtype.type
        return x * xp.clip(x + f(3), f(0), f(6)) / f(6)

    @staticmethod
    def backward(grad, x):
        from .elementwise import select_grad, where

        slope = where(x >= 3.0, 1.0, x / 3.0 + 0.5)
        return (select_grad(~(x <= -3.0), grad * slope),)


class Addcmul(Primitive):
    """``x + value * a * b`` (operands of one dtype, broadcasting)."""

    saves = ("a", "b")
    saved_for = {"a": ("b",), "b": ("a",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, a, b, *, value):
        return x + a * b if value == 1 else x + value * a * b

    @staticmethod
    def backward(grad, a, b, *, value, needs_input_grad):
        scaled = grad if value == 1 else grad * value
        return (grad, scaled * b if needs_input_grad[1] else None,
                scaled * a if needs_input_grad[2] else None)


class Addcdiv(Primitive):
    """``x + value * a / b`` (operands of one dtype, broadcasting)."""

    saves = ("a", "b")
    saved_for = {"a": ("b",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, a, b, *, value):
        return x + a / b if value == 1 else x + value * a / b

    @staticmethod
    def backward(grad, a, b, *, value, needs_input_grad):
        scaled = grad if value == 1 else grad * value
        grad_a = scaled / b
        return grad, grad_a, (-grad_a * a / b if needs_input_grad[2] else None)


class Lerp(Primitive):
    """``x + weight * (end - x)`` for a number ``weight``, in PyTorch's two-sided form (exact at
    both ends)."""

    @staticmethod
    def forward(xp, x, end, *, weight):
        diff = end - x
        return x + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)

    @staticmethod
    def backward(grad, *, weight):
        return grad * (1 - weight), grad * weight


class LerpTensor(Primitive):
    """``x + weight * (end - x)`` for a Tensor ``weight`` (which gets a gradient too)."""

    node_name = "LerpBackward1"
    saves = ("x", "end", "weight")
    # NOTE [Saved when needed] in primitive.py (PyTorch keeps weight in every case)
    saved_for = {"x": ("weight",), "end": ("weight",)}
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, end, weight):
        diff = end - x
        return xp.where(xp.abs(weight) < 0.5, x + weight * diff, end - diff * (1 - weight))

    @staticmethod
    def backward(grad, x, end, weight, needs_input_grad):
        return (grad * (1 - weight) if needs_input_grad[0] else None,
                grad * weight if needs_input_grad[1] else None,
                grad * (end - x) if needs_input_grad[2] else None)


def _one_float_dtype(*xs) -> bool:
    """All Tensors of one floating dtype: the one-node primitives of activation.py apply."""
    dt = xs[0]._array.dtype if is_tensor(xs[0]) else None
    # NOTE: ml_dtypes' bfloat16 is kind "V": without it bf16 took the one-sided composite lerp,
    # NaN at an infinite start where torch's two-sided form gives -inf
    return dt is not None and (dt.kind == "f" or dt == _BF16) and all(
        is_tensor(x) and x._array.dtype == dt for x in xs)


def lerp(input, end, weight):
    """``input + weight * (end - input)`` (``torch.lerp``); ``weight`` is a number or a Tensor;
    all broadcast. RuntimeError when ``end`` (or a weight tensor with dims) has another dtype
    than ``input``: PyTorch does not promote here."""
    if is_tensor(input) and is_tensor(end):
        _check_lerp_dtype(input, end, "end")
        if is_tensor(weight) and weight._array.ndim:
            _check_lerp_dtype(input, weight, "weight")
    if is_tensor(weight):
        if _one_float_dtype(input, end, weight):
            return LerpTensor.apply(input, end, weight)
    elif _one_float_dtype(input, end) and isinstance(weight, (int, float)):
        return Lerp.apply(input, end, weight=weight)
    return add(input, mul(weight, sub(end, input)))


def _check_lerp_dtype(input, other, name):
    if other._array.dtype != input._array.dtype:
        raise RuntimeError(
            f"expected dtype {c_type(input.dtype)} for `{name}` but got dtype "
            f"{c_type(other.dtype)}\nglassgrad: lerp takes tensors of one dtype; convert with "
            f"{name}.to(input.dtype).")


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (``torch.addcmul``); all broadcast."""
    if _one_float_dtype(input, tensor1, tensor2) and isinstance(value, (int, float)):
        return Addcmul.apply(input, tensor1, tensor2, value=value)
    return add(input, mul(mul(tensor1, tensor2), value))


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2`` (``torch.addcdiv``); all broadcast."""
    if _one_float_dtype(input, tensor1, tensor2) and isinstance(value, (int, float)):
        return Addcdiv.apply(input, tensor1, tensor2, value=value)
    return add(input, mul(div(tensor1, tensor2), value))
