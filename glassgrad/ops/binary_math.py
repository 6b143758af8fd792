"""Elementwise math PyTorch has at top level and on Tensor: ``torch.logaddexp``, ``logaddexp2``,
``hypot``, ``copysign``, ``heaviside``, ``nextafter``, ``fmax``, ``fmin``, ``nan_to_num``,
``frexp``, and the composites ``float_power``, ``ldexp``, ``deg2rad``, ``rad2deg``, ``positive``.

Derivative rules are PyTorch's (derivatives.yaml), written in glassgrad ops; dtype rules and
errors are PyTorch's (which operand may be a number, which dtypes each kernel refuses).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import dtypes
from . import _scipy_kernel as _k
from ._util import cast, is_tensor, promote
from .elementwise import _float_input, sigmoid, where
from .power import pow
from .primitive import Primitive
from .special_misc import Exp2

FrexpResult = namedtuple("frexp", ["mantissa", "exponent"])  # torch.return_types.frexp
_LN2 = math.log(2.0)


class Logaddexp(Primitive):
    saves = ("x", "y")

    @staticmethod
    def forward(xp, x, y):
        return _k.run(np.logaddexp, x, y)

    @staticmethod
    def backward(grad, x, y):
        # d/dx log(e^x + e^y) = 1 / (1 + e^(y - x))
        return grad * sigmoid(x - y), grad * sigmoid(y - x)


class Logaddexp2(Primitive):
    saves = ("x", "y")

    @staticmethod
    def forward(xp, x, y):
        return _k.run(np.logaddexp2, x, y)

    @staticmethod
    def backward(grad, x, y):
        return grad / (1 + Exp2.apply(y - x)), grad / (1 + Exp2.apply(x - y))


class Hypot(Primitive):
    saves = ("x", "y", "result")

    @staticmethod
    def forward(xp, x, y):
        return _k.run(np.hypot, x, y)

    @staticmethod
    def backward(grad, x, y, result):
        return grad * x / result, grad * y / result


class Copysign(Primitive):
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, y):
        return np.copysign(x, y).astype(x.dtype, copy=False)

    @staticmethod
    def backward(grad, x, result):
        # PyTorch's rule: the sign ratio result / x, 0 where x == 0; none for the sign's source
        return grad * where(x == 0, 0.0, result / x), None


class CopysignScalar(Copysign):
    node_name = "CopysignBackward1"  # torch's overload for a number ``other``


class Heaviside(Primitive):
    """``x < 0: 0``, ``x == 0: values``, ``x > 0: 1`` (nan counts as not positive, as torch)."""

    node_name = "NotImplemented"  # torch's node for an op without a derivative formula

    @staticmethod
    def forward(xp, x, values):
        step = (x > 0).astype(x.dtype)
        return np.where(x == 0, values, step).astype(x.dtype, copy=False)

    @staticmethod
    def backward(grad):
        raise RuntimeError("derivative for aten::heaviside is not implemented\nglassgrad: as in "
                           "PyTorch; a step has no useful gradient, use a smooth surrogate "
                           "(e.g. sigmoid(k * x)) to train through it.")


class Nextafter(Primitive):
    @staticmethod
    def forward(xp, x, y):
        return np.nextafter(x, y)

    @staticmethod
    def backward(grad):
        return grad, None  # PyTorch's rule: the identity for input, nothing for other


def _pick(grad, first):
    """The gradient to the operand chosen: x where ``first``, else y (torch's fmax/fmin rule)."""
    return where(first, grad, 0.0), where(first, 0.0, grad)


class Fmax(Primitive):
    """The larger of x and y, ignoring a nan on one side (``torch.fmax``)."""

    saves = ("x", "y")

    @staticmethod
    def forward(xp, x, y):
        return np.fmax(x, y)

    @staticmethod
    def backward(grad, x, y):
        return _pick(grad, (x >= y) | y.isnan())


class Fmin(Fmax):
    """The smaller of x and y, ignoring a nan on one side (``torch.fmin``)."""

    @staticmethod
    def forward(xp, x, y):
        return np.fmin(x, y)

    @staticmethod
    def backward(grad, x, y):
        return _pick(grad, (x <= y) | y.isnan())


def _finfo(dt):
    try:
        return np.finfo(dt)
    except ValueError:  # ml_dtypes' bfloat16
        import ml_dtypes

        return ml_dtypes.finfo(dt)


class NanToNum(Primitive):
    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, nan, posinf, neginf):
        if x.dtype.kind not in "fV":
            return x.copy()
        info = _finfo(x.dtype)
        big = info.max if posinf is None else posinf
        small = info.min if neginf is None else neginf
        out = np.where(np.isnan(x), np.asarray(nan).astype(x.dtype), x)
        out = np.where(out == np.inf, np.asarray(big).astype(x.dtype), out)
        return np.where(out == -np.inf, np.asarray(small).astype(x.dtype), out)

    @staticmethod
    def backward(grad, x, *, nan, posinf, neginf):
        return (where(x.isfinite(), grad, 0.0),)


class Ldexp(Primitive):
    """``x * 2**other`` (other of x's dtype: an integer exponent promoted, as torch)."""

    saves = ("other", "result")

    @staticmethod
    def forward(xp, x, other):
        return x * _k.run(np.exp2, other)

    @staticmethod
    def backward(grad, other, result):
        # NOTE: 2**other in floating point: torch's integer 2 ** other is 0 for other < 0
        return grad * Exp2.apply(other), grad * result * _LN2


class Angle(Primitive):
    """``x * factor``: degrees and radians (``Deg2RadBackward0``, ``Rad2DegBackward0``)."""

    @staticmethod
    def forward(xp, x, *, factor):
        return x * np.asarray(factor, x.dtype)

    @staticmethod
    def backward(grad, *, factor):
        return (grad * factor,)


class Deg2Rad(Angle):
    pass


class Rad2Deg(Angle):
    pass


class Frexp(Primitive):
    """The mantissa of ``x = mantissa * 2**exponent`` (|mantissa| in [0.5, 1))."""

    saves = ("x", "result")

    @staticmethod
    def forward(xp, x):
        return np.frexp(x)[0]

    @staticmethod
    def backward(grad, x, result):
        # PyTorch's rule grad / 2**exponent; 2**-exponent = mantissa / x (exact: a power of 2,
        # a constant, so detached), and grad itself where the exponent is 0 (x = 0, inf, nan)
        scale = where(x.isfinite() & (x != 0), result / x, 1.0).detach()
        return (grad * scale,)


def _real_floats(input, other, op, kernel):
    """Both Tensors (PyTorch has no number form), promoted; integer results refused."""
    _k.tensors(input, other, op)
    return _k.float_pair(input, other, op, kernel, ints=False)


def _float_binary(prim, op, doc):
    def fn(input, other, *, out=None):
        x, y = _real_floats(input, other, op, f"{op}_cpu")
        return _k.with_out(prim.apply(x, y), out, op)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"{doc}, broadcast (``torch.{op}``): two Tensors with a floating result "
                  "(two integer/bool tensors raise NotImplementedError, as PyTorch).")
    return fn


logaddexp = _float_binary(Logaddexp, "logaddexp", "``log(exp(input) + exp(other))`` without "
                          "overflow")
logaddexp2 = _float_binary(Logaddexp2, "logaddexp2", "``log2(2**input + 2**other)`` without "
                           "overflow")
hypot = _float_binary(Hypot, "hypot", "``sqrt(input**2 + other**2)`` without overflow")
nextafter = _float_binary(Nextafter, "nextafter", "The next floating value after ``input`` "
                          "towards ``other``")


def copysign(input, other, *, out=None):
    """``|input|`` with the sign of ``other`` (a Tensor or number), broadcast; integer/bool
    operands -> default float dtype (``torch.copysign``)."""
    if not is_tensor(input):
        raise TypeError(f"copysign(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    x, y = promote(input, other, "copysign", float_only=True)
    if x._array.dtype.kind == "c":  # NOTE: for when complex dtypes arrive (issue 15, lane cfft)
        raise _k.not_implemented("copysign_cpu", x._array.dtype, "copysign")
    prim = Copysign if is_tensor(other) else CopysignScalar
    return _k.with_out(prim.apply(x, y), out, "copysign")


def check_heaviside(input, values):
    """heaviside's operands: two Tensors of one dtype (PyTorch promotes neither)."""
    _k.tensors(input, values, "heaviside", ("input", "values"))
    if input._array.dtype.kind == "c" or values._array.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input._array.dtype != values._array.dtype:
        raise RuntimeError(
            "heaviside is not yet implemented for tensors with different dtypes.\nglassgrad: "
            f"input is {input.dtype}, values {values.dtype}; convert one to the other's dtype.")


def heaviside(input, values, *, out=None):
    """The Heaviside step: 0 below 0, ``values`` at 0, 1 above (``torch.heaviside``); input and
    values of one dtype (any), broadcast. Not differentiable: backward raises torch's error."""
    check_heaviside(input, values)
    return _k.with_out(Heaviside.apply(input, values), out, "heaviside")


def _maximum_fn(prim, op):
    def fn(input, other, *, out=None):
        _k.tensors(input, other, op)
        x, y = promote(input, other, op)
        if x._array.dtype.kind == "c":
            raise RuntimeError(f"{op} not implemented for complex tensors.")
        return _k.with_out(prim.apply(x, y), out, op)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"Elementwise ``{op}`` with broadcasting and type promotion, a nan on one side "
                  f"ignored (``torch.{op}``); the gradient goes to the operand chosen.")
    return fn


fmax = _maximum_fn(Fmax, "fmax")
fmin = _maximum_fn(Fmin, "fmin")


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """``input`` with nan, +inf and -inf replaced (by 0, the dtype's largest and smallest finite
    value by default) (``torch.nan_to_num``); integer/bool tensors are copied unchanged."""
    if not is_tensor(input):
        raise TypeError(f"nan_to_num(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    result = NanToNum.apply(input, nan=float(nan), posinf=posinf, neginf=neginf)
    return _k.with_out(result, out, "nan_to_num")


def frexp(input, *, out=None):
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, exponent int32, as the
    named tuple ``torch.return_types.frexp`` (``torch.frexp``); floating input only."""
    if not is_tensor(input):
        raise TypeError(f"frexp(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input._array.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes\nglassgrad: got "
                           f"{input.dtype}; convert with .float() first.")
    from . import primitive

    exponent = primitive._make(np.frexp(input._array)[1].astype(np.int32))
    mantissa = Frexp.apply(input)
    if out is not None:
        _k.with_out(mantissa, out[0], "frexp")
        _k.with_out(exponent, out[1], "frexp")
        return FrexpResult(*out)
    return FrexpResult(mantissa, exponent)


def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in float64 (``torch.float_power``); either side may be a
    number, the result is float64."""
    if not (is_tensor(input) or is_tensor(exponent)):
        raise TypeError("float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__}), but expected one "
                        "of: (Tensor input, Tensor exponent), (Scalar self, Tensor exponent), "
                        "(Tensor input, Scalar exponent)")
    wide = dtypes.float64.np
    base = cast(input, wide) if is_tensor(input) else float(input)
    power = cast(exponent, wide) if is_tensor(exponent) else float(exponent)
    return _k.with_out(pow(base, power), out, "float_power")


def ldexp(input, other, *, out=None):
    """``input * 2**other`` broadcast; integer operands -> default float dtype
    (``torch.ldexp``)."""
    _k.tensors(input, other, "ldexp")
    x, exponent = promote(input, other, "ldexp", float_only=True)
    return _k.with_out(Ldexp.apply(x, exponent), out, "ldexp")


def _angle_fn(prim, factor, op):
    def fn(input, *, out=None):
        if is_tensor(input) and input._array.dtype.kind == "c":
            raise RuntimeError(f"{op} is not supported for complex tensors.")
        return _k.with_out(prim.apply(_float_input(input, op), factor=factor), out, op)

    fn.__name__ = fn.__qualname__ = op
    return fn


deg2rad = _angle_fn(Deg2Rad, math.pi / 180, "deg2rad")
deg2rad.__doc__ = "Degrees to radians elementwise (``torch.deg2rad``); integers -> float."
rad2deg = _angle_fn(Rad2Deg, 180 / math.pi, "rad2deg")
rad2deg.__doc__ = "Radians to degrees elementwise (``torch.rad2deg``); integers -> float."


def positive(input):
    """``input`` itself (``torch.positive``, unary ``+``); a bool tensor raises as PyTorch."""
    if not is_tensor(input):
        raise TypeError(f"positive(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input._array.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.\nglassgrad: "
                           "use the tensor itself, or convert it with .int().")
    return input
