"""Piecewise primitives: ``sign floor ceil round trunc floor_divide`` (zero gradient, as in
PyTorch) and ``clamp`` with number bounds (gradient passes inside the bounds); and elementwise.py's
helpers for quiet float kernels and integer division (file size)."""

from __future__ import annotations

import numpy as np

from .primitive import Primitive


class _Step(Primitive):
    """Piecewise-constant functions: zero gradient everywhere (PyTorch returns zeros too)."""

    @staticmethod
    def backward(grad):
        return (grad * 0,)


def _sign(xp, x):
    out = xp.sign(x)
    # NOTE: PyTorch's sign(nan) is 0 (so abs' gradient at nan is 0); NumPy's is nan
    return xp.nan_to_num(out, copy=not isinstance(out, xp.ndarray)) if out.dtype.kind == "f" \
        else out


def _step(name, fn):
    return type(name, (_Step,), {"forward": staticmethod(lambda xp, x: fn(xp, x))})


Sign = _step("Sign", lambda xp, x: _sign(xp, x))
Floor = _step("Floor", lambda xp, x: xp.floor(x))
Ceil = _step("Ceil", lambda xp, x: xp.ceil(x))
Round = _step("Round", lambda xp, x: xp.round(x))
Trunc = _step("Trunc", lambda xp, x: xp.trunc(x))


class FloorDivide(_Step):
    @staticmethod
    def forward(xp, x, y):
        with _fp_quiet():
            return xp.floor_divide(x, y)

    @staticmethod
    def backward(grad):
        return grad * 0, grad * 0


class RoundDecimals(_Step):
    node_name = "RoundBackward1"

    @staticmethod
    def forward(xp, x, *, decimals):
        return xp.round(x, decimals)

    @staticmethod
    def backward(grad, *, decimals):
        return (grad * 0,)


class Clamp(Primitive):
    node_name = "ClampBackward1"  # PyTorch: ClampBackward1 for number bounds
    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, min, max):
        out = x
        if min is not None:
            out = xp.maximum(out, xp.asarray(min, dtype=x.dtype))
        if max is not None:
            out = xp.minimum(out, xp.asarray(max, dtype=x.dtype))
        return out if out is not x else x.copy()

    @staticmethod
    def backward(grad, x, *, min, max):
        keep = None
        if min is not None:
            keep = x >= min
        if max is not None:
            upper = x <= max
            keep = upper if keep is None else keep & upper
        return (grad * keep,)


# --- elementwise.py's helpers --------------------------------------------------------------------
def _fp_quiet():
    """NumPy's floating-point warnings off for one kernel: PyTorch's log(0), sqrt(-1), 1 / 0,
    exp(1000) are -inf, nan, inf, inf without a warning. Entered only by the forwards that can
    meet them (never process-wide, never on add/mul: about 1 us each)."""
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


def _quiet(fwd):
    """``fwd`` (a one-input forward ``(xp, x) -> array``) under ``_fp_quiet``."""
    def forward(xp, x):
        with _fp_quiet():
            return fwd(xp, x)

    return forward


def _check_integer_divisor(a, b, op, kernel) -> bool:
    """True for integer (promoted) operands ``a``, ``b``, after PyTorch's checks: integer division
    by zero is an error (float division gives inf/nan silently), bool is not implemented."""
    if a._array.dtype.kind not in "biu":
        return False
    if a._array.dtype == np.bool_:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for 'Bool'\nglassgrad: {op} of two bool tensors; "
            "convert one with .long() or .float()."
        )
    if a._array.size and b._array.size and not np.all(b._array):
        raise RuntimeError(
            f"ZeroDivisionError\nglassgrad: {op} of a {a.dtype} tensor by a divisor 'other' "
            "with a zero element (integer division by zero); mask the zeros out, or divide "
            "floats (.float()) to get inf/nan."
        )
    return True


def _trunc_divide_int(x, y):
    """C-style integer division, exact (``trunc(x / y)`` through float64 is not, past 2 ** 53)."""
    q = np.floor_divide(x, y)
    q += ((q * y != x) & ((x < 0) != (y < 0))).astype(q.dtype)
    return np.asarray(q, dtype=x.dtype)
