"""``torch.sparse.softmax`` / ``torch.sparse.log_softmax``: softmax over the specified entries of
a sparse COO tensor, the unspecified ones read as -inf (so they stay unspecified). Composed from
differentiable ops on the values (``index_add``, ``index_select``), so gradients and higher
orders reach them."""

from __future__ import annotations

import numpy as np

from .. import _factories, dtypes
from ..ops._names import scalar_type
from ..ops.gather import index_select
from ..tensor import Tensor
from ._coo import SparseCOOTensor

__all__ = ["log_softmax", "softmax"]


def _check(name: str, input, dim: int) -> int:
    if not getattr(input, "_sparse", False):
        raise RuntimeError(
            f"glassgrad: torch.sparse.{name} expects a sparse COO tensor, got a dense one; use "
            f"torch.{name} for dense tensors or x.to_sparse() first.")
    if type(input) is not SparseCOOTensor:
        raise NotImplementedError(
            f"Could not run 'aten::_sparse_{name}' with arguments from the 'SparseCsrCPU' "
            f"backend.\nglassgrad: convert the CSR tensor with .to_sparse() first.")
    ndim = input.dim()
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def _groups(sp: SparseCOOTensor, dim: int) -> tuple[np.ndarray, int]:
    """For sparse ``dim``: each entry's group (the entries agreeing on every other sparse
    index) and the number of groups."""
    idx = sp._indices_t._array
    others = [d for d in range(idx.shape[0]) if d != dim]
    if not others:
        return np.zeros(idx.shape[1], np.int64), 1
    shape = tuple(sp.shape[d] for d in others)
    linear = np.ravel_multi_index(tuple(idx[others]), shape)
    unique, group = np.unique(linear, return_inverse=True)
    return group.reshape(-1).astype(np.int64), len(unique)


def _shifted_and_log_total(sp: SparseCOOTensor, dim: int) -> tuple[Tensor, Tensor]:
    """(values minus their group's max, log of the group's sum of exps) per entry."""
    values = sp._values_t
    group, count = _groups(sp, dim)
    # NOTE: the max is a constant shift (softmax does not depend on it), so it carries no grad
    top = np.full((count, *values.shape[1:]), -np.inf, values._array.dtype)
    np.maximum.at(top, group, values._array)
    top[~np.isfinite(top)] = 0
    where = Tensor._make(group)
    shifted = values - Tensor._make(top[group])
    total = _factories.zeros(count, *values.shape[1:], dtype=values.dtype).index_add(
        0, where, shifted.exp())
    return shifted, index_select(total, 0, where).log()


def _apply(name: str, input, dim: int, dtype, log: bool) -> SparseCOOTensor:
    dim = _check(name, input, dim)
    sp = input.coalesce()
    if dtype is not None:
        sp = sp.to(dtype)
    if sp.dtype not in (dtypes.float32, dtypes.float64):  # torch's CPU kernels: these two only
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_type(sp.dtype)}\'')
    values = sp._values_t
    if sp._nnz() == 0:
        return sp._with_values(values * 1)
    if dim >= sp.sparse_dim():  # a dense dim: an ordinary softmax inside each entry's values
        d = dim - sp.sparse_dim() + 1
        out = values.log_softmax(d) if log else values.softmax(d)
    else:
        shifted, log_total = _shifted_and_log_total(sp, dim)
        out = shifted - log_total if log else (shifted - log_total).exp()
    return sp._with_values(out, coalesced=True)


def softmax(input, dim: int, *, dtype=None) -> SparseCOOTensor:
    """Softmax along ``dim`` over the specified entries of a sparse COO tensor
    (``torch.sparse.softmax``); unspecified entries count as -inf and stay unspecified. The
    result is coalesced, with the input's (coalesced) pattern. ``dtype`` casts the values first.
    Differentiable in the values; IndexError for a ``dim`` out of range, NotImplementedError for
    CSR (as torch's CPU build).

    Example::

        >>> a = glassgrad.sparse_coo_tensor([[0, 0, 1], [0, 2, 1]], [1.0, 1.0, 5.0], (2, 3))
        >>> glassgrad.sparse.softmax(a, 1).to_dense()
        tensor([[0.5000, 0.0000, 0.5000], [0.0000, 1.0000, 0.0000]])
    """
    return _apply("softmax", input, dim, dtype, log=False)


def log_softmax(input, dim: int, *, dtype=None) -> SparseCOOTensor:
    """Log-softmax along ``dim`` over the specified entries (``torch.sparse.log_softmax``); see
    ``softmax``. Unspecified entries stay unspecified (torch's convention, not -inf)."""
    return _apply("log_softmax", input, dim, dtype, log=True)
