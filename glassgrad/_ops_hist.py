"""Counting (issue 15, lane ops): histc, histogram, histogramdd, bincount, on NumPy's
histogram kernels, cast to torch's dtypes. PyTorch gives them no gradient: histc's result does not
require grad; histogram's, histogramdd's and weighted bincount's do when an input does, and
backward through them raises PyTorch's "derivative for aten::... is not implemented"."""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from ._ops_vmap import loops_under_vmap
from .ops._names import scalar_type
from .ops.primitive import _make
from .tensor import Tensor

_Histogram = namedtuple("histogram", ["hist", "bin_edges"])
_HistogramDD = namedtuple("histogramdd", ["hist", "bin_edges"])


def _require_float(input, kernel):
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{scalar_type(input.dtype)}'")


def _finite_range(arr, lo, hi, name):
    if lo == hi == 0 and arr.size:
        lo, hi = float(np.min(arr)), float(np.max(arr))
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"{name}: range of [{_g(lo)}, {_g(hi)}] is not finite".replace(
            "nan", "-nan"))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"{name}: max must be larger than min")
    return lo, hi


def _result(value, what, *sources):
    """``value`` as a tensor; as in PyTorch it requires grad when a source does, and backward
    through it raises "derivative for <what> is not implemented"."""
    for src in sources:
        if src is not None and src._requires_grad:
            from .ops.no_derivative import NoDerivative

            return NoDerivative.apply(src, value=value, what=what)
    return _make(value)


def _check_weight(want, weight, input_shape):
    """PyTorch's weight check: one weight per point (the input without its last dim)."""
    if weight is not None and tuple(weight._array.shape) != tuple(want):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the "
                           "same shape as the input tensor excluding its innermost dimension, but "
                           "got "
                           f"input with shape {list(input_shape)} and weight with shape "
                           f"{list(weight._array.shape)}")


def _g(v):
    return "nan" if np.isnan(v) else f"{v:g}"


@loops_under_vmap
def histc(input, bins: int = 100, min: float = 0, max: float = 0):  # noqa: A002 - torch's names
    """Counts of ``input`` in ``bins`` equal bins over [min, max] (the data's own range when
    both are 0) (``torch.histc``); values outside are ignored; float result of input's dtype."""
    _require_float(input, "histogram_cpu")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    arr = input._array
    if np.any(np.isnan(arr)) and min == max == 0:
        raise RuntimeError("torch.histc: range of [-nan, -nan] is not finite")
    lo, hi = _finite_range(arr, float(min), float(max), "torch.histc")
    inside = arr[(arr >= lo) & (arr <= hi)]
    counts, _ = np.histogram(inside, bins=bins, range=(lo, hi))
    return _make(counts.astype(arr.dtype))


def _edges(arr, bins, rng, name, dim=0):
    if isinstance(bins, Tensor):
        e = bins._array
        if e.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{e.ndim} dimensions in the bins tensor for dimension {dim}")
        if e.size == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but "
                               f"got 0 elements in the bins tensor for dimension {dim}")
        if np.any(np.diff(e) < 0) or np.any(np.isnan(e)):
            raise RuntimeError(f"{name}(): bin edges must increase monotonically\nglassgrad: "
                               f"dimension {dim} got edges {e.tolist()}.")
        return e.astype(arr.dtype)
    if not isinstance(bins, (int, np.integer)):
        raise TypeError(f"{name.split('.')[-1]}(): argument 'bins' must be int or Tensor, not "
                        f"{type(bins).__name__}")
    if bins <= 0:
        raise RuntimeError(f"{name}(): bins must be > 0, but got {bins} for dimension {dim}")
    if rng is None:
        lo, hi = (float(np.min(arr)), float(np.max(arr))) if arr.size else (0.0, 1.0)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{_g(lo)}, "
                               f"{_g(hi)}] is not finite")
    else:
        lo, hi = float(rng[0]), float(rng[1])
        if lo > hi:
            raise RuntimeError(f"{name}(): max must be larger than min")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5  # NOTE: PyTorch widens an empty range by half a unit
    return np.linspace(lo, hi, bins + 1).astype(arr.dtype)


@loops_under_vmap
def histogram(input, bins=100, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """``(hist, bin_edges)`` of ``input`` (``torch.histogram``): ``bins`` a count (equal bins
    over ``range`` or the data's span) or a 1-D tensor of increasing edges; ``weight`` per
    element; ``density`` normalises to unit area."""
    _require_float(input, "histogram_cpu")
    _check_weight(input._array.shape, weight, input._array.shape)
    arr = input._array.reshape(-1)
    edges = _edges(arr, bins, range, "torch.histogram")
    w = None if weight is None else weight._array.reshape(-1)
    hist, _ = np.histogram(arr, bins=edges.astype(np.float64), weights=w, density=density)
    what = "aten::histogram"
    return _Histogram(_result(hist.astype(arr.dtype), what, input, weight),
                      _result(edges, what, input, weight))


@loops_under_vmap
def histogramdd(input, bins=10, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """``(hist, bin_edges)`` of the rows of ``input`` (N, D) as points in D dims
    (``torch.histogramdd``): ``bins`` an int, D ints or D edge tensors; ``range`` a flat list
    ``[min0, max0, min1, max1, ...]``."""
    _require_float(input, "histogramdd")
    arr = input._array
    if arr.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    d = arr.shape[-1]
    _check_weight(arr.shape[:-1], weight, arr.shape)
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have "
                           f"{2 * d} elements, but got {len(range)}")
    points = arr.reshape(-1, d)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    edges = [
        _edges(points[:, k], per_dim[k], None if range is None else range[2 * k:2 * k + 2],
               "torch.histogramdd", k)
        for k in builtins.range(d)
    ]
    w = None if weight is None else weight._array.reshape(-1)
    hist, _ = np.histogramdd(points, bins=[e.astype(np.float64) for e in edges], weights=w,
                             density=density)
    hist = _result(hist.astype(arr.dtype), "aten::_histogramdd_from_bin_cts", input, weight)
    return _HistogramDD(hist, tuple(_make(e) for e in edges))


@loops_under_vmap
def bincount(input, weights=None, minlength: int = 0):
    """How often each value 0..max occurs in a 1-D non-negative integer tensor
    (``torch.bincount``): int64 counts, or sums of ``weights`` in the weights' float dtype
    (float64 for integer weights). RuntimeError for other inputs."""
    arr = input._array
    if arr.dtype.kind not in "iub":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{scalar_type(input.dtype)}'")
    if arr.ndim != 1 or (arr.size and arr.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _make(np.bincount(arr, minlength=minlength).astype(np.int64))
    if not isinstance(weights, Tensor):
        raise TypeError(f"bincount(): argument 'weights' (position 1) must be Tensor, not "
                        f"{type(weights).__name__}")
    if weights._array.shape != arr.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    w = weights._array
    dt = w.dtype if w.dtype.kind == "f" else np.float64
    counts = np.bincount(arr, weights=w.astype(np.float64), minlength=minlength).astype(dt)
    return _result(counts, "aten::bincount", weights)
