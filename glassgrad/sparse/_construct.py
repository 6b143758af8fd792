"""Building sparse COO tensors and converting them: ``sparse_coo_tensor``, ``dense.to_sparse()``,
``to_dense()``, ``coalesce()``. Values move through differentiable glassgrad ops (indexing,
``index_put``, ``index_add``), so gradients reach the dense tensor or the values they came from."""

from __future__ import annotations

import numpy as np

from .. import _factories, _layout
from ..backend import device as _device
from ..ops.gather import index_select
from ..tensor import Tensor
from ._coo import SparseCOOTensor

__all__ = ["sparse_coo_tensor"]


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad: bool = False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values[i]`` at ``indices[:, i]`` (``torch.sparse_coo_tensor``).

    ``indices``: ``(sparse_dim, nnz)`` integers (Tensor, array or nested list); ``values``:
    ``(nnz, *dense_shape)``; ``size`` defaults to the smallest that holds the indices. Duplicate
    indices are kept until ``coalesce()``. NOTE: PyTorch checks indices against ``size`` only
    under ``check_invariants=True``; glassgrad always checks (RuntimeError with PyTorch's
    message), since an out-of-range index would otherwise compute on memory it does not own.
    Raises RuntimeError when the shapes of indices, values and size disagree.

    Example::

        >>> glassgrad.sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3)).to_dense()
        tensor([[0., 0., 3.], [4., 0., 0.]])
    """
    if device is not None:
        _device(device)
    idx = indices._array if isinstance(indices, Tensor) else np.asarray(indices)
    if not isinstance(values, Tensor):
        values = _factories.tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    sparse_dim, nnz = idx.shape
    if values.dim() == 0 or values.shape[0] != nnz:
        got = values.shape[0] if values.dim() else 0
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
            f"values: {got}")
    dense_dim = values.dim() - 1
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    if size is None:
        size = (tuple(int(m) + 1 for m in idx.max(1)) if nnz else (0,) * sparse_dim)
        size += tuple(values.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(
            f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
            f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    if tuple(values.shape[1:]) != size[sparse_dim:]:
        raise RuntimeError(
            f"values has incorrect size, expected {[nnz, *size[sparse_dim:]]}, got "
            f"{list(values.shape)}")
    if nnz:
        low, high = idx.min(1), idx.max(1)
        for d in range(sparse_dim):
            if low[d] < 0:
                raise RuntimeError(f"found negative index {low[d]} for dim {d}")
            if high[d] >= size[d]:
                raise RuntimeError(
                    f"size is inconsistent with indices: for dim {d}, size is {size[d]} but "
                    f"found index {high[d]}")
    if requires_grad:
        values = values.detach().requires_grad_()
    elif not values._requires_grad:
        values = values.detach()  # NOTE: an alias, so x.requires_grad_() leaves the caller's alone
    coalesced = nnz <= 1 if is_coalesced is None else bool(is_coalesced)
    out = SparseCOOTensor._build(idx, values, size, coalesced)
    out._leaf = bool(requires_grad)
    return out


def check_to_sparse_layout(layout) -> None:
    if layout not in (None, _layout.sparse_coo, _layout.sparse_csr):
        raise NotImplementedError(
            f"glassgrad: to_sparse(layout={layout}) is not available; only layout="
            "glassgrad.sparse_coo (the default) and glassgrad.sparse_csr are implemented.")


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The dense tensor's nonzero entries as a coalesced sparse COO tensor
    (``torch.Tensor.to_sparse``); with ``sparse_dim`` < ``ndim`` the trailing dims stay dense
    (an index is kept when any of its values is nonzero). Differentiable."""
    check_to_sparse_layout(layout)
    if layout is _layout.sparse_csr:
        return self.to_sparse_csr()
    if isinstance(self, SparseCOOTensor):
        return self
    ndim = self.dim()
    if dense_dim is not None:
        sparse_dim = ndim - dense_dim
    sparse_dim = ndim if sparse_dim is None else sparse_dim
    if not 0 <= sparse_dim <= ndim:
        raise RuntimeError(
            f"dense_to_sparse: sparse_dim argument must be in [0,{ndim}] range, but "
            f"{sparse_dim} is given")
    if ndim == 0 or sparse_dim == 0:
        raise NotImplementedError(
            "glassgrad: to_sparse() of a 0-d tensor or with sparse_dim=0 is not implemented; "
            "give at least one sparse dim.")
    nonzero = self._array != 0
    if sparse_dim < ndim:
        nonzero = nonzero.any(axis=tuple(range(sparse_dim, ndim)))
    idx = np.stack(np.nonzero(nonzero)).astype(np.int64)  # NOTE: C order, so coalesced
    values = self[tuple(Tensor._make(row) for row in idx)]
    return SparseCOOTensor._build(idx, values, tuple(self.shape), True)


def to_dense(sp: SparseCOOTensor) -> Tensor:
    """``sp``'s dense tensor; duplicates summed (``index_put(accumulate=True)``)."""
    out = _factories.zeros(*sp.shape, dtype=sp.dtype)
    if sp._nnz() == 0:
        return out
    where = tuple(Tensor._make(row) for row in sp._indices_t._array)
    return out.index_put(where, sp._values_t, accumulate=True)


def coalesced(sp: SparseCOOTensor) -> SparseCOOTensor:
    """``sp`` with its entries sorted by index and duplicates summed in their original order."""
    idx, values = sp._indices_t._array, sp._values_t
    shape = tuple(sp.shape[: idx.shape[0]])
    if idx.shape[1] == 0:
        return SparseCOOTensor._build(idx, values, tuple(sp.shape), True)
    linear = np.ravel_multi_index(tuple(idx), shape)
    unique, inverse = np.unique(linear, return_inverse=True)
    new_idx = np.stack(np.unravel_index(unique, shape)).astype(np.int64)
    if len(unique) == len(linear):  # no duplicates: a permutation
        order = Tensor._make(np.argsort(linear, kind="stable"))
        new_values = index_select(values, 0, order)
    else:
        zeros = _factories.zeros(len(unique), *values.shape[1:], dtype=values.dtype)
        new_values = zeros.index_add(0, Tensor._make(inverse.reshape(-1)), values)
    return SparseCOOTensor._build(new_idx, new_values, tuple(sp.shape), True)
