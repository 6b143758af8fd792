"""Batching rules for NumPy's shape, join, gather and contraction functions on ``BatchedArray``
(see NOTE [Batched arrays] in _batched_array.py): logical axes shift past the batch dim."""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..ops.primitive import VmapFallback
from ._batched_array import BatchedArray, expand_phys, logical_ndim
from ._batched_numpy import HANDLERS, _copy_into, _implements, _is_at, align, phys_axes


def _base(x):
    while type(x) is BatchedArray:
        x = x.phys
    return x


def _batched_phys(x, level, size):
    """Physical operand batched at ``level``: an unbatched one is broadcast over the batch."""
    if _is_at(x, level):
        return x.phys
    shape = tuple(np.shape(x)) if type(x) is not BatchedArray else tuple(x.shape)
    return np.broadcast_to(x, (size,) + shape)


def _size(objs, level):
    for x in objs:
        if _is_at(x, level):
            return x.phys.shape[0]
    raise AssertionError("no batched operand")  # pragma: no cover


@_implements(np.reshape)
def _reshape(level, a, shape=None, order="C", *, newshape=None, copy=None):
    return a.reshape(shape if shape is not None else newshape, order=order)


@_implements(np.transpose)
def _transpose(level, a, axes=None):
    return a.transpose(axes)


@_implements(np.swapaxes)
def _swapaxes(level, a, axis1, axis2):
    return a.swapaxes(axis1, axis2)


@_implements(np.ravel)
def _ravel(level, a, order="C"):
    return a.reshape(-1, order=order)


@_implements(np.moveaxis)
def _moveaxis(level, a, source, destination):
    nd = a.ndim
    return BatchedArray(np.moveaxis(a.phys, phys_axes(source, nd), phys_axes(destination, nd)),
                        level)


@_implements(np.expand_dims)
def _expand_dims(level, a, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.ndim + len(axes)
    return BatchedArray(np.expand_dims(a.phys, tuple(normalize_axis_index(x, nd) + 1
                                                     for x in axes)), level)


@_implements(np.squeeze)
def _squeeze(level, a, axis=None):
    if axis is None:
        axes = tuple(i + 1 for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = phys_axes(axis, a.ndim)
        for ax in (axes if isinstance(axes, tuple) else (axes,)):
            if a.phys.shape[ax] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal "
                                 "to one")
    return BatchedArray(np.squeeze(a.phys, axis=axes), level)


@_implements(np.broadcast_to)
def _broadcast_to(level, array, shape, subok=False):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    p = expand_phys(array.phys, len(shape) - array.ndim)
    return BatchedArray(np.broadcast_to(p, p.shape[:1] + shape), level)


@_implements(np.broadcast_arrays)
def _broadcast_arrays(level, *args, subok=False):
    shape = np.broadcast_shapes(*(tuple(np.shape(a)) if type(a) is not BatchedArray
                                  else tuple(a.shape) for a in args))
    return tuple(np.broadcast_to(a, shape) for a in args)


@_implements(np.flip)
def _flip(level, m, axis=None):
    return BatchedArray(np.flip(m.phys, axis=phys_axes(axis, m.ndim)), level)


@_implements(np.roll)
def _roll(level, a, shift, axis=None):
    if type(shift) is BatchedArray:
        return NotImplemented
    p = a.phys
    if axis is None:
        flat = p.reshape(p.shape[:1] + (-1,))
        return BatchedArray(np.roll(flat, shift, axis=1).reshape(p.shape), level)
    return BatchedArray(np.roll(p, shift, axis=phys_axes(axis, a.ndim)), level)


def _make_tri(func):
    def rule(level, m, k=0):
        if not _is_at(m, level) or m.ndim < 2:
            return NotImplemented
        return BatchedArray(func(m.phys, k), level)

    return rule


HANDLERS[np.tril] = _make_tri(np.tril)
HANDLERS[np.triu] = _make_tri(np.triu)


@_implements(np.diagonal)
def _diagonal(level, a, offset=0, axis1=0, axis2=1):
    nd = a.ndim
    return BatchedArray(np.diagonal(a.phys, offset, normalize_axis_index(axis1, nd) + 1,
                                    normalize_axis_index(axis2, nd) + 1), level)


@_implements(np.trace)
def _trace(level, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        return NotImplemented
    nd = a.ndim
    return BatchedArray(np.trace(a.phys, offset, normalize_axis_index(axis1, nd) + 1,
                                 normalize_axis_index(axis2, nd) + 1, dtype), level)


@_implements(np.tile)
def _tile(level, A, reps):
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    d = max(len(reps), A.ndim)
    p = expand_phys(A.phys, d - A.ndim)
    return BatchedArray(np.tile(p, (1,) + (1,) * (d - len(reps)) + reps), level)


@_implements(np.repeat)
def _repeat(level, a, repeats, axis=None):
    if not _is_at(a, level) or type(repeats) is BatchedArray:
        return NotImplemented
    p = a.phys
    if axis is None:
        return BatchedArray(np.repeat(p.reshape(p.shape[:1] + (-1,)), repeats, axis=1), level)
    return BatchedArray(np.repeat(p, repeats, axis=phys_axes(axis, a.ndim)), level)


@_implements(np.pad)
def _pad(level, array, pad_width, mode="constant", **kwargs):
    if not _is_at(array, level) or any(type(v) is BatchedArray for v in kwargs.values()):
        return NotImplemented
    widths = np.broadcast_to(np.asarray(pad_width), (array.ndim, 2)).tolist()
    return BatchedArray(np.pad(array.phys, [(0, 0)] + widths, mode=mode, **kwargs), level)


@_implements(np.diff)
def _diff(level, a, n=1, axis=-1, **kwargs):
    if not _is_at(a, level) or kwargs:
        return NotImplemented
    return BatchedArray(np.diff(a.phys, n=n, axis=phys_axes(axis, a.ndim)), level)


@_implements(np.concatenate)
def _concatenate(level, arrays, axis=0, out=None, **kwargs):
    arrays = list(arrays)
    size = _size(arrays, level)
    if axis is None:
        parts = [_batched_phys(a, level, size) for a in arrays]
        parts = [p.reshape(p.shape[:1] + (-1,)) for p in parts]
        res = BatchedArray(np.concatenate(parts, axis=1, **kwargs), level)
    else:
        nd = logical_ndim(arrays[0])
        parts = [_batched_phys(a, level, size) for a in arrays]
        res = BatchedArray(np.concatenate(parts, axis=normalize_axis_index(axis, nd) + 1,
                                          **kwargs), level)
    if out is not None:
        _copy_into(out, res, level)
        return out
    return res


@_implements(np.stack)
def _stack(level, arrays, axis=0, out=None, **kwargs):
    arrays = list(arrays)
    size = _size(arrays, level)
    nd = logical_ndim(arrays[0]) + 1
    parts = [_batched_phys(a, level, size) for a in arrays]
    res = BatchedArray(np.stack(parts, axis=normalize_axis_index(axis, nd) + 1, **kwargs), level)
    if out is not None:
        _copy_into(out, res, level)
        return out
    return res


def _make_split(func):
    def rule(level, ary, indices_or_sections, axis=0):
        if not _is_at(ary, level) or type(indices_or_sections) is BatchedArray:
            return NotImplemented
        parts = func(ary.phys, indices_or_sections, axis=phys_axes(axis, ary.ndim))
        return [BatchedArray(p, level) for p in parts]

    return rule


HANDLERS[np.split] = _make_split(np.split)
HANDLERS[np.array_split] = _make_split(np.array_split)


@_implements(np.take)
def _take(level, a, indices, axis=None, out=None, mode="raise"):
    if not _is_at(a, level) or type(indices) is BatchedArray or out is not None:
        return NotImplemented
    p = a.phys
    if axis is None:
        return BatchedArray(np.take(p.reshape(p.shape[:1] + (-1,)), indices, axis=1, mode=mode),
                            level)
    return BatchedArray(np.take(p, indices, axis=phys_axes(axis, a.ndim), mode=mode), level)


@_implements(np.take_along_axis)
def _take_along_axis(level, arr, indices, axis=-1):
    if axis is None:
        return NotImplemented
    size = _size((arr, indices), level)
    nd = logical_ndim(arr)
    pa = _batched_phys(arr, level, size)
    pi = _batched_phys(indices, level, size)
    return BatchedArray(np.take_along_axis(pa, pi, axis=normalize_axis_index(axis, nd) + 1),
                        level)


@_implements(np.put_along_axis)
def _put_along_axis(level, arr, indices, values, axis):
    if not _is_at(arr, level):
        raise VmapFallback("vmap: put_along_axis into an array that is not batched")
    size = arr.phys.shape[0]
    nd = arr.ndim
    pi = _batched_phys(indices, level, size)
    pv = values
    if _is_at(values, level):
        pv = expand_phys(values.phys, logical_ndim(indices) - values.ndim)
    np.put_along_axis(arr.phys, pi, pv, axis=normalize_axis_index(axis, nd) + 1)


@_implements(np.copyto)
def _copyto(level, dst, src, casting="same_kind", where=True):
    if type(where) is BatchedArray or where is not True:
        return NotImplemented
    if not _is_at(dst, level):
        _copy_into(dst, src, level)  # raises PyTorch's in-place error
    d, s = align([dst, src], level)
    np.copyto(d, s, casting=casting)


@_implements(np.einsum)
def _einsum(level, subscripts, *operands, **kwargs):
    if not isinstance(subscripts, str) or "->" not in subscripts:
        return NotImplemented
    lhs, rhs = subscripts.replace(" ", "").split("->")
    terms = lhs.split(",")
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                if c not in subscripts)
    new_terms, phys = [], []
    for t, op in zip(terms, operands):
        if _is_at(op, level):
            new_terms.append(free + t)
            phys.append(op.phys)
        else:
            new_terms.append(t)
            phys.append(op)
    eq = ",".join(new_terms) + "->" + free + rhs
    return BatchedArray(np.einsum(eq, *phys, **kwargs), level)


@_implements(np.may_share_memory, np.shares_memory)
def _shares(level, a, b, max_work=None):
    return np.may_share_memory(_base(a), _base(b))


@_implements(np.shape)
def _shape(level, a):
    return tuple(a.shape)


@_implements(np.ndim)
def _ndim(level, a):
    return a.ndim


@_implements(np.size)
def _np_size(level, a, axis=None):
    return a.size if axis is None else a.shape[axis]


@_implements(np.result_type)
def _result_type(level, *arrays_and_dtypes):
    return np.result_type(*(x.dtype if type(x) is BatchedArray else x for x in arrays_and_dtypes))


@_implements(np.nonzero, np.argwhere, np.flatnonzero, np.unique)
def _dynamic(level, *args, **kwargs):
    raise VmapFallback(
        "vmap: We do not support batching operators that can support dynamic shape. Attempting "
        "to batch over a nonzero / unique.\nglassgrad: the number of results differs between "
        "batch entries; compute it outside vmap, or use a fixed-size op (where, topk)."
    )


@_implements(np.lib.stride_tricks.sliding_window_view)
def _windows(level, x, window_shape, axis=None, *, subok=False, writeable=False):
    if not _is_at(x, level):
        return NotImplemented
    return BatchedArray(np.lib.stride_tricks.sliding_window_view(
        x.phys, window_shape, axis=phys_axes(axis, x.ndim), writeable=writeable), level)


@_implements(np.lexsort)
def _lexsort(level, keys, axis=-1):
    if type(keys) is BatchedArray or not isinstance(keys, (tuple, list)) or axis is None:
        return NotImplemented
    size = _size(keys, level)
    nd = logical_ndim(keys[0])
    return BatchedArray(np.lexsort(tuple(_batched_phys(k, level, size) for k in keys),
                                   axis=normalize_axis_index(axis, nd) + 1), level)
