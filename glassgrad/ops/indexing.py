"""Indexing primitives: ``x[idx]``, ``x[idx] = v``, ``gather``, ``scatter``, ``index_select``...

Basic indices (ints, slices, None, Ellipsis) give views; integer or boolean tensors give copies,
exactly as in PyTorch. Backwards scatter-add into zeros, so repeated indices accumulate.
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import _state
from . import primitive
from ._util import is_tensor, mark_view, wrap_dim
from .primitive import Primitive


def _norm_index(index, shape=None):
    """User index -> a NumPy index (tensors to arrays); IndexError names the problem."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for k in index:
        if is_tensor(k):
            arr = k._array
            if arr.dtype.kind == "f":
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors"
                )
            out.append(arr if arr.dtype.kind == "b" or arr.ndim else int(arr))
        elif isinstance(k, (list,)) and k and any(is_tensor(v) for v in k):
            out.append(np.asarray([int(v) for v in k]))
        elif isinstance(k, list):
            arr = np.asarray(k)
            out.append(arr if arr.dtype.kind in "biu" or arr.size == 0 else arr)
        elif isinstance(k, np.ndarray) and k.ndim == 0:
            out.append(k.item())
        else:
            out.append(k)
    return tuple(out)


def _is_basic(index) -> bool:
    for k in index:
        if not (k is None or k is Ellipsis or isinstance(k, (int, slice, np.integer))):
            return False
    return True


def _check_bounds(arr_shape, index):
    try:
        np.empty(arr_shape, dtype=np.bool_)[index]
    except IndexError as e:
        raise IndexError(f"{e} (indexing a tensor of shape {list(arr_shape)})") from None


class Index(Primitive):
    @staticmethod
    def forward(xp, x, *, index, basic, shape):
        return x[index]

    @staticmethod
    def backward(grad, *, index, basic, shape):
        return (IndexBackward.apply(grad, index=index, basic=basic, shape=shape),)


class IndexBackward(Primitive):
    """Scatter-add ``grad`` into zeros of the indexed tensor's shape (differentiable)."""

    @staticmethod
    def forward(xp, grad, *, index, basic, shape):
        out = xp.zeros(shape, dtype=grad.dtype)
        if basic:
            out[index] = grad
        else:
            xp.add.at(out, index, grad)
        return out

    @staticmethod
    def backward(grad, *, index, basic, shape):
        return (Index.apply(grad, index=index, basic=basic, shape=shape),)


def getitem(input, index):
    """``input[index]``: views for basic indices, copies for tensor/bool indices."""
    idx = _norm_index(index)
    basic = _is_basic(idx)
    shape = input._array.shape
    try:
        if _state.enabled and input._requires_grad:
            out = Index.apply(input, index=idx, basic=basic, shape=shape)
        else:
            out = primitive._make(input._array[idx])
    except IndexError as e:
        raise IndexError(f"{e} (indexing a tensor of shape {list(shape)})") from None
    if basic:
        return mark_view(out, input, lambda b: getitem(b, index))
    return out


class IndexPut(Primitive):
    """``x[index] = value`` out of place: the in-place form goes through apply_inplace."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(xp, x, value, *, index, accumulate):
        out = x.copy()
        if accumulate:
            xp.add.at(out, index, value)
        else:
            out[index] = value
        return out

    @staticmethod
    def backward(grad, *, index, accumulate):
        grad_x = grad
        if not accumulate:
            zeros = primitive._make(np.zeros((), dtype=grad._array.dtype))
            grad_x = IndexPut.apply(grad, zeros, index=index, accumulate=False)
        return grad_x, Index.apply(grad, index=index, basic=_is_basic(index),
                                   shape=grad._array.shape)


def setitem(input, index, value) -> None:
    """``input[index] = value`` in place; broadcasting ``value``; recorded for autograd."""
    idx = _norm_index(index)
    if is_tensor(value):
        v = value if value._array.dtype == input._array.dtype else value.to(input.dtype)
    else:
        v = primitive._make(np.asarray(value, dtype=input._array.dtype))
    if not (_state.enabled and (input._requires_grad or v._requires_grad)):
        try:
            input._array[idx] = v._array
        except (IndexError, ValueError) as e:
            raise type(e)(f"{e} (setting items of a tensor of shape {list(input.shape)} with "
                          f"a value of shape {list(v.shape)})") from None
        input._vc[0] += 1
        return
    _check_bounds(input._array.shape, idx)
    IndexPut.apply_inplace(input, v, index=idx, accumulate=False)


def index_put(input, indices, values, accumulate: bool = False):
    idx = _norm_index(tuple(indices))
    return IndexPut.apply(input, values, index=idx, accumulate=accumulate)


class Gather(Primitive):
    @staticmethod
    def forward(xp, x, *, dim, index, shape):
        return xp.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(grad, *, dim, index, shape):
        return (ScatterAdd.apply(_zeros(shape, grad), grad, dim=dim, index=index),)


def _zeros(shape, like):
    return primitive._make(np.zeros(shape, dtype=like._array.dtype))


class ScatterAdd(Primitive):
    @staticmethod
    def forward(xp, x, src, *, dim, index):
        out = x.copy()
        idx = _full_index(index, dim)
        xp.add.at(out, idx, src[tuple(slice(0, s) for s in index.shape)])
        return out

    @staticmethod
    def backward(grad, *, dim, index):
        return grad, Gather.apply(grad, dim=dim, index=index, shape=grad._array.shape)


class Scatter(Primitive):
    @staticmethod
    def forward(xp, x, src, *, dim, index):
        out = x.copy()
        out[_full_index(index, dim)] = src[tuple(slice(0, s) for s in index.shape)]
        return out

    @staticmethod
    def backward(grad, *, dim, index):
        zeros = _zeros(index.shape, grad)
        grad_x = Scatter.apply(grad, zeros, dim=dim, index=index)
        return grad_x, Gather.apply(grad, dim=dim, index=index, shape=grad._array.shape)


def _full_index(index, dim):
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _check_index_tensor(index, op):
    if not is_tensor(index) or index._array.dtype != np.int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index")
    return index._array


def gather(input, dim: int, index):
    """``out[i][j] = input[i][index[i][j]]`` along ``dim`` (``torch.gather``); index int64."""
    idx = _check_index_tensor(index, "gather")
    d = wrap_dim(dim, input._array.ndim, "gather")
    if idx.ndim != input._array.ndim and input._array.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if idx.size and (idx.max() >= input._array.shape[d] or idx.min() < -input._array.shape[d]):
        raise RuntimeError(
            f"index {int(idx.max())} is out of bounds for dimension {d} with size "
            f"{input._array.shape[d]}"
        )
    return Gather.apply(input, dim=d, index=idx, shape=input._array.shape)


def scatter_add(input, dim: int, index, src):
    """Add ``src`` into ``input`` at ``index`` along ``dim`` (``torch.scatter_add``)."""
    idx = _check_index_tensor(index, "scatter_add")
    d = wrap_dim(dim, input._array.ndim, "scatter_add")
    return ScatterAdd.apply(input, src, dim=d, index=idx)


def scatter(input, dim: int, index, src=None, value=None, reduce=None):
    """Write ``src`` (or a number) into ``input`` at ``index`` along ``dim`` (``torch.scatter``)."""
    if reduce is not None:
        raise NotImplementedError("glassgrad: scatter(reduce=...) is not supported; use scatter_add")
    idx = _check_index_tensor(index, "scatter")
    d = wrap_dim(dim, input._array.ndim, "scatter")
    if src is None:
        src = value
    if not is_tensor(src):
        src = primitive._make(np.full(idx.shape, src, dtype=input._array.dtype))
    return Scatter.apply(input, src, dim=d, index=idx)


def index_select(input, dim: int, index):
    """Rows of ``input`` along ``dim`` at ``index`` (1-D int tensor) (``torch.index_select``)."""
    d = wrap_dim(dim, input._array.ndim, "index_select")
    idx = index._array if is_tensor(index) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    return getitem(input, (slice(None),) * d + (idx.reshape(-1),))


def index_add(input, dim: int, index, source, *, alpha=1):
    d = wrap_dim(dim, input._array.ndim, "index_add")
    idx = (slice(None),) * d + (index._array,)
    src = source if alpha == 1 else source * alpha
    return IndexPut.apply(input, src, index=idx, accumulate=True)


def masked_fill(input, mask, value):
    """Set elements where ``mask`` is True to ``value`` (``torch.masked_fill``); mask broadcasts."""
    from .elementwise import where

    m = mask._array if is_tensor(mask) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {m.dtype}"
        )
    if is_tensor(value) and value._array.ndim:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._array.ndim} dimension(s)."
        )
    if not is_tensor(value):
        value = primitive._make(np.asarray(value, dtype=input._array.dtype))
    elif value._array.dtype != input._array.dtype:
        value = value.to(input.dtype)
    out = where(primitive._make(m), value, input)
    if out._array.shape != input._array.shape:
        raise RuntimeError(
            f"masked_fill: mask of shape {list(m.shape)} does not broadcast to the input's shape "
            f"{list(input.shape)}"
        )
    return out


def masked_select(input, mask):
    from .shape import expand

    m = mask._array
    shape = np.broadcast_shapes(input._array.shape, m.shape)
    x = expand(input, shape) if input._array.shape != shape else input
    return getitem(x, primitive._make(np.broadcast_to(m, shape)))


def take(input, index):
    from .shape import reshape

    return getitem(reshape(input, -1), index)


def nonzero(input, *, as_tuple: bool = False):
    nz = np.nonzero(input._array)
    if as_tuple:
        return tuple(primitive._make(a.astype(np.int64)) for a in nz)
    return primitive._make(np.stack(nz, axis=1).astype(np.int64) if nz else
                           np.zeros((0, 0), np.int64))


def select(input, dim: int, index: int):
    d = wrap_dim(dim, input._array.ndim, "select")
    return getitem(input, (slice(None),) * d + (index,))
