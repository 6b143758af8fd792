"""Tensor's arithmetic operators and common unary methods, with their fast paths.

NOTE [Operator fast paths]: ``x * y``, ``x + 2``, ``x.tanh()`` are most of the ops a define-by-run
program runs, so their common cases skip the public functions and call the primitive directly:

- two Tensors of one floating dtype: the primitive (nothing to promote);
- a floating Tensor and a Python ``float``/``int``: the scalar primitives of ``ops/scalar.py``
  (NOTE [Scalar operands] there); ``x ** 2``: ``PowScalar``;
- a unary method on a floating Tensor: the primitive.

Everything else (other dtypes, NumPy scalars, autocast regions, unsupported operands) goes through
the public function, which promotes and raises PyTorch's errors, so the results are identical.
"""

from __future__ import annotations

import numpy as np

from .amp.autocast import state as _autocast
from .dtypes import get_default_dtype
from .ops import elementwise as ew
from .ops import fast_path
from .ops import scalar as sc
from .tensor import Tensor

_NUMBERS = (int, float, bool, complex, np.number, np.bool_)


def _named(fn, name: str):
    fn.__name__ = fn.__qualname__ = name
    return fn


def _binary(name, fn, prim, scalar_prim):
    """``self <op> other``; ``fn`` is the public function for the general case."""
    apply_scalar = scalar_prim.apply_scalar  # NOTE [Hot path]: bound once, not per call
    apply_binary = prim.apply_binary

    def op(self, other):
        cls = other.__class__
        if cls is float or cls is int:
            if self._array.dtype.kind == "f":
                return apply_scalar(self, other)
        elif isinstance(other, Tensor):
            dt = self._array.dtype
            if dt is other._array.dtype and dt.kind == "f":
                return apply_binary(self, other)
        elif not isinstance(other, _NUMBERS):
            return NotImplemented
        return fn(self, other)

    # NOTE [Fast path] in ops/fast_path.py: the recording float case runs there, the rest here
    return fast_path.scalar(scalar_prim, _named(op, name), tensor_prim=prim)


def _reflected(name, fn, scalar_prim, scalar_op=None):
    """``other <op> self`` for a non-Tensor ``other`` (Python calls it after other's op gave up);
    ``scalar_op(self, number)`` when it is not ``scalar_prim`` itself (no fast path then)."""
    fast = scalar_op is None
    scalar_op = scalar_op or scalar_prim.apply_scalar

    def op(self, other):
        cls = other.__class__
        if (cls is float or cls is int) and self._array.dtype.kind == "f":
            return scalar_op(self, other)
        if not isinstance(other, (Tensor, *_NUMBERS)):
            return NotImplemented
        return fn(other, self)

    return fast_path.scalar(scalar_prim, _named(op, name)) if fast else _named(op, name)


def _rtruediv(x, number):
    # PyTorch's own spelling of `number / x` (MulBackward0 over ReciprocalBackward0)
    return sc.MulScalar.apply_scalar(ew.Reciprocal.apply_unary(x), number)


def _rdiv(number, x):
    """``number / x`` off the fast path: the same reciprocal-times-number in x's result dtype
    (an integer ``x`` in the default float, so ``200 / int_tensor`` rounds as PyTorch's)."""
    if isinstance(number, (int, float)) and not isinstance(number, bool) and not _autocast.on:
        a = x if x._array.dtype.kind not in "biu" else ew.cast(x, get_default_dtype().np)
        return ew.mul(ew.Reciprocal.apply_unary(a), number)
    return ew.div(number, x)


Tensor.__add__ = _binary("__add__", ew.add, ew.Add, sc.AddScalar)
Tensor.__sub__ = _binary("__sub__", ew.sub, ew.Sub, sc.SubScalar)
Tensor.__mul__ = _binary("__mul__", ew.mul, ew.Mul, sc.MulScalar)
Tensor.__truediv__ = _binary("__truediv__", ew.div, ew.Div, sc.DivScalar)
Tensor.__radd__ = _reflected("__radd__", ew.add, sc.AddScalar)
Tensor.__rsub__ = _reflected("__rsub__", ew.sub, sc.RSubScalar)
Tensor.__rmul__ = _reflected("__rmul__", ew.mul, sc.MulScalar)
Tensor.__rtruediv__ = _reflected("__rtruediv__", _rdiv, None, _rtruediv)


def __pow__(self, exponent):
    cls = exponent.__class__
    if (cls is float or cls is int) and not _autocast.on and self._array.dtype.kind == "f":
        return ew.PowScalar.apply_scalar(self, exponent)
    if not isinstance(exponent, (Tensor, *_NUMBERS)):
        return NotImplemented
    return ew.pow(self, exponent)


def __neg__(self):
    if _autocast.on:
        return ew.neg(self)
    return ew.Neg.apply_unary(self)


# NOTE [Fast path] in ops/fast_path.py: the recording float case runs there, the rest here
Tensor.__pow__ = fast_path.scalar(ew.PowScalar, __pow__, check_autocast=True)
Tensor.__neg__ = fast_path.unary(ew.Neg, __neg__)


def _unary(name, fn, prim, float_only: bool = True):
    """``x.name()``: ``prim`` on a floating Tensor outside autocast, else the public ``fn``."""
    apply_unary = prim.apply_unary

    def method(self):
        if _autocast.on or (float_only and self._array.dtype.kind != "f"):
            return fn(self)
        return apply_unary(self)

    method.__doc__ = fn.__doc__
    # NOTE [Fast path] in ops/fast_path.py: the recording float case runs there, the rest here
    return fast_path.unary(prim, _named(method, name))


for _name, _prim, _float_only in (
    ("exp", ew.Exp, True), ("log", ew.Log, True), ("tanh", ew.Tanh, True),
    ("sigmoid", ew.Sigmoid, True), ("sqrt", ew.Sqrt, True), ("rsqrt", ew.Rsqrt, True),
    ("sin", ew.Sin, True), ("cos", ew.Cos, True), ("log1p", ew.Log1p, True),
    ("relu", ew.Relu, False), ("abs", ew.Abs, False), ("neg", ew.Neg, False),
    ("reciprocal", ew.Reciprocal, True),
):
    setattr(Tensor, _name, _unary(_name, getattr(ew, _name), _prim, _float_only))
