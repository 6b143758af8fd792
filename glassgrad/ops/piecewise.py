"""Piecewise primitives: ``sign floor ceil round trunc`` (zero gradient, as in PyTorch) and
``clamp`` with number bounds (gradient passes inside the bounds)."""

from __future__ import annotations

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
