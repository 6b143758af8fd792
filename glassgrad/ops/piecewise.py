"""Piecewise primitives: ``sign floor ceil round trunc floor_divide`` (zeros as gradient, as in
PyTorch) and ``clamp`` with number or Tensor bounds (the gradient is selected inside the bounds,
never multiplied by a 0/1 mask); and elementwise.py's helpers for quiet float kernels and integer
division (file size)."""

from __future__ import annotations

import numpy as np

from .primitive import Primitive


def zero_grad(grad):
    """Zeros shaped like ``grad``: the gradient of an input whose derivative is identically 0.
    Not ``grad * 0``, which is NaN where ``grad`` is inf or NaN (PyTorch gives zeros there)."""
    from .fill import Fill

    return Fill.apply(grad, value=0)


class _Step(Primitive):
    """Piecewise-constant functions: zero gradient everywhere (PyTorch returns zeros too)."""

    @staticmethod
    def backward(grad):
        return (zero_grad(grad),)


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
        return zero_grad(grad), zero_grad(grad)


class RoundDecimals(_Step):
    node_name = "RoundBackward1"

    @staticmethod
    def forward(xp, x, *, decimals):
        return xp.round(x, decimals)

    @staticmethod
    def backward(grad, *, decimals):
        return (zero_grad(grad),)


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
        from .elementwise import select_grad

        keep = None
        if min is not None:
            keep = x >= min
        if max is not None:
            upper = x <= max
            keep = upper if keep is None else keep & upper
        return (select_grad(keep, grad),)


class ClampTensor(Primitive):
    """``clamp(x, min, max)`` with Tensor bounds (broadcast), PyTorch's rule: ``x`` gets the
    gradient where ``min <= x <= max``, ``min`` where ``x < min < max``, ``max`` where ``x > max``
    or ``max < min`` (so a tie goes to ``x``, never split)."""

    node_name = "ClampBackward0"
    saves = ("x", "min", "max")

    @staticmethod
    def forward(xp, x, min, max):
        return xp.minimum(xp.maximum(x, min), max)

    @staticmethod
    def backward(grad, x, min, max):
        from .elementwise import select_grad

        return (select_grad((x >= min) & (x <= max), grad),
                select_grad((x < min) & (min < max), grad),
                select_grad((x > max) | (max < min), grad))


class ClampMinTensor(Primitive):
    """``clamp_min(x, bound)`` (``upper=False``) or ``clamp_max(x, bound)`` (``upper=True``) for a
    Tensor bound: ``x`` gets the gradient where it is not beyond the bound, ties included."""

    node_name = "ClampMinBackward1"
    saves = ("x", "bound")

    @staticmethod
    def forward(xp, x, bound, *, upper):
        return xp.minimum(x, bound) if upper else xp.maximum(x, bound)

    @staticmethod
    def backward(grad, x, bound, *, upper):
        from .elementwise import select_grad

        inside, beyond = (x <= bound, x > bound) if upper else (x >= bound, x < bound)
        return select_grad(inside, grad), select_grad(beyond, grad)


class ClampMaxTensor(ClampMinTensor):
    node_name = "ClampMaxBackward1"


class ClampOneTensor(ClampMinTensor):  # clamp(x, min=T): PyTorch names it as the two-sided one
    node_name = "ClampBackward0"


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
