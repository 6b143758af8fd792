"""``scatter_reduce``: ``src`` reduced into a copy of ``x`` at ``index`` along ``dim`` with sum,
prod, mean, amax or amin, counting x's own value unless ``include_self=False``. Backward follows
PyTorch's rules: mean divides by the count, amax/amin share the gradient evenly among every
value equal to the result, prod is exact with zeros (a lone zero gets the product of the
others). Backward is written in glassgrad ops (prod recurses into ScatterReduce), so it is
differentiable again."""

from __future__ import annotations

import numpy as np

from . import primitive
from .gather import Gather, _full_index, _pad_to
from .primitive import Primitive

_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
          "amin": np.minimum}


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:  # bool
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


def _hits(shape, dim, index):
    """How many src values land on each position of the result (int64 array of ``shape``)."""
    count = np.zeros(shape, np.int64)
    np.add.at(count, _full_index(index, dim), 1)
    return count


class ScatterReduce(Primitive):
    node_name = "ScatterReduceBackward0"
    saves = ("x", "src", "result")

    @staticmethod
    def forward(xp, x, src, *, dim, index, reduce, include_self):
        out = x.copy()
        full = _full_index(index, dim)
        values = src[tuple(slice(0, s) for s in index.shape)]
        if not include_self:
            out[full] = _identity(reduce, out.dtype)
        _UFUNC[reduce].at(out, full, values)
        if reduce == "mean":
            count = _hits(x.shape, dim, index) + (1 if include_self else 0)
            count = np.maximum(count, 1)
            if out.dtype.kind == "f":
                out = out / count.astype(out.dtype)
            else:
                out = np.floor_divide(out, count).astype(out.dtype)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(grad, x, src, result, *, dim, index, reduce, include_self):
        from .elementwise import where

        hits = _hits(x.shape, dim, index)
        src_shape = src._array.shape

        def gather(t):
            return _pad_to(Gather.apply(t, dim=dim, index=index, shape=t._array.shape), index,
                           src_shape)

        # x's own value is not part of the result where a src landed and include_self is False
        own = np.ones(x.shape, np.bool_) if include_self else hits == 0
        if reduce == "sum":
            return where(own, grad, 0.0), gather(grad)
        if reduce == "mean":
            count = primitive._make((hits + (1 if include_self else 0)).clip(1).astype(
                grad._array.dtype))
            share = grad / count
            return where(own, share, 0.0), gather(share)
        if reduce in ("amax", "amin"):
            r_src = gather(result)
            # NOTE: as PyTorch, x's value counts among the ties even where include_self=False
            # excludes it from the result; only its own gradient is then masked
            x_eq = (x == result)._array
            x_hit = x_eq & own
            src_hit = (src == r_src)._array
            count = x_eq.astype(np.int64)
            np.add.at(count, _full_index(index, dim), src_hit[tuple(slice(0, s) for s in
                                                                   index.shape)])
            # NOTE: PyTorch multiplies by the masks, so a NaN result (no ties: 0 / 0) gives NaN
            dt = grad._array.dtype
            with np.errstate(divide="ignore", invalid="ignore"):
                share = grad / primitive._make(count.astype(dt))
            return (share * primitive._make(x_hit.astype(dt)),
                    gather(share) * primitive._make(src_hit.astype(dt)))
        return _prod_backward(grad, x, src, result, dim, index, include_self, own, gather)


def _prod_backward(grad, x, src, result, dim, index, include_self, own, gather):
    """PyTorch's prod rule: division by x and by src where they are nonzero, and for a zero the
    product of the others (0 when another zero lands on the same position)."""
    from .elementwise import where

    def reduce_into(base, values, with_self):
        return ScatterReduce.apply(base, values, dim=dim, index=index, reduce="prod",
                                   include_self=with_self)

    # x: the result with x's zeros counted as ones, divided by x (exact with zeros; NaN stays)
    masked_x = where(x._array == 0, 1.0, x)
    grad_x = where(own, grad * reduce_into(masked_x, src, True) / masked_x, 0.0)
    block = tuple(slice(0, s) for s in index.shape)
    src_zero = src._array == 0
    zeros_at = np.zeros(x.shape, np.int64)
    np.add.at(zeros_at, _full_index(index, dim), src_zero[block])
    lone = np.zeros(src_zero.shape, np.bool_)
    within = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))
    lone[block] = src_zero[block] & (np.take_along_axis(zeros_at[within], index, axis=dim) == 1)
    masked = where(lone, 1.0, src)
    others = reduce_into(x, masked, include_self)  # the product without the lone zero
    safe = where(src_zero, 1.0, src)
    grad_src = where(lone, gather(grad * others), gather(grad * result) / safe)
    if zeros_at.max(initial=0) > 1:
        from .no_derivative import UnsupportedBackward

        grad_src = UnsupportedBackward.apply(grad_src, message=(
            "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
            "scattered to the same position in self\nglassgrad: as in PyTorch; the first "
            "derivative is exact."))
    return grad_x, grad_src

