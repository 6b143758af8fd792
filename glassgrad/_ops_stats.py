"""Order statistics (issue 15, lane ops): median, nanmedian, mode, quantile, nanquantile,
nanmean, cummax, cummin. Indices are found on arrays; values are gathers (ops/statistics.py) or
compositions of differentiable ops (quantile's interpolation), so gradients need no new code."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._ops_vmap import loops_under_vmap
from .ops import elementwise as ew
from .ops import reduction as red
from .ops import shape as sh
from .ops import statistics as st
from .ops._names import scalar_type
from .ops._util import is_tensor, wrap_dim
from .ops.primitive import _make

_types = {n: namedtuple(n, ["values", "indices"]) for n in
          ("median", "nanmedian", "mode", "cummax", "cummin")}


def _empty_dim(name, arr, d):
    if arr.ndim and arr.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.\n"
                         f"glassgrad: the input has shape {list(arr.shape)}.")


def _median_index(arr, d, ignore_nan):
    """Index along ``d`` of the lower median (of the non-NaN values when ``ignore_nan``; of a
    row holding NaN, its first NaN, as PyTorch reports)."""
    order = np.argsort(arr, axis=d, kind="stable")  # NaN sorts last
    n = arr.shape[d]
    if arr.dtype.kind == "f":
        nan_count = np.isnan(arr).sum(axis=d, keepdims=True)
        if ignore_nan:
            k = np.maximum(n - nan_count - 1, 0) // 2
        else:
            k = np.where(nan_count > 0, n - nan_count, (n - 1) // 2)
    else:
        k = np.full(order.shape[:d] + (1,) + order.shape[d + 1:], (n - 1) // 2)
    return np.take_along_axis(order, k.astype(np.int64), axis=d).astype(np.int64)


def _median(name, input, dim, keepdim, ignore_nan):
    arr = input._array
    if dim is None:
        cls = st.NanMedianAll if ignore_nan else st.MedianAll
        return cls.apply(input, dims=tuple(range(arr.ndim)), keepdim=False, evenly=True)
    d = wrap_dim(dim, arr.ndim, name)
    result = _types[name]
    if arr.ndim == 0:
        return result(input.clone(), _make(np.zeros((), np.int64)))
    _empty_dim(name, arr, d)
    idx = _median_index(arr, d, ignore_nan)
    cls = st.NanMedianDim if ignore_nan else st.MedianDim
    values = cls.apply(input, dim=d, index=idx, keepdim=keepdim, shape=arr.shape)
    return result(values, _make(idx if keepdim else np.squeeze(idx, axis=d)))


def median(input, dim=None, keepdim: bool = False):
    """The lower median (``torch.median``): of all elements (NaN if any is NaN; ties share the
    gradient), or ``(values, indices)`` along ``dim``; IndexError for an empty reduced dim."""
    return _median("median", input, dim, keepdim, ignore_nan=False)


def nanmedian(input, dim=None, keepdim: bool = False):
    """``median`` ignoring NaN (``torch.nanmedian``): NaN only where every value is NaN."""
    return _median("nanmedian", input, dim, keepdim, ignore_nan=True)


@loops_under_vmap
def mode(input, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` and the index of its last occurrence
    (``torch.mode``); among equally frequent values the smallest."""
    arr = input._array
    d = wrap_dim(dim, arr.ndim, "mode")
    if arr.ndim == 0:
        return _types["mode"](input.clone(), _make(np.zeros((), np.int64)))
    _empty_dim("mode", arr, d)
    moved = np.moveaxis(arr, d, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    idx = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        values, counts = np.unique(row, return_counts=True)
        best = values[np.argmax(counts)]  # np.unique sorts: the first maximum is the smallest
        hits = np.flatnonzero((row == best) | (np.isnan(row) & np.isnan(best)))
        idx[r] = hits[-1]
    idx = np.expand_dims(idx.reshape(moved.shape[:-1]), d)
    values = st.ModeDim.apply(input, dim=d, index=idx, keepdim=keepdim, shape=arr.shape)
    return _types["mode"](values, _make(idx if keepdim else np.squeeze(idx, axis=d)))


def _cum_index(arr, d, better):
    """Running arg-extreme along ``d``: a tie moves the index on (PyTorch's >=), and from the
    first NaN on the index stays at that NaN."""
    moved = np.moveaxis(arr, d, 0)
    idx = np.zeros(moved.shape, np.int64)
    best = moved[0].copy()
    cur = np.zeros(moved.shape[1:], np.int64)
    for k in range(moved.shape[0]):
        v = moved[k]
        if arr.dtype.kind == "f":
            take = (better(v, best) | (v == best) | np.isnan(v)) & ~np.isnan(best)
            take |= (k == 0)
        else:
            take = better(v, best) | (v == best)
        best = np.where(take, v, best)
        cur = np.where(take, k, cur)
        idx[k] = cur
    return np.moveaxis(idx, 0, d)


def _cum(name, better, cls):
    def fn(input, dim: int):
        arr = input._array
        d = wrap_dim(dim, arr.ndim, name)
        if arr.ndim == 0:
            return _types[name](input.clone(), _make(np.zeros((), np.int64)))
        idx = _cum_index(arr, d, better) if arr.size else np.zeros(arr.shape, np.int64)
        values = cls.apply(input, dim=d, index=idx, shape=arr.shape)
        return _types[name](values, _make(idx))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Running {name[3:]}imum along ``dim`` and its index (``torch.{name}``): ties "
                  "take the later index, NaN propagates; the gradient goes to the chosen element.")
    return loops_under_vmap(fn)


cummax = _cum("cummax", np.greater, st.CummaxValues)
cummin = _cum("cummin", np.less, st.CumminValues)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None):
    """The mean of the non-NaN elements over ``dim`` (``torch.nanmean``); floating input only."""
    x = ew.to_dtype(input, dtype) if dtype is not None else input
    if not x.is_floating_point():
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {scalar_type(x.dtype)}")
    count = _make((~np.isnan(x._array)).astype(x._array.dtype))
    return ew.div(red.nansum(x, dim, keepdim), red.sum(count, dim, keepdim))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(name, input, q, interpolation):
    if not input.is_floating_point() or input.dtype.itemsize < 4:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if input._array.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if is_tensor(q):
        if q._array.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs = q._array
    else:
        qs = np.asarray(q, dtype=input._array.dtype)
    if np.any((qs < 0) | (qs > 1)):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]" if is_tensor(q)
                           else f"{name}() q must be in the range [0, 1] but got {q}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    return qs


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    qs = _check_quantile(name, input, q, interpolation)
    x = sh.reshape(input, (-1,)) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, input._array.ndim, name)
    if x._array.ndim == 0:
        x = sh.reshape(x, (1,))
    x = sh.movedim(x, d, -1)
    from .comparison import sort

    s = sort(x, -1).values  # NaN last
    arr = x._array
    n = arr.shape[-1]
    nan_count = np.isnan(arr).sum(axis=-1, keepdims=True)
    count = n - nan_count if ignore_nan else np.full_like(nan_count, n)
    qv = qs.reshape(-1).astype(np.float64)
    rank = qv * np.maximum(count - 1, 0)  # (..., m)
    if not ignore_nan:  # NOTE: as PyTorch, a row holding NaN takes its last (NaN) value
        rank = np.where(nan_count > 0, float(n - 1), rank)
    if interpolation == "nearest":
        rank = np.round(rank)  # NOTE: half to even, as PyTorch's round()
    lo = np.floor(rank).astype(np.int64)
    hi = np.minimum(np.ceil(rank).astype(np.int64), n - 1)
    if interpolation in ("lower", "nearest"):
        out = s.gather(-1, _make(lo))
    elif interpolation == "higher":
        out = s.gather(-1, _make(hi))
    else:
        if interpolation == "midpoint":
            w = _make(np.full_like(rank, 0.5, dtype=arr.dtype))
        elif is_tensor(q):  # NOTE: as PyTorch's, differentiable in q: d/dq = (count - 1)(b - a)
            scale = _make(np.maximum(count - 1, 0).astype(arr.dtype))
            w = ew.sub(ew.mul(sh.reshape(q, (-1,)), scale), _make(lo.astype(arr.dtype)))
        else:
            w = _make((rank - lo).astype(arr.dtype))
        a, b = s.gather(-1, _make(lo)), s.gather(-1, _make(hi))
        out = ew.lerp(a, b, w)
    if keepdim:
        nd = input._array.ndim
        keep = (1,) * nd if dim is None else tuple(
            1 if k == d else s_ for k, s_ in enumerate(input._array.shape))
        out = sh.reshape(sh.movedim(out, -1, 0), (qv.size,) + keep)
    else:
        out = sh.movedim(out, -1, 0)
    if not (is_tensor(q) and q._array.ndim == 1):
        out = sh.squeeze(out, 0)
    return out


def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """The ``q``-th quantiles along ``dim`` (of all elements when None) (``torch.quantile``):
    ``q`` a number or a 0-d/1-D tensor of the input's dtype (a 1-D ``q`` leads the result's
    shape); ``interpolation`` linear/lower/higher/midpoint/nearest; NaN where a row holds NaN.
    RuntimeError for integer input, q outside [0, 1], or an unknown interpolation."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """``quantile`` ignoring NaN (``torch.nanquantile``): NaN only for an all-NaN row."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)
