"""Inverse hyperbolic functions and special functions: ``torch.asinh``, ``acosh``, ``atanh``,
``logit``, ``xlogy``, ``erfc``, ``erfinv``.

Each op is a primitive (forward on arrays, backward in glassgrad ops so double backward works, and
an array twin ``backward_np`` for first-order backward, NOTE [Array backward]). The derivative
rules are PyTorch's (tools/autograd/derivatives.yaml). Forwards are silent on domain errors, as
PyTorch is: atanh(1) = inf, acosh(0.5) = nan, logit(0) = -inf.
"""

from __future__ import annotations

import math

import numpy as np

from ..amp.autocast import autocast_arg
from ..amp.autocast import state as _autocast
from . import _special
from ._util import promote
from .elementwise import _float_input, _unary, _unary_fn, exp, rsqrt, where
from .piecewise import _fp_quiet, _quiet
from .primitive import Primitive

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2.0


def _np_quiet(rule):
    """An array derivative rule under ``_fp_quiet`` (acosh'(1) = inf without a warning)."""
    def backward_np(*args):
        with _fp_quiet():
            return rule(*args)

    return backward_np


Asinh = _unary("Asinh", lambda xp, x: xp.arcsinh(x), lambda g, x: (g * rsqrt(x * x + 1),),
               bwd_np=lambda g, x: (g / np.sqrt(x * x + 1),))
Acosh = _unary("Acosh", _quiet(lambda xp, x: xp.arccosh(x)), lambda g, x: (g * rsqrt(x * x - 1),),
               bwd_np=_np_quiet(lambda g, x: (g / np.sqrt(x * x - 1),)))
Atanh = _unary("Atanh", _quiet(lambda xp, x: xp.arctanh(x)), lambda g, x: (g / (1 - x * x),),
               bwd_np=_np_quiet(lambda g, x: (g / (1 - x * x),)))
Erfc = _unary("Erfc", lambda xp, x: _special.erfc(x),  # NOTE [Cody's erf] in _special.py
              lambda g, x: (g * -_TWO_OVER_SQRT_PI * exp(-x * x),),
              bwd_np=_np_quiet(lambda g, x: (g * -_TWO_OVER_SQRT_PI * np.exp(-x * x),)))


# NOTE [erfinv]: M. Giles, "Approximating the erfinv function", GPU Computing Gems (2010): the
# single-precision polynomials in w = -log((1 - x)(1 + x)) give ~1e-7 relative error for
# |x| < 1 - 2^-24; Newton steps on erf (quadratic convergence) bring it to float64 rounding. The
# residual for |x| > 0.5 is (1 - |x|) - erfc(y): 1 - |x| is exact there (Sterbenz) and erfc keeps
# its relative accuracy in the tail, where erf(y) - |x| would cancel; there the Newton step is
# taken on log(erfc(y)) = log(1 - |x|), nearly quadratic in y, so it also converges closer to 1
# than float32 resolves, where w is beyond the polynomial's range.
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_NEWTON_STEPS = 4  # two suffice for |x| < 1 - 2^-24; 1 - 1e-16 takes four


def _horner(t, coeffs):
    result = np.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        result *= t
        result += c
    return result


def _erfinv_np(x):
    """``erfinv`` on an array or NumPy scalar; float64 inside, ``x``'s floating dtype out."""
    array = np.asarray(x)
    dtype = array.dtype
    a = np.abs(array.astype(np.float64))
    with _fp_quiet():
        inside = a < 1.0  # (False for nan)
        ac = np.where(inside, a, 0.0)
        w = -np.log((1.0 - ac) * (1.0 + ac))
        central = _horner(w - 2.5, _GILES_CENTRAL)
        tail = _horner(np.sqrt(w) - 3.0, _GILES_TAIL)
        y = np.where(w < 5.0, central, tail) * ac
        one_minus = 1.0 - ac
        big = ac > 0.5
        log_one_minus = np.log(one_minus)
        for _ in range(_NEWTON_STEPS):
            slope = _TWO_OVER_SQRT_PI * np.exp(-y * y)
            tail_erfc = _special.erfc(y)
            # tail: Newton on log(erfc(y)) = log(1 - |x|), nearly quadratic in y
            tail_step = (log_one_minus - np.log(tail_erfc)) * tail_erfc / slope
            y -= np.where(big, tail_step, (_special.erf(y) - ac) / slope)
        y = np.where(inside, y, np.where(a == 1.0, np.inf, np.nan))
        out = np.copysign(y, array).astype(dtype, copy=False)
    return out if isinstance(x, np.ndarray) else out[()]


Erfinv = _unary("Erfinv", lambda xp, x: _erfinv_np(x),
                lambda g, r: (g * _HALF_SQRT_PI * exp(r * r),), ("result",),
                bwd_np=_np_quiet(lambda g, r: (g * _HALF_SQRT_PI * np.exp(r * r),)))


class Logit(Primitive):
    """``log(x / (1 - x))``, with ``x`` clamped to ``[eps, 1 - eps]`` first when eps is given."""

    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, eps):
        with _fp_quiet():
            if eps is not None and eps >= 0:  # NOTE: as PyTorch, a negative eps clamps nothing
                lo = np.asarray(eps, dtype=x.dtype)
                x = np.clip(x, lo, 1 - lo)  # (nan stays nan)
            return xp.log(x / (1 - x))

    @staticmethod
    def backward(grad, x, *, eps):
        # PyTorch's logit_backward: outside [eps, 1 - eps] 0, outside [0, 1] nan without eps;
        # NOTE: a nan x gives a nan gradient (PyTorch's create_graph rule gives 0 there)
        lo, fill = (0.0, math.nan) if eps is None else (eps, 0.0)
        outside = (x < lo) | (x > 1.0 - lo)
        return (where(outside, fill, grad / (x * (1 - x))),)

    @staticmethod
    def backward_np(grad, x, *, eps):
        lo, fill = (0.0, np.nan) if eps is None else (eps, 0.0)
        with _fp_quiet():
            outside = (x < lo) | (x > 1.0 - lo)
            return (np.where(outside, fill, grad / (x * (1 - x))).astype(grad.dtype, copy=False),)


class Xlogy(Primitive):
    """``x * log(y)``, 0 where ``x == 0`` (also for y = 0 or inf), nan where ``y`` is nan."""

    saves = ("x", "y")

    @staticmethod
    def forward(xp, x, y):
        with _fp_quiet():
            out = np.asarray(x * np.log(y))
            out = np.where(x == 0, np.zeros((), out.dtype), out)
            return np.where(np.isnan(y), y, out)

    @staticmethod
    def backward(grad, x, y):
        # PyTorch's rule: xlogy(grad, y), 0 where x == 0 and y <= 0 (log(y) is -inf or nan there)
        return where((x == 0) & (y <= 0), 0.0, xlogy(grad, y)), grad * x / y

    @staticmethod
    def backward_np(grad, x, y):
        with _fp_quiet():
            dx = np.where((x == 0) & (y <= 0), np.zeros((), grad.dtype), Xlogy.forward(np, grad, y))
            return dx, grad * x / y

asinh = _unary_fn(Asinh, "asinh")
acosh = _unary_fn(Acosh, "acosh")
atanh = _unary_fn(Atanh, "atanh")
erfc = _unary_fn(Erfc, "erfc")
erfinv = _unary_fn(Erfinv, "erfinv")
arcsinh, arccosh, arctanh = asinh, acosh, atanh


def logit(input, eps=None):
    """``log(p / (1 - p))`` elementwise, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is
    given; any shape, integer input -> default float dtype (``torch.logit``)."""
    if _autocast.on:
        input = autocast_arg("logit", input)
    return Logit.apply(_float_input(input, "logit"), eps=None if eps is None else float(eps))


def xlogy(input, other):
    """``input * log(other)`` with broadcasting, 0 where ``input == 0`` and nan where ``other`` is
    nan; Tensor or number operands, integers -> default float dtype (``torch.xlogy``)."""
    a, b = promote(input, other, "xlogy", float_only=True)
    return Xlogy.apply(a, b)
