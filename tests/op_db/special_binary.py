"""Op table: torch's elementwise math at top level (logaddexp, hypot, copysign, fmax, frexp,
ldexp, float_power, nan_to_num, gcd, ...), issue 15, lane special."""

from __future__ import annotations

import numpy as np

from . import OpInfo, Sample
from .special_gamma import _one, _pair, _u


def _mixed(rng):
    """A float tensor against an int64 tensor (the result is the float's dtype). NOTE: exponents
    >= 0: torch's LdexpBackward0 gives 0 for a negative integer exponent (2 ** -2 in integer
    arithmetic); glassgrad's 2 ** -2 = 0.25 is tested in tests/test_special_namespace.py."""
    return [Sample((rng.uniform(-2, 2, size=(3,)), np.array([1, 0, 3], np.int64)), desc="int")]


def _frexp(rng):
    x = rng.uniform(-30, 30, size=(3, 4))
    x[0, :2] = 0.0
    return [Sample((x,), desc="matrix with zeros"), Sample((rng.uniform(-1, 1, size=(3,)),),
                                                            desc="vector")]


def _nonfinite(rng):
    x = rng.uniform(-2, 2, size=(3, 4))
    x[0, :3] = [np.nan, np.inf, -np.inf]
    return [Sample((x,), desc="nan and inf"),
            Sample((rng.uniform(-2, 2, size=(4,)),), desc="finite"),
            Sample((np.array([1, 2], np.int64),), desc="int64")]


def _signs(rng):
    x = rng.uniform(0.3, 2, size=(3, 4)) * rng.choice([-1.0, 1.0], size=(3, 4))
    y = rng.uniform(-2, 2, size=(4,))
    return [Sample((x, y), desc="broadcast"), Sample((x[0], y), desc="vector"),
            Sample((np.array([1, -2], np.int64), np.array([-1, 1], np.int64)), desc="int64")]


def _steps(rng):
    x = rng.choice([-1.5, 0.0, 2.0], size=(3, 4))
    return [Sample((x, rng.uniform(0, 1, size=(4,))), desc="broadcast"),
            Sample((np.array([-2, 0, 3], np.int64), np.array([7, 7, 7], np.int64)), desc="int64")]


def _integers(rng):
    a = rng.integers(-30, 30, size=(3, 4))
    return [Sample((a, rng.integers(-30, 30, size=(4,))), desc="broadcast"),
            Sample((a.astype(np.int32), np.int32(6) + a[0].astype(np.int32)), desc="int32")]


_FLOATS = _pair((-2.0, 2.0), (-2.0, 2.0), int_pair=False)
OPS = [
    OpInfo("logaddexp", lambda m, x, y: m.logaddexp(x, y), _FLOATS),
    OpInfo("logaddexp_int", lambda m, x, n: m.logaddexp(x, n), _mixed),
    OpInfo("logaddexp2", lambda m, x, y: m.logaddexp2(x, y), _FLOATS),
    OpInfo("logaddexp_method", lambda m, x: x.logaddexp(x * 2) + x.logaddexp2(x), _one(-2, 2)),
    OpInfo("hypot", lambda m, x, y: m.hypot(x, y), _pair((0.2, 2.0), (-2.0, -0.2), False)),
    OpInfo("hypot_method", lambda m, x: x.hypot(x + 1), _one(0.2, 2.0)),
    OpInfo("copysign", lambda m, x, y: m.copysign(x, y), _signs),
    OpInfo("copysign_number", lambda m, x: m.copysign(x, -1.5) + x.copysign(2), _one(0.3, 2)),
    OpInfo("heaviside", lambda m, x, v: m.heaviside(x, v.to(x.dtype)), _steps, grad=False),
    OpInfo("nextafter", lambda m, x, y: m.nextafter(x, y) + x.nextafter(y),
           _pair((-2.0, 2.0), (-2.0, 2.0), False), gradgrad=False),
    OpInfo("fmax", lambda m, x, y: m.fmax(x, y), _FLOATS),
    OpInfo("fmin", lambda m, x, y: m.fmin(x, y) + x.fmin(y * 2), _FLOATS),
    OpInfo("fmax_int", lambda m, x, n: m.fmax(x, n) + m.fmin(n, x), _mixed),
    OpInfo("fmax_nan", lambda m, x: m.fmax(x, m.full_like(x, float("nan")))
           + m.fmin(m.full_like(x, float("nan")), x), _one(-2.0, 2.0)),
    OpInfo("nan_to_num", lambda m, x: m.nan_to_num(x), _nonfinite),
    OpInfo("nan_to_num_args", lambda m, x: x.nan_to_num(nan=1.5, posinf=9.0, neginf=-9.0),
           _nonfinite),
    OpInfo("frexp_mantissa", lambda m, x: m.frexp(x).mantissa * 1.0, _frexp, gradcheck_samples=1),
    OpInfo("frexp_exponent", lambda m, x: x.frexp()[1], _frexp, grad=False),
    OpInfo("float_power", lambda m, x, y: m.float_power(x, y), _pair((0.3, 2.0), (-2.0, 2.0))),
    OpInfo("float_power_numbers", lambda m, x: m.float_power(x, 3) + m.float_power(2.5, x)
           + x.float_power(-0.5), _u(0.3, 2.0)),
    OpInfo("ldexp", lambda m, x, n: m.ldexp(x, n) + x.ldexp(n), _mixed),
    OpInfo("ldexp_float", lambda m, x, y: m.ldexp(x, y), _FLOATS),
    OpInfo("deg2rad", lambda m, x: m.deg2rad(x) + x.rad2deg(), _u(-200.0, 200.0)),
    OpInfo("rad2deg", lambda m, x: m.rad2deg(x) * x.deg2rad(), _one(-3.0, 3.0)),
    OpInfo("positive", lambda m, x: m.positive(x) * x.positive(), _u(-2.0, 2.0)),
    OpInfo("gcd", lambda m, a, b: m.gcd(a, b) + a.gcd(b), _integers, grad=False),
    OpInfo("lcm", lambda m, a, b: m.lcm(a, b) - a.lcm(b) * 2, _integers, grad=False),
]
