"""Batching rules for NumPy on ``BatchedArray``: ufuncs and ``__array_function__`` (see
NOTE [Batched arrays] in _batched_array.py). Each rule runs one NumPy call on the physical arrays;
functions without a rule run once per batch entry (``loop``)."""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..ops.primitive import VmapFallback
from ._batched_array import BatchedArray, expand_phys, logical_ndim, warn_fallback

HANDLERS: dict = {}


def _top_level(objs) -> int:
    top = 0
    stack = list(objs)
    while stack:
        x = stack.pop()
        t = type(x)
        if t is BatchedArray:
            top = max(top, x.level)
        elif t is tuple or t is list:
            stack.extend(x)
        elif t is dict:
            stack.extend(x.values())
    return top


def _batch_size(objs, level: int) -> int:
    stack = list(objs)
    while stack:
        x = stack.pop()
        t = type(x)
        if t is BatchedArray and x.level == level:
            return x.phys.shape[0]
        if t is tuple or t is list:
            stack.extend(x)
        elif t is dict:
            stack.extend(x.values())
    raise AssertionError("no batched operand at this level")  # pragma: no cover


def _wrap(res, level):
    if type(res) is tuple:
        return tuple(BatchedArray(r, level) for r in res)
    return BatchedArray(res, level)


def _is_at(x, level) -> bool:
    return type(x) is BatchedArray and x.level == level


def align(args, level):
    """Elementwise operands -> physical operands: batched ones padded to the common logical rank
    (after their batch dim), the rest left to broadcast from the right."""
    nd = max(logical_ndim(a) for a in args)
    out = []
    for a in args:
        if _is_at(a, level):
            out.append(expand_phys(a.phys, nd - (len(a.phys.shape) - 1)))
        else:
            out.append(a)
    return out


def _slice(obj, level, b):
    t = type(obj)
    if t is BatchedArray and obj.level == level:
        return obj.phys[b]
    if t is tuple:
        return tuple(_slice(o, level, b) for o in obj)
    if t is list:
        return [_slice(o, level, b) for o in obj]
    if t is dict:
        return {k: _slice(v, level, b) for k, v in obj.items()}
    return obj


def stack_results(outs, level):
    """Per-entry results -> one result batched at ``level`` (tuples stay tuples, None stays None)."""
    first = outs[0]
    if first is None:
        return None
    if type(first) is tuple or type(first) is list:
        return type(first)(stack_results([o[i] for o in outs], level) for i in range(len(first)))
    return BatchedArray(np.stack(outs), level)


def loop(fn, args, kwargs, what: str, level: int | None = None):
    """Run ``fn`` once per batch entry of the highest level and stack the results."""
    if level is None:
        level = _top_level((args, kwargs))
    size = _batch_size((args, kwargs), level)
    warn_fallback(what, size)
    outs = [fn(*_slice(args, level, b), **_slice(kwargs, level, b)) for b in range(size)]
    if not outs:
        raise VmapFallback(f"vmap: glassgrad cannot run {what} over an empty batch")
    return stack_results(outs, level)


def _copy_into(dst, src, level) -> None:
    if not _is_at(dst, level):
        raise VmapFallback(
            "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
            "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
            "`other` being vmapped over but `self` not being vmapped over in a vmap.\nglassgrad: "
            "write into a tensor that is batched too, or use the out-of-place op."
        )
    d, s = align([dst, src], level)
    np.copyto(d, s, casting="unsafe")


# --- ufuncs ---------------------------------------------------------------------------------
def array_ufunc(ufunc, method, inputs, kwargs):
    out = kwargs.pop("out", None)
    level = _top_level((inputs, out or ()))
    if method == "__call__":
        if ufunc is np.matmul and not kwargs:
            res = _matmul(level, *inputs)
        elif "where" in kwargs:
            return loop(getattr(ufunc, method), inputs, dict(kwargs, out=out) if out else kwargs,
                        f"np.{ufunc.__name__}(where=)", level)
        else:
            res = _wrap(ufunc(*align(inputs, level), **kwargs), level)
    elif method in ("reduce", "accumulate") and _is_at(inputs[0], level) and len(inputs) == 1:
        x = inputs[0]
        axis = kwargs.pop("axis", 0)
        if method == "accumulate":
            axis = normalize_axis_index(axis, x.ndim) + 1
        else:
            axis = phys_axes(axis, x.ndim)
        res = BatchedArray(getattr(ufunc, method)(x.phys, axis=axis, **kwargs), level)
    elif method == "at":
        from ._batched_index import ufunc_at

        return ufunc_at(ufunc, level, *inputs)
    else:
        kw = dict(kwargs, out=out) if out else kwargs
        return loop(getattr(ufunc, method), inputs, kw, f"np.{ufunc.__name__}.{method}", level)
    if out is None:
        return res
    results = res if type(res) is tuple else (res,)
    for o, r in zip(out, results):
        _copy_into(o, r, level)
    return out[0] if len(out) == 1 else out


def _matmul(level, a, b):
    ba, bb = _is_at(a, level), _is_at(b, level)
    pa, pb = (a.phys if ba else a), (b.phys if bb else b)
    na, nb = logical_ndim(a), logical_ndim(b)
    squeeze_a = ba and na == 1
    squeeze_b = bb and nb == 1
    if squeeze_a:  # a logical vector (k,) becomes the matrix (1, k)
        s = pa.shape
        pa, na = pa.reshape(s[:1] + (1,) + s[1:]), 2
    if squeeze_b:  # b logical vector (k,) becomes the matrix (k, 1)
        pb, nb = pb.reshape(pb.shape + (1,)), 2
    nd = max(na, nb)
    if ba:
        pa = expand_phys(pa, nd - na)
    if bb:
        pb = expand_phys(pb, nd - nb)
    res = _outer(pa, pb)
    if res is None:
        res = np.matmul(pa, pb)
    s = res.shape
    if squeeze_a:
        res, s = res.reshape(s[:-2] + s[-1:]), s[:-2] + s[-1:]
    if squeeze_b:
        res = res.reshape(s[:-1])
    return BatchedArray(res, level)


def _outer(pa, pb):
    """``pa @ pb`` for an inner dim of 1 in float32/float64, as the broadcast product ``pa * pb``;
    None otherwise. NOTE [Batched outer products]: per-sample gradients of a Linear weight are
    (B, out, 1) @ (B, 1, in), which NumPy runs as B BLAS calls with k = 1 (or its own loop):
    one rounding per element either way, so the product is bit for bit the same; measured on
    vmap(grad) of an MLP 784-256-256-10 at batch 256 (benchmarks/per_sample_workloads.py), one
    thread, loaded machine: (256, 784, 1) @ (256, 1, 256) 112-205 -> 72-76 ms (the -0.0 fix-up
    included; tests/test_vmap_outer.py)."""
    if (pa.ndim >= 2 and pb.ndim >= 2 and pa.shape[-1] == 1 and pb.shape[-2] == 1
            and type(pa) is np.ndarray and type(pb) is np.ndarray and pa.dtype == pb.dtype
            and pa.dtype in _OUTER_DTYPES):
        res = np.multiply(pa, pb)
        res += 0.0  # NOTE: matmul sums from +0.0, so a -0.0 product comes out +0.0
        return res
    return None


_OUTER_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# --- axis helpers ---------------------------------------------------------------------------
def phys_axes(axis, nd):
    """A logical ``axis`` (None, int or tuple) -> the physical one (shifted past the batch dim)."""
    if axis is None:
        return tuple(range(1, nd + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(normalize_axis_index(a, nd) + 1 for a in axis)
    return normalize_axis_index(axis, nd) + 1


def _implements(*funcs):
    def deco(fn):
        for f in funcs:
            HANDLERS[f] = fn
        return fn

    return deco


def array_function(func, args, kwargs):
    level = _top_level((args, kwargs))
    handler = HANDLERS.get(func)
    if handler is not None:
        res = handler(level, *args, **kwargs)
        if res is not NotImplemented:
            return res
    return loop(func, args, kwargs, f"np.{func.__name__}", level)


def _reduction(func):
    def rule(level, a, axis=None, *args, out=None, **kwargs):
        if not _is_at(a, level) or args:
            return NotImplemented
        res = BatchedArray(func(a.phys, axis=phys_axes(axis, a.ndim), **kwargs), level)
        if out is not None:
            _copy_into(out, res, level)
            return out
        return res

    return rule


for _f in (np.sum, np.prod, np.mean, np.var, np.std, np.max, np.min, np.amax, np.amin, np.any,
           np.all, np.nansum, np.nanmax, np.nanmin, np.nanmean, np.count_nonzero, np.ptp,
           np.median):
    HANDLERS[_f] = _reduction(_f)


def _make_arg(func):
    def rule(level, a, axis=None, out=None, *, keepdims=False):
        if not _is_at(a, level) or out is not None:
            return NotImplemented
        nd = a.ndim
        if axis is None:
            p = a.phys
            res = func(p.reshape(p.shape[:1] + (-1,)), axis=1)
            if keepdims:
                res = res.reshape(res.shape + (1,) * nd)
            return BatchedArray(res, level)
        return BatchedArray(func(a.phys, axis=phys_axes(axis, nd), keepdims=keepdims), level)

    return rule


HANDLERS[np.argmax] = _make_arg(np.argmax)
HANDLERS[np.argmin] = _make_arg(np.argmin)


def _make_scan(func):
    def rule(level, a, axis=None, dtype=None, out=None):
        if not _is_at(a, level) or out is not None:
            return NotImplemented
        p = a.phys
        if axis is None:
            return BatchedArray(func(p.reshape(p.shape[:1] + (-1,)), axis=1, dtype=dtype), level)
        return BatchedArray(func(p, axis=phys_axes(axis, a.ndim), dtype=dtype), level)

    return rule


for _f in (np.cumsum, np.cumprod, np.nancumsum):
    HANDLERS[_f] = _make_scan(_f)


def _make_sort(func):
    def rule(level, a, axis=-1, **kwargs):
        if not _is_at(a, level):
            return NotImplemented
        p, nd = a.phys, a.ndim
        if axis is None:
            p, nd, axis = p.reshape(p.shape[:1] + (-1,)), 1, 0
        if nd == 0:
            return NotImplemented
        return BatchedArray(func(p, axis=normalize_axis_index(axis, nd) + 1, **kwargs), level)

    return rule


HANDLERS[np.argsort] = _make_sort(np.argsort)
HANDLERS[np.sort] = _make_sort(np.sort)


# --- elementwise functions that are not ufuncs --------------------------------------------
def _elementwise(func):
    def rule(level, *args, **kwargs):
        return _wrap(func(*align(args, level), **kwargs), level)

    return rule


for _f in (np.where, np.clip, np.isclose, np.nan_to_num, np.real, np.imag):
    HANDLERS[_f] = _elementwise(_f)


@_implements(np.round, np.around)
def _round(level, a, decimals=0, out=None):
    if not _is_at(a, level) or out is not None:
        return NotImplemented
    return BatchedArray(np.round(a.phys, decimals), level)


@_implements(np.unravel_index)
def _unravel(level, indices, shape, order="C"):
    if not _is_at(indices, level):
        return NotImplemented
    return _wrap(np.unravel_index(indices.phys, shape, order=order), level)


def _make_like(func):
    def rule(level, a, *args, shape=None, **kwargs):
        if not _is_at(a, level) or any(type(x) is BatchedArray for x in args):
            return NotImplemented
        if shape is not None:
            shape = (a.phys.shape[0],) + ((shape,) if isinstance(shape, int) else tuple(shape))
        return BatchedArray(func(a.phys, *args, shape=shape, **kwargs), level)

    return rule


for _f in (np.full_like, np.zeros_like, np.ones_like, np.empty_like):
    HANDLERS[_f] = _make_like(_f)

# the shape/join/index rules live in _batched_shape.py
from . import _batched_shape  # noqa: F401
