"""torch's sparse-result products (issue 15, lane surface): ``sspaddmm``/``saddmm``
(``beta * input + alpha * mat1 @ mat2`` as a sparse COO tensor), ``smm``, ``hspmm``/``hsmm`` (a
hybrid COO result: one sparse dim, dense rows) and ``dsmm`` (a dense result, ``mm``); and the
sparse accessors of dense tensors (``x.indices()`` raises torch's layout error, ``dense_dim()``
is the tensor's dims).

The entries come in torch's order: ``input``'s, then each row of ``mat1`` that has an entry (in
sorted order) times every column of ``mat2``; the result is uncoalesced unless it has at most one entry, as torch's. torch
defines no derivative for these products (its nodes are "NotImplemented"), so the results do not
require grad; ``dsmm`` is ``mm`` and differentiable.
"""

from __future__ import annotations

import numpy as np

from ..ops._names import scalar_type
from ..tensor import Tensor
from ._coo import SparseCOOTensor
from ._ops import mm

__all__ = ["dsmm", "hsmm", "hspmm", "saddmm", "smm", "sspaddmm"]

_LAYOUT = {"indices": "sparse coordinate tensor", "values": "sparse tensor",
           "coalesce": "sparse coordinate tensor", "is_coalesced": "sparse coordinate tensor"}


def _check(op, mat1, mat2):
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type(mat1.dtype)} but found "
                           f"{scalar_type(mat2.dtype)}")
    if mat1.sparse_dim() != 2 or mat1.dense_dim() != 0 or mat2.dim() != 2:
        raise RuntimeError(f"{op}: expected a 2-D sparse matrix and a 2-D dense matrix, got "
                           f"{mat1.sparse_dim()} sparse + {mat1.dense_dim()} dense dims and a "
                           f"{mat2.dim()}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"{op}: Argument #3: Expected dim 0 size {mat1.shape[1]}, got "
                           f"{mat2.shape[0]}")


def _rows_product(mat1, mat2):
    """(rows of mat1 holding an entry, sorted; those rows of mat1 @ mat2) as arrays."""
    from scipy import sparse as sp

    idx = mat1._indices_t._array
    values = mat1._values_t._array
    rows = np.unique(idx[0])
    a = sp.csr_matrix((values, (idx[0], idx[1])), shape=tuple(mat1.shape))
    product = np.asarray(a[rows] @ mat2._array, dtype=values.dtype).reshape(
        len(rows), mat2.shape[1])
    return rows.astype(np.int64), product


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1) -> SparseCOOTensor:
    """``beta * input + alpha * (mat1 @ mat2)`` as an uncoalesced sparse COO tensor, ``input`` and
    ``mat1`` sparse, ``mat2`` dense (``torch.sspaddmm``). RuntimeError with torch's wording for a
    dense ``input``/``mat1``, other dtypes or sizes."""
    if not getattr(mat1, "_sparse", False) or not getattr(input, "_sparse", False):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors\n"
                           "glassgrad: input and mat1 must be sparse COO; convert with "
                           ".to_sparse().")
    _check("sspaddmm", mat1, mat2)
    n, k = mat1.shape[0], mat2.shape[1]
    for d, want in enumerate((n, k)):
        if input.shape[d] != want:
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim {d} size {want}, got "
                               f"{input.shape[d]}")
    if input.dtype != mat1.dtype:
        raise RuntimeError(f"dtype of values ({scalar_type(mat1.dtype)}) must match dtype of "
                           f"sparse tensor ({scalar_type(input.dtype)})")
    rows, product = _rows_product(mat1, mat2)
    cols = np.arange(k, dtype=np.int64)
    new_idx = np.stack([np.repeat(rows, k), np.tile(cols, len(rows))])
    dt = input._values_t._array.dtype
    values = np.concatenate([beta * input._values_t._array,
                             (alpha * product).reshape(-1)]).astype(dt, copy=False)
    indices = np.concatenate([input._indices_t._array, new_idx], axis=1)
    # NOTE: torch marks a result of at most one entry coalesced
    return SparseCOOTensor._build(indices, Tensor._make(values), (n, k), indices.shape[1] < 2)


def saddmm(input, mat1, mat2, *, beta=1, alpha=1) -> SparseCOOTensor:
    """``sspaddmm`` under its older name (``torch.saddmm``)."""
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha)


def smm(input, mat) -> SparseCOOTensor:
    """``input @ mat`` (sparse times dense) as an uncoalesced sparse COO tensor (``torch.smm``)."""
    if not getattr(input, "_sparse", False):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors\n"
                           "glassgrad: smm's input must be sparse COO; use mm for dense ones.")
    _check("sspaddmm", input, mat)
    empty = SparseCOOTensor._build(np.zeros((2, 0), np.int64),
                                   Tensor._make(np.zeros(0, input._values_t._array.dtype)),
                                   (input.shape[0], mat.shape[1]), True)
    return sspaddmm(empty, input, mat, beta=0, alpha=1)


def hspmm(mat1, mat2) -> SparseCOOTensor:
    """``mat1 @ mat2`` as a hybrid COO tensor: one sparse dim (the rows of ``mat1`` holding an
    entry) and dense rows of length ``mat2.shape[1]`` (``torch.hspmm``)."""
    if not getattr(mat1, "_sparse", False):
        raise NotImplementedError(
            "Could not run 'aten::hspmm' with arguments from the 'CPU' backend.\nglassgrad: "
            "mat1 must be a sparse COO tensor (dense @ dense is mm).")
    _check("hspmm", mat1, mat2)
    rows, product = _rows_product(mat1, mat2)
    return SparseCOOTensor._build(rows.reshape(1, -1), Tensor._make(product),
                                  (mat1.shape[0], mat2.shape[1]), len(rows) < 2)


def hsmm(mat1, mat2) -> SparseCOOTensor:
    """``hspmm`` under its older name (``torch.hsmm``)."""
    return hspmm(mat1, mat2)


def dsmm(input, mat2) -> Tensor:
    """``input @ mat2`` as a dense tensor, differentiable (``torch.dsmm``, which is ``mm``)."""
    return mm(input, mat2)


def _strided_error(name):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {_LAYOUT[name]} layout but got Strided\nglassgrad: "
                           "this tensor is dense; x.to_sparse() gives its COO form.")

    method.__name__ = name
    method.__doc__ = f"Sparse tensors only (``torch.Tensor.{name}``): RuntimeError on a dense one."
    return method


for _name in _LAYOUT:
    setattr(Tensor, _name, _strided_error(_name))
Tensor.dense_dim = lambda self: self._array.ndim  # a dense tensor's dims are all dense
Tensor.smm = smm
Tensor.sspaddmm = lambda self, mat1, mat2, *, beta=1, alpha=1: sspaddmm(
    self, mat1, mat2, beta=beta, alpha=alpha)
