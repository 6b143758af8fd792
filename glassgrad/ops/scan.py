"""Scan primitives: ``cumsum`` and ``cumprod`` along one dim (``torch.cumsum``, ``torch.cumprod``).

NOTE [Cumprod with zeros]: ``dL/dx_i = sum_{k>=i} g_k prod_{j<=k, j!=i} x_j``. Without zeros this is
``reversed_cumsum(g * y) / x``. With zeros, first order uses an O(n) masked form (PyTorch's): the
division form before the first zero of a slice, a product that skips the first zero at it, and 0
after it. That form is exact in value but not in derivative (after the first zero the true
gradient is 0 only because it contains the factor x_z), so under ``create_graph`` an O(n^2) form is
used whose every entry is the product itself, differentiable everywhere. PyTorch does the same.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..amp.autocast import autocast_arg
from ..amp.autocast import state as _autocast
from ..autograd.grad_mode import _state
from ..autograd.node_names import named_as
from ._numpy_warnings import cumulative
from ._util import cast, half, widened, wrap_dim
from .primitive import Primitive


class Cumsum(Primitive):
    @staticmethod
    def forward(xp, x, *, dim):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return cumulative(xp, x, dim, np.float32, False).astype(x.dtype)
        return cumulative(xp, x, dim, x.dtype, False)

    @staticmethod
    def backward(grad, *, dim):
        return (_reversed_cumsum(grad, dim),)


def _reversed_cumsum(v, dim):
    """``out_i = sum_{k>=i} v_k`` along ``dim``, differentiable."""
    from .shape import flip

    return flip(cumsum(flip(v, (dim,)), dim), (dim,))


class Cumprod(Primitive):
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dim):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return cumulative(xp, x, dim, np.float32, True).astype(x.dtype)
        return cumulative(xp, x, dim, x.dtype, True)

    @staticmethod
    def backward(grad, x, result, *, dim):
        # NOTE [Cumprod with zeros]
        if not (x._array == 0).any():
            return (_reversed_cumsum(grad * result, dim) / x,)
        if _state.enabled:
            return (_cumprod_grad_quadratic(grad, x, dim),)
        return (_cumprod_grad_zeros(grad, x, result, dim),)


def _cumprod_grad_zeros(grad, x, result, dim):
    """First-order gradient of cumprod when ``x`` has zeros: O(n), exact in value."""
    from .elementwise import where
    from .reduction import sum

    zero = x._array == 0
    count = np.cumsum(zero, axis=dim)
    before = count == 0  # positions before the first zero of their slice
    first = zero & (count == 1)  # the first zero itself
    # (result is exactly 0 from the first zero on: those terms are left out, not inf * 0)
    kept = where(before, grad * result, 0)
    part_before = where(before, _reversed_cumsum(kept, dim) / where(before, x, 1), 0)
    skip_first = cumprod(where(first, 1, x), dim)  # prod_{j<=k, j != z} x_j for k >= z
    # NOTE: only up to the second zero: skip_first is exactly 0 from there on, and an inf grad
    # there would give 0 * inf = nan (PyTorch: 0)
    at_first = sum(where(count == 1, grad, 0) * skip_first, dim, keepdim=True)
    return part_before + where(first, at_first, 0)


def _cumprod_grad_quadratic(grad, x, dim):
    """Gradient of cumprod as ``sum_{k>=i} g_k A[i, k]`` with ``A[i, k] = prod_{j<=k, j!=i} x_j``
    built as an (n, n) cumprod per slice: exact and differentiable at zeros (create_graph only)."""
    from .elementwise import where
    from .reduction import sum
    from .shape import movedim, unsqueeze

    n = x.shape[dim]
    rows = where(np.eye(n, dtype=bool), 1, unsqueeze(movedim(x, dim, -1), -2))  # (..., n, n)
    others = cumprod(rows, -1)
    upper = np.triu(np.ones((n, n), dtype=bool))  # k >= i
    g = unsqueeze(movedim(grad, dim, -1), -2)
    return movedim(sum(where(upper, others * g, 0), -1), -1, dim)


def _int_to_long(x, dtype):
    if dtype is not None:
        return cast(x, dtype.np)
    if x._array.dtype.kind in "biu":
        return cast(x, dtypes.int64.np)
    return x


def _scan(prim, name):
    def fn(input, dim: int, *, dtype=None):
        if _autocast.on and dtype is None:
            input = autocast_arg(name, input)
        x = _int_to_long(input, dtype)
        d = wrap_dim(dim, x._array.ndim, name)
        if x._array.ndim == 0:
            from .elementwise import clone

            return named_as(clone(x), prim.node_cls.__name__, x)  # torch's node, not a copy's
        return prim.apply(x, dim=d)

    fn.__name__ = fn.__qualname__ = name
    return fn


cumsum = _scan(Cumsum, "cumsum")
cumsum.__doc__ = """Running sum along ``dim`` (``torch.cumsum``); integer/bool input gives int64.

Example: ``glassgrad.cumsum(glassgrad.tensor([1., 2., 3.]), 0)`` is ``tensor([1., 3., 6.])``."""
cumprod = _scan(Cumprod, "cumprod")
cumprod.__doc__ = """Running product along ``dim`` (``torch.cumprod``); exact gradients with zeros,
first and higher order; integer/bool input gives int64."""


class LogCumSumExp(Primitive):
    saves = ("x", "result")
    node_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(xp, x, *, dim):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(LogCumSumExp.forward, xp, x, dim=dim)
        return xp.logaddexp.accumulate(x, axis=dim)

    @staticmethod
    def backward(grad, x, result, *, dim):
        # dL/dx_i = sum_{k>=i} g_k exp(x_i - r_k), summed in log space per sign of g (PyTorch's
        # formula); the safe log argument keeps double backward finite where g == 0
        from .elementwise import abs as abs_
        from .elementwise import exp, log, where
        from .shape import flip

        lowest = float(np.finfo(grad._array.dtype).min)
        log_abs = log(abs_(where(grad._array == 0, 1, grad)))
        parts = []
        for mask in (grad._array > 0, grad._array < 0):
            v = where(mask, log_abs, lowest) - result
            parts.append(exp(flip(logcumsumexp(flip(v, (dim,)), dim), (dim,)) + x))
        return (parts[0] - parts[1],)


def logcumsumexp(input, dim: int):
    """``log(cumsum(exp(x)))`` along ``dim``, exact for any range (one ``logaddexp.accumulate``)
    (``torch.logcumsumexp``); floating input."""
    d = wrap_dim(dim, input._array.ndim, "logcumsumexp")
    if input._array.ndim == 0:
        from .elementwise import clone

        return named_as(clone(input), "LogcumsumexpBackward0", input)
    return LogCumSumExp.apply(input, dim=d)
