"""Indexing a ``BatchedArray``: ``x[index]``, ``x[index] = value`` and ``ufunc.at``.

Basic indices get a leading ``slice(None)`` for the batch dim. Advanced (integer-array) indices get
``arange(B)`` as one more advanced index; NumPy then puts the broadcast advanced block first when
the advanced indices are not adjacent, so the result (or, for writes, the value) is permuted back
to the layout one batch entry would have. Boolean masks that differ per entry have no fixed-size
result and raise ``VmapFallback``.
"""

from __future__ import annotations

import numpy as np

from ..ops.primitive import VmapFallback
from ._batched_array import BatchedArray, expand_phys, logical_ndim
from ._batched_numpy import _top_level


def _is_adv(k) -> bool:
    return type(k) is BatchedArray or (isinstance(k, np.ndarray) and k.ndim > 0) or isinstance(
        k, list)


def _normalize(index, nd):
    """Index tuple with the Ellipsis expanded, lists as arrays and unbatched masks as nonzero()."""
    if type(index) is not tuple:
        index = (index,)
    out = []
    for k in index:
        if isinstance(k, list):
            k = np.asarray(k)
        if isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim:
            out.extend(k.nonzero())
            continue
        if type(k) is BatchedArray and k.dtype == np.bool_:
            raise VmapFallback(
                "vmap: We do not support batching operators that can support dynamic shape. "
                "Attempting to batch over a boolean mask index.\nglassgrad: the mask selects a "
                "different number of elements per batch entry; use glassgrad.where() instead."
            )
        if isinstance(k, np.ndarray) and k.ndim == 0:
            k = k.item()
        out.append(k)
    used = sum(0 if k is None or k is Ellipsis else 1 for k in out)
    if Ellipsis in [k for k in out if not isinstance(k, (np.ndarray, BatchedArray))]:
        i = next(i for i, k in enumerate(out) if k is Ellipsis and not isinstance(
            k, (np.ndarray, BatchedArray)))
        out[i:i + 1] = [slice(None)] * (nd - used)
    else:
        out.extend([slice(None)] * (nd - used))
    return out


class _Plan:
    """How a batched index maps to one NumPy index and back."""

    __slots__ = ("adv_ndim", "perm", "pidx")


def _plan(x_batched: bool, idx: list, level: int, size: int) -> _Plan:
    plan = _Plan()
    adv_pos = [i for i, k in enumerate(idx) if _is_adv(k) or (
        isinstance(k, (int, np.integer)) and any(_is_adv(j) for j in idx))]
    if not adv_pos:
        plan.pidx = ((slice(None),) if x_batched else ()) + tuple(idx)
        plan.perm = None
        plan.adv_ndim = 0
        return plan
    shapes = [tuple(k.shape) if hasattr(k, "shape") else () for k in (idx[i] for i in adv_pos)]
    adv_shape = np.broadcast_shapes(*shapes)
    nadv = len(adv_shape)
    comps = list(idx)
    for i in adv_pos:
        k = comps[i]
        if type(k) is BatchedArray and k.level == level:
            comps[i] = expand_phys(k.phys, nadv - k.ndim)
    adjacent = adv_pos[-1] - adv_pos[0] == len(adv_pos) - 1
    before = sum(1 for k in idx[:adv_pos[0]] if k is None or isinstance(k, slice))
    after = sum(1 for k in idx[adv_pos[0]:] if k is None or isinstance(k, slice))
    plan.adv_ndim = nadv
    if x_batched:
        bidx = np.arange(size).reshape((size,) + (1,) * nadv)
        plan.pidx = (bidx,) + tuple(comps)
        # NumPy gives (B, *adv, *basic dims); one entry has (*before, *adv, *after) if adjacent
        if adjacent and before:
            block = list(range(1, 1 + nadv))
            pre = list(range(1 + nadv, 1 + nadv + before))
            post = list(range(1 + nadv + before, 1 + nadv + before + after))
            plan.perm = [0] + pre + block + post
        else:
            plan.perm = None
    else:
        plan.pidx = tuple(comps)
        # the batch dim sits in the advanced block: first, or at `before` when adjacent
        if adjacent and before:
            plan.perm = [before] + [d for d in range(before + nadv + 1 + after) if d != before]
        else:
            plan.perm = None
    return plan


def _level_and_size(objs):
    level = _top_level(objs)
    for x in objs:
        if type(x) is BatchedArray and x.level == level:
            return level, x.phys.shape[0]
        if type(x) is tuple:
            for k in x:
                if type(k) is BatchedArray and k.level == level:
                    return level, k.phys.shape[0]
    raise AssertionError("no batched operand")  # pragma: no cover


def getitem(x, index):
    """``x[index]`` for a batched ``x`` or a batched index (one NumPy indexing call)."""
    level, size = _level_and_size((x, index))
    x_batched = type(x) is BatchedArray and x.level == level
    idx = _normalize(index, logical_ndim(x))
    plan = _plan(x_batched, idx, level, size)
    res = (x.phys if x_batched else x)[plan.pidx]
    if plan.perm is not None:
        res = res.transpose(plan.perm)
    return BatchedArray(res, level)


def _value_phys(x, idx, plan, value, level):
    """``value`` laid out as NumPy expects for ``x.phys[plan.pidx] = value``."""
    probe = tuple(np.zeros(tuple(k.shape), np.intp) if type(k) is BatchedArray else k
                  for k in idx)
    target = np.broadcast_to(np.empty((), dtype=bool), tuple(x.shape))[probe].shape
    if type(value) is BatchedArray and value.level == level:
        pv = expand_phys(value.phys, len(target) - value.ndim)
    else:
        pv = value
        if plan.perm is None:
            return pv
        pv = np.broadcast_to(pv, target)
        pv = pv.reshape((1,) + tuple(target))
    if plan.perm is not None:
        pv = pv.transpose(np.argsort(plan.perm).tolist())
    return pv


def setitem(x, index, value) -> None:
    """``x[index] = value`` for a batched ``x`` (a write into an unbatched x is refused)."""
    level, _ = _level_and_size((x, index, value))
    if not (type(x) is BatchedArray and x.level == level):
        raise VmapFallback(
            "vmap: index_put_(self, *extra_args) is not possible because there exists a Tensor "
            "`other` in extra_args that has more elements than `self`. This happened due to "
            "`other` being vmapped over but `self` not being vmapped over in a vmap.\nglassgrad: "
            "the written tensor is the same for every batch entry; write into a batched copy."
        )
    idx = _normalize(index, x.ndim)
    plan = _plan(True, idx, level, x.phys.shape[0])
    x.phys[plan.pidx] = _value_phys(x, idx, plan, value, level)


def ufunc_at(ufunc, level, a, indices, b=None) -> None:
    """``ufunc.at(a, indices, b)`` (unbuffered in-place, repeated indices accumulate)."""
    if not (type(a) is BatchedArray and a.level == level):
        raise VmapFallback(
            f"vmap: np.{ufunc.__name__}.at into an array that is not batched (the result would "
            "differ per batch entry)"
        )
    idx = _normalize(indices, a.ndim)
    plan = _plan(True, idx, level, a.phys.shape[0])
    if b is None:
        ufunc.at(a.phys, plan.pidx)
    else:
        ufunc.at(a.phys, plan.pidx, _value_phys(a, idx, plan, b, level))
