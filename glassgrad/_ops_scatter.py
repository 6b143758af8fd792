"""Scatter and put functions (issue 15, lane ops): diagonal_scatter, select_scatter,
slice_scatter (a copy of the input with ``src`` written into one view of it), scatter_reduce,
index_reduce (scatter_reduce with the index spread along the dim) and put."""

from __future__ import annotations


import numpy as np

from ._ops_vmap import loops_under_vmap
from .ops import shape as sh
from .ops._util import wrap_dim
from .ops.diagonal import diagonal
from .ops.fill import clone
from .ops.gather import _check_scatter_index, _index_array, _same_dtype
from .ops.indexing import getitem, index_put, select
from .ops.primitive import _make
from .ops.scatter_reduce import ScatterReduce
from ._user_warning import warn_user

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_BETA_WARNED: list = []


def _write_view(input, src, view_of):
    out = clone(input)
    view = view_of(out)
    if tuple(view._array.shape) != tuple(src._array.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._array.shape)}, slice size = {list(view._array.shape)}")
    view.copy_(src)
    return out


def diagonal_scatter(input, src, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """A copy of ``input`` with ``src`` on its (offset, dim1, dim2) diagonal
    (``torch.diagonal_scatter``); RuntimeError when ``src`` is not the diagonal's shape."""
    return _write_view(input, src, lambda t: diagonal(t, offset, dim1, dim2))


def select_scatter(input, src, dim: int, index: int):
    """A copy of ``input`` with ``src`` written at ``index`` of ``dim``
    (``torch.select_scatter``)."""
    return _write_view(input, src, lambda t: select(t, dim, index))


def slice_scatter(input, src, dim: int = 0, start=None, end=None, step: int = 1):
    """A copy of ``input`` with ``src`` written into ``[start:end:step]`` of ``dim``
    (``torch.slice_scatter``)."""
    def view(t):
        d = wrap_dim(dim, t._array.ndim, "slice_scatter")
        return getitem(t, (slice(None),) * d + (slice(start, end, step),))

    return _write_view(input, src, view)


@loops_under_vmap
def scatter_reduce(input, dim: int, index, src, reduce: str, *, include_self: bool = True):
    """Reduce ``src`` into a copy of ``input`` at ``index`` along ``dim`` with ``reduce`` (sum,
    prod, mean, amax, amin), counting input's own value unless ``include_self=False``
    (``torch.scatter_reduce``); integer mean rounds down. Differentiable as PyTorch's."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    idx = _index_array(index, "scatter_reduce")
    d = wrap_dim(dim, input._array.ndim, "scatter_reduce")
    _check_scatter_index(input, d, idx, "scatter_reduce", src)
    _same_dtype(input, src)
    return ScatterReduce.apply(input, src, dim=d, index=idx, reduce=reduce,
                               include_self=include_self)


@loops_under_vmap
def index_reduce(input, dim: int, index, source, reduce: str, *, include_self: bool = True):
    """Reduce the slices of ``source`` into a copy of ``input`` at the positions ``index`` gives
    along ``dim`` (``torch.index_reduce``, beta in PyTorch: its UserWarning); ``reduce`` prod,
    mean, amax or amin."""
    if not _BETA_WARNED:  # NOTE: once per process, as PyTorch's TORCH_WARN_ONCE
        _BETA_WARNED.append(True)
        warn_user("index_reduce() is in beta and the API may change at any time.",
                  UserWarning, stacklevel=3)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    nd = max(input._array.ndim, 1)
    d = wrap_dim(dim, nd, "index_reduce")
    idx = _index_array(index, "index_reduce_", "int32 or int64").reshape(-1)
    n = source._array.shape[d] if source._array.ndim else 1
    if idx.size != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n}), for dim: {d}")
    self_shape, src_shape = list(input._array.shape), list(source._array.shape)
    if len(self_shape) != len(src_shape) or any(
            a != b for k, (a, b) in enumerate(zip(self_shape, src_shape)) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {self_shape} source.shape = "
                           f"{src_shape}")
    size = self_shape[d] if self_shape else 1
    bad = idx[(idx >= size) | (idx < 0)]  # NOTE: PyTorch takes no negative index here
    if bad.size:
        raise IndexError(f"index out of range in self\nglassgrad: index_reduce index "
                         f"{int(bad[0])} for dim {d} of size {size}.")
    shape = [1] * nd
    shape[d] = -1
    spread = np.broadcast_to(idx.reshape(shape), source._array.shape if source._array.ndim
                             else (1,))
    return scatter_reduce(input, d, _make(np.ascontiguousarray(spread)), source, reduce,
                          include_self=include_self)


@loops_under_vmap
def put(input, index, source, accumulate: bool = False):
    """A copy of ``input`` with ``source`` written (or added, ``accumulate``) at the flat
    positions ``index`` (``torch.put``); negative positions count from the end."""
    n = input._array.size
    idx = _index_array(index, "put", "int64").reshape(-1)
    if idx.size != source._array.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._array.size}, "
                         f"index.numel() = {idx.size}")
    bad = idx[(idx >= n) | (idx < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of "
                         f"{n} elements.")
    flat = sh.reshape(input, (-1,))
    out = index_put(flat, (_make(idx),), sh.reshape(source, (-1,)), accumulate)
    return sh.reshape(out, input._array.shape)
