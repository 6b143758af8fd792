"""``torch.special.entr``, ``xlog1py``, ``torch.sinc`` and ``torch.exp2``: primitives with
PyTorch's derivative rules (derivatives.yaml), written in glassgrad ops."""

from __future__ import annotations

import math

import numpy as np

from . import _scipy_kernel as _k
from ._scipy_kernel import sc
from .elementwise import _unary, cos, log, sin, where
from .primitive import Primitive

_LN2 = math.log(2.0)


def _sinc(x):
    px = x * np.pi  # NOTE: a ufunc formula (np.sinc is not one, so vmap could not batch it)
    return np.where(x == 0, np.ones((), px.dtype), np.sin(px) / px)


def _sinc_rule(g, x):
    px = x * math.pi
    # NOTE: the slope is 0 at x = 0, where the formula is 0/0
    return (g * where(x == 0, 0.0, (px * cos(px) - sin(px)) / (px * x)),)


# entr = -x log x (0 at 0, -inf for x < 0); sinc = sin(pi x) / (pi x) (1 at 0)
Entr = _unary("Entr", lambda xp, x: _k.run(sc.entr, x), lambda g, x: (g * -(1 + log(x)),),
              node_name="SpecialEntrBackward0")
Sinc = _unary("Sinc", lambda xp, x: _k.run(_sinc, x), _sinc_rule)
Exp2 = _unary("Exp2", lambda xp, x: _k.run(np.exp2, x), lambda g, r: (g * r * _LN2,), ("result",))


def _xlog1py(x, y):
    out = np.asarray(x * np.log1p(y))
    out = np.where(x == 0, np.zeros((), out.dtype), out)
    return np.where(np.isnan(y), y, out)


class Xlog1py(Primitive):
    """``x * log1p(y)``, 0 where ``x == 0`` (nan where ``y`` is nan)."""

    node_name = "SpecialXlog1PyBackward0"
    saves = ("x", "y")

    @staticmethod
    def forward(xp, x, y):
        return _k.run(_xlog1py, x, y)

    @staticmethod
    def backward(grad, x, y):
        # PyTorch's rule: 0 where x == 0 and y <= -1 (log1p(y) is -inf or nan there)
        return (where((x == 0) & (y <= -1), 0.0, Xlog1py.apply(grad, y)),
                grad * x / (y + 1))


def entr(input, *, out=None):
    """The elementwise entropy ``-x log x`` (0 at 0, -inf for x < 0) (``torch.special.entr``);
    integer/bool input -> default float dtype."""
    x = _k.float_input(input, "special_entr", "entr_cpu")
    return _k.with_out(Entr.apply(x), out, "special_entr")


def sinc(input, *, out=None):
    """The normalized sinc ``sin(pi x) / (pi x)`` elementwise, 1 at 0 (``torch.sinc``,
    ``torch.special.sinc``); integer/bool input -> default float dtype."""
    x = _k.float_input(input, "sinc", "sinc")
    return _k.with_out(Sinc.apply(x), out, "sinc")


def exp2(input, *, out=None):
    """``2 ** x`` elementwise (``torch.exp2``, ``torch.special.exp2``); integer/bool input ->
    default float dtype."""
    x = _k.float_input(input, "exp2", "exp2")
    return _k.with_out(Exp2.apply(x), out, "exp2")


def xlog1py(input, other, *, out=None):
    """``input * log1p(other)`` broadcast, 0 where ``input == 0`` (``torch.special.xlog1py``);
    Tensor or number operands, integers -> default float dtype."""
    x, y = _k.float_pair(input, other, "special_xlog1py", "xlog1py_cpu")
    return _k.with_out(Xlog1py.apply(x, y), out, "special_xlog1py")
