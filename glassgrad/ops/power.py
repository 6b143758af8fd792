"""Powers: ``x ** 2`` (a number exponent), ``x ** y`` (two tensors), ``2 ** x`` (a number base).

Forward matches NumPy's array power on every shape (NOTE [Fast path]: a 0-d ``x ** n`` stays a
0-d array, except the square, which NumPy computes as ``x * x`` on arrays); the derivatives are
PyTorch's, zero where PyTorch gives zero (``0 ** 0``, ``0 ** y`` for ``y >= 0``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..amp.autocast import autocast_args
from ..amp.autocast import state as _autocast
from . import primitive
from ._convert import checked
from ._forward_errors import broadcast_shapes
from ._util import cast, is_tensor, promote
from . import elementwise as _ew  # where/log for the backward rules (bound at call time)
from .elementwise_backward import PowScalarBackward
from ._util import cj
from .piecewise import _fp_quiet, zero_grad
from .primitive import Primitive

_BF16 = dtypes.bfloat16.np


class PowScalar(Primitive):
    node_name = "PowBackward0"
    saves = ("x",)
    scalar_attr = "exponent"
    # NOTE [Fast path]: NumPy's scalar power is not its array power (1 ulp apart), so 0-d stays 0-d
    zero_d_as_scalar = False

    @staticmethod
    def forward(xp, x, *, exponent):
        if (exponent.__class__ is int or float(exponent).is_integer()) and exponent >= 0:
            out = x**exponent  # (no 0 ** -k or (-x) ** 0.5 here: nothing to silence)
        elif exponent == -0.5:  # torch's rsqrt: NaN at -inf and -inf at -0.0 (pow gives 0, inf)
            with _fp_quiet():
                out = 1 / xp.sqrt(x)
        else:
            with _fp_quiet():
                out = x**exponent
        return out if x.dtype is not _BF16 else out.astype(_BF16)  # NumPy: bf16 ** 0.5 is f32

    @staticmethod
    def backward(grad, x, *, exponent):
        if exponent == 0:
            return (zero_grad(grad),)  # PyTorch's zeros_like: 0 even for an inf/NaN grad
        if x._array.dtype.kind == "c":  # NOTE [Complex gradients] in complex_ops.py
            return (grad * cj(x ** (exponent - 1) * exponent),)
        return (PowScalarBackward.apply(grad, x, exponent=exponent),)

    @staticmethod
    def scalar_op(x, exponent):
        # NumPy squares an array by x * x, not by its scalar power (1 ulp apart at times)
        if exponent == 2:
            return x * x
        return PowScalar.forward(np, np.asarray(x), exponent=exponent)

    @staticmethod
    def backward_np(grad, x, *, exponent):
        if exponent == 0:
            return (np.zeros_like(grad)[()],)
        if exponent == 2:  # x ** 1 is x
            return (grad * 2 * cj(x),)
        if x.dtype.kind == "c":
            return (grad * cj(np.asarray(x) ** (exponent - 1) * exponent),)
        # NOTE: a 0-d x arrives as a NumPy scalar; power must run on the array, as forward did
        return (PowScalarBackward.forward(np, grad, np.asarray(x), exponent=exponent),)


class Pow(Primitive):
    node_name = "PowBackward1"
    saves = ("x", "y", "result")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        with _fp_quiet():
            return x**y

    @staticmethod
    def backward(grad, x, y, result, needs_input_grad):
        grad_x = grad_y = None
        if needs_input_grad[0]:
            # NOTE: y * x**(y-1), not y*result/x, which is nan at x == 0
            grad_x = _ew.where((y == 0), 0.0, grad * cj(y * x ** (y - 1)))
        if needs_input_grad[1]:
            # NOTE: log(x) itself, as PyTorch (its 0 * -inf at 0 ** y is masked here, but a double
            # backward's d/dx through it is nan there, as PyTorch's): computed without the warning;
            # grad times the masked factor, as PyTorch (an inf grad at 0 ** y gives nan there)
            with _fp_quiet():
                grad_y = grad * cj(_ew.where((x == 0) & (y.real >= 0), 0.0, result * _ew.log(x)))
        return grad_x, grad_y


class RPowScalar(Primitive):
    """``base ** x`` for a number base."""

    node_name = "PowBackward2"
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, base):
        with _fp_quiet():
            return xp.asarray(base, dtype=x.dtype) ** x

    @staticmethod
    def backward(grad, x, result, *, base):
        if base == 0:
            # PyTorch: grad * (0 where x >= 0 else result * log(0)), so -inf where x < 0
            with _fp_quiet():
                return (grad * _ew.where(x >= 0, 0.0, result * -math.inf),)
        return (grad * result * (math.log(base) if base > 0 else math.nan),)  # as torch: NaN


def pow(input, exponent):
    """``input ** exponent``; number or Tensor on either side (``torch.pow``)."""
    if _autocast.on:
        input, exponent = autocast_args("pow", input, exponent)
    if not is_tensor(exponent):
        if not is_tensor(input):
            raise TypeError("pow(): expected at least one Tensor")
        if isinstance(exponent, (bool, np.bool_)):
            if input._array.dtype == np.bool_:  # bool ** True is itself, ** False all True
                return input.clone() if exponent else primitive._make(
                    np.ones_like(input._array))
            exponent = int(exponent)
        if input._array.dtype == np.bool_ and isinstance(exponent, (int, np.integer)):
            input = cast(input, np.dtype(np.int64))
        if isinstance(exponent, (int, np.integer)) and input._array.dtype.kind in "iu":
            checked(exponent, np.dtype(np.int64))
            if exponent < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            checked(exponent, input._array.dtype)
            return PowScalar.apply(input, exponent=int(exponent))
        if isinstance(exponent, (complex, np.complexfloating)):  # a complex result: Pow
            a, b = promote(input, exponent, "pow")
            return Pow.apply(a, b)
        x = input
        if isinstance(exponent, float) and x._array.dtype.kind in "biu":
            x = cast(x, dtypes.get_default_dtype().np)
        return PowScalar.apply(x, exponent=exponent)
    if not is_tensor(input):
        if exponent._array.dtype.kind in "biu" and not isinstance(input, float):
            _no_bool_pow(input, exponent)
            a, b = promote(input, exponent, "pow")
            return primitive._make(_int_pow(a._array, b._array))
        if exponent._array.dtype.kind in "biu" and isinstance(input, float):
            exponent = cast(exponent, dtypes.get_default_dtype().np)
        return RPowScalar.apply(exponent, base=input)
    _no_bool_pow(input, exponent)
    a, b = promote(input, exponent, "pow")
    if a._array.dtype.kind in "iu":
        return primitive._make(_int_pow(a._array, b._array))
    return Pow.apply(a, b)


def _no_bool_pow(base, exponent):
    """PyTorch has no bool kernel of pow: a bool exponent tensor with a bool base refuses."""
    bool_base = isinstance(base, (bool, np.bool_)) or (
        is_tensor(base) and base._array.dtype == np.bool_)
    if exponent._array.dtype == np.bool_ and bool_base:
        raise NotImplementedError(
            "\"pow\" not implemented for 'Bool'\nglassgrad: convert the tensors with .long() "
            "or .float() first.")


def _int_pow(base, exponent):
    """Integer ``base ** exponent`` as PyTorch computes it for an exponent tensor: a negative
    exponent gives 1 for base 1, +-1 for base -1 and 0 otherwise (NumPy refuses it)."""
    broadcast_shapes("pow", base.shape, exponent.shape)  # PyTorch's error, not NumPy's
    negative = exponent < 0
    if not negative.any():
        return np.power(base, exponent)
    out = np.power(base, np.where(negative, 0, exponent).astype(exponent.dtype))
    odd = (exponent % 2).astype(bool)
    inverse = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, inverse, out).astype(out.dtype)
