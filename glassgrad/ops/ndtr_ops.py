"""The normal distribution's functions: ``torch.special.ndtr``, ``ndtri``, ``log_ndtr`` and the
scaled complementary error function ``erfcx``.

``ndtr`` is composed from ``erfc`` (accurate in both tails); the others are scipy.special's
kernels with PyTorch's derivative rules (derivatives.yaml), written in glassgrad ops.
"""

from __future__ import annotations

import math


from . import _scipy_kernel as _k
from ._scipy_kernel import sc
from .elementwise import _unary, exp
from .special_ops import erfc

_SQRT_2PI = math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


Ndtri = _unary("Ndtri", lambda xp, x: _k.run(sc.ndtri, x),
               lambda g, r: (g * _SQRT_2PI * exp(r * r / 2),), ("result",),
               node_name="SpecialNdtriBackward0")
# the normal density over ndtr, as exp(-x^2/2 - log_ndtr): finite far into the left tail
LogNdtr = _unary("LogNdtr", lambda xp, x: _k.run(sc.log_ndtr, x),
                 lambda g, x, r: (g / _SQRT_2PI * exp(-(r + x * x / 2)),), ("x", "result"),
                 node_name="SpecialLogNdtrBackward0")
Erfcx = _unary("Erfcx", lambda xp, x: _k.run(sc.erfcx, x),
               lambda g, x, r: ((2 * x * r - _TWO_OVER_SQRT_PI) * g,), ("x", "result"),
               node_name="SpecialErfcxBackward0")


def ndtr(input, *, out=None):
    """The standard normal CDF elementwise, ``erfc(-x / sqrt(2)) / 2`` (``torch.special.ndtr``);
    integer/bool input -> default float dtype."""
    x = _k.float_input(input, "special_ndtr", "erf_vml_cpu")
    return _k.with_out(erfc(x * -math.sqrt(0.5)) * 0.5, out, "special_ndtr")


def ndtri(input, *, out=None):
    """The inverse of ``ndtr`` elementwise (-inf at 0, inf at 1, nan outside [0, 1])
    (``torch.special.ndtri``); float16/bfloat16 raise NotImplementedError, as PyTorch."""
    x = _k.float_input(input, "special_ndtri", "ndtri_cpu", half_ok=False)
    return _k.with_out(Ndtri.apply(x), out, "special_ndtri")


def log_ndtr(input, *, out=None):
    """``log(ndtr(x))`` elementwise, accurate in the left tail (``torch.special.log_ndtr``);
    float16/bfloat16 raise NotImplementedError, as PyTorch."""
    x = _k.float_input(input, "special_log_ndtr", "log_ndtr_cpu", half_ok=False)
    return _k.with_out(LogNdtr.apply(x), out, "special_log_ndtr")


def erfcx(input, *, out=None):
    """``exp(x^2) erfc(x)`` elementwise without overflow (``torch.special.erfcx``);
    float16/bfloat16 raise NotImplementedError, as PyTorch."""
    x = _k.float_input(input, "special_erfcx", "erfcx_cpu", half_ok=False)
    return _k.with_out(Erfcx.apply(x), out, "special_erfcx")
