"""The ops that take sparse COO operands: products with a dense matrix (``torch.mm``,
``torch.spmm``, ``torch.sparse.mm``, ``matmul``, ``@``), addition, scaling by a number and sums.
They are bound as ``SparseCOOTensor`` methods at the end (NOTE [Sparse operands] in _coo.py)."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _layout, dtypes
from ..ops._names import scalar_type
from ..ops.gather import index_select
from ..ops.shape import cat
from ..ops.sparse_mm import SparseMM, SparseMMFull
from ..tensor import Tensor
from ._coo import SparseCOOTensor, SparseLayoutError

__all__ = ["addmm", "mm", "spmm", "sum"]


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` where one is a 2-D sparse tensor and the other a dense matrix
    (``torch.sparse.mm``); the result is dense. Gradients reach the dense operand and the sparse
    values; a sparse leaf's ``.grad`` is sparse, on its pattern (NOTE [Sparse gradient layouts]).
    RuntimeError for different dtypes or inner sizes (PyTorch's text)."""
    return _matmul(mat1, mat2, vector_ok=False, dense_grad=False)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` with a sparse ``input`` (``torch.spmm``, as ``torch.mm``): like
    ``sparse.mm``, but a sparse leaf's ``.grad`` is the full dense gradient, as torch's."""
    return _matmul(input, mat2, vector_ok=False, dense_grad=True)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` (``torch.sparse.addmm``):
    dense, and a sparse leaf's ``.grad`` sparse as with ``sparse.mm``."""
    product = mm(mat1, mat2)
    return (product if alpha == 1 else alpha * product) + (input if beta == 1 else beta * input)


# NOTE [Sparse gradient layouts]: torch gives a sparse leaf (a sparse tensor made with
# requires_grad=True or .requires_grad_()) the gradient of the whole matrix, dense, when it goes
# through torch.mm/spmm/matmul/@/addmm/mv, and a sparse gradient on its pattern through
# torch.sparse.mm/addmm, to_dense, sums, softmax, * and /. glassgrad routes the dense kind into a
# zero-cost dense stand-in of the leaf (``_dense_grad_sink``, ops/sparse_mm.py's SparseMMFull)
# and the sparse kind into its values; ``.grad`` adds them as torch's AccumulateGrad does (dense
# + sparse = dense). torch passes that dense gradient back through * and / by a number, neg,
# sparse + sparse, transpose and coalesce, so a tensor made from leaves by those ops carries a
# dense shadow of theirs (``_derive_sink``), and dense + sparse sends the gradient there too.
# A sparse tensor built from values that require grad is not a leaf: every
# path reaches the values, as torch's SparseCooTensorWithDimsAndTensorsBackward0 masks them.
def _matmul(a: Tensor, b: Tensor, vector_ok: bool, dense_grad: bool = True) -> Tensor:
    if a._sparse and b._sparse:
        raise NotImplementedError(
            "Could not run 'aten::mm' with two sparse COO operands on the 'SparseCPU' backend.\n"
            f"glassgrad: sparse @ sparse ({list(a.shape)} @ {list(b.shape)}, layout="
            "glassgrad.sparse_coo) is not implemented; convert one with .to_dense().")
    sparse, dense = (a, b) if a._sparse else (b, a)
    if not vector_ok and 1 in (sparse.dim(), dense.dim()):  # torch reads dim 1 / -2 of each
        one = sparse if sparse.dim() == 1 else dense
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{-2 if one is sparse else 1})")
    if sparse.sparse_dim() != 2 or sparse.dense_dim() != 0:
        raise RuntimeError(
            f"glassgrad: a sparse operand of mm must be a 2-D matrix with scalar values, got "
            f"{sparse.sparse_dim()} sparse and {sparse.dense_dim()} dense dimensions")
    if sparse.dtype != dense.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type(sparse.dtype)} but found "
            f"{scalar_type(dense.dtype)}")
    vector = vector_ok and dense.dim() == 1 and sparse is a
    if vector:
        dense = dense.unsqueeze(1)
    if dense.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {dense.dim()}-D tensor")
    idx, size = sparse._indices_t._array, tuple(sparse.shape)
    if sparse is b:  # dense @ sparse = (sparse^T @ dense^T)^T
        idx, size, dense = np.ascontiguousarray(idx[::-1]), size[::-1], dense.t()
    if size[1] != dense.shape[0]:
        raise RuntimeError(
            f"addmm: Argument #3 (dense): Expected dim 0 size {size[1]}, got {dense.shape[0]}")
    sink = sparse._dense_grad_sink() if dense_grad else None
    if sink is not None:
        if sparse is b:
            sink = sink.t()
        out = SparseMMFull.apply(sink, dense, values=sparse._values_t._array, indices=idx,
                                 size=size)
    else:
        out = SparseMM.apply(sparse._values_t, dense, indices=idx, size=size)
    if sparse is b:
        return out.t()
    return out.squeeze(1) if vector else out


def _add(self: SparseCOOTensor, other) -> SparseCOOTensor:
    """``sparse + sparse``: coalesced. NOTE: PyTorch's sum of uncoalesced operands can stay
    uncoalesced, with its own arrangement of entries; the dense value is the same."""
    if not isinstance(other, SparseCOOTensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if self.shape != other.shape:
        raise RuntimeError(
            f"add: expected sizes of 'self' and 'other' to match, but {list(self.shape)} != "
            f"{list(other.shape)}")
    common = dtypes.promote_types(self.dtype, other.dtype)
    values = cat([self._values_t.to(common), other._values_t.to(common)], 0)
    idx = np.concatenate([self._indices_t._array, other._indices_t._array], 1)
    out = SparseCOOTensor._build(idx, values, tuple(self.shape), False).coalesce()
    thunks = [sp._sink_thunk() for sp in (self, other)]
    if all(s is not None or not sp.requires_grad for s, sp in zip(thunks, (self, other))) and (
            thunks[0] is not None or thunks[1] is not None):  # NOTE [Sparse gradient layouts]
        thunks = [s for s in thunks if s is not None]
        out._sink = lambda: (thunks[0]().to(common) if len(thunks) == 1
                             else thunks[0]().to(common) + thunks[1]().to(common))
    return out


def _radd(self: SparseCOOTensor, other) -> Tensor:
    """``dense + sparse``: the dense result (Python calls this before Tensor.__add__)."""
    if not isinstance(other, Tensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if other.shape != self.shape:
        raise RuntimeError(
            f"add: expected 'self' and 'other' to have same size, but self has size "
            f"{list(other.shape)} while other has size {list(self.shape)} (FYI: dense-sparse "
            "addition does not currently support broadcasting)")
    sink = self._dense_grad_sink()
    if sink is not None:  # the whole gradient, dense (NOTE [Sparse gradient layouts])
        return other + (self.detach().to_dense() + sink)
    return other + self.to_dense()


def _linear(self: SparseCOOTensor, other) -> bool:
    """Whether ``self * other`` / ``self / other`` is linear in self alone (``other`` a number or
    a 0-d tensor that needs no gradient), so the dense shadow may follow."""
    return not (isinstance(other, Tensor) and other._requires_grad)


def _mul(self: SparseCOOTensor, other) -> SparseCOOTensor:
    if isinstance(other, numbers.Number) or (
            isinstance(other, Tensor) and not other._sparse and other.dim() == 0):
        out = self._with_values(self._values_t * other)
        return self._derive_sink(out, lambda sink: sink * other) if _linear(self, other) else out
    if isinstance(other, SparseCOOTensor):
        return _mul_sparse(self, other)
    if isinstance(other, Tensor) and not other._sparse:
        return _mul_dense(self, other)
    raise TypeError(f"mul(): argument 'other' must be Tensor or Number, not "
                    f"{type(other).__name__}")


def _mul_dense(self: SparseCOOTensor, other: Tensor) -> SparseCOOTensor:
    """``sparse * dense`` (either order), ``dense`` broadcast to the sparse shape: sparse, each
    entry times the dense element at its index (duplicates kept, as torch's). NOTE: the dense
    operand's gradient is dense here (torch's is sparse, with the same values)."""
    shape = tuple(self.shape)
    if np.broadcast_shapes(tuple(other.shape), shape) != shape:
        raise NotImplementedError(
            f"glassgrad: sparse {list(shape)} * dense {list(other.shape)} broadcasts the sparse "
            "tensor, which is not implemented; give the dense one the sparse shape or fewer dims.")
    common = dtypes.promote_types(self.dtype, other.dtype)
    dense = other.to(common).expand(*shape)
    picked = dense[tuple(Tensor._make(row) for row in self._indices_t._array)]
    return self._with_values(self._values_t.to(common) * picked)


def _mul_sparse(self: SparseCOOTensor, other: SparseCOOTensor) -> SparseCOOTensor:
    """``sparse * sparse``: the entries both specify (coalesced first), multiplied."""
    if self.shape != other.shape:
        raise RuntimeError(f"mul: expected 'self' and 'other' to have same sizes, but "
                           f"{list(self.shape)} != {list(other.shape)}")
    a, b = self.coalesce(), other.coalesce()
    common = dtypes.promote_types(a.dtype, b.dtype)
    shape = tuple(self.shape[: a.sparse_dim()])
    keys = [np.ravel_multi_index(tuple(sp._indices_t._array), shape) for sp in (a, b)]
    _, in_a, in_b = np.intersect1d(keys[0], keys[1], assume_unique=True, return_indices=True)
    values = (index_select(a._values_t.to(common), 0, Tensor._make(in_a))
              * index_select(b._values_t.to(common), 0, Tensor._make(in_b)))
    return SparseCOOTensor._build(np.ascontiguousarray(a._indices_t._array[:, in_a]), values,
                                  tuple(self.shape), True)


def _div(self: SparseCOOTensor, other, *, rounding_mode=None) -> SparseCOOTensor:
    """``sparse / number`` (or a 0-d dense tensor), as ``torch.div``: true division keeps the
    entries as they are (duplicates too); ``rounding_mode`` 'floor'/'trunc' coalesces first,
    since rounding does not distribute over a sum. RuntimeError (torch's) for other divisors."""
    if isinstance(other, Tensor) and (other._sparse or other.dim() != 0):
        raise RuntimeError(
            "Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
            f"{list(other.shape)} for divisor)")
    if not isinstance(other, (numbers.Number, Tensor)):
        raise TypeError(f"div(): argument 'other' must be Tensor or Number, not "
                        f"{type(other).__name__}")
    if rounding_mode is None:
        out = self._with_values(self._values_t / other)
        return self._derive_sink(out, lambda sink: sink / other) if _linear(self, other) else out
    sp = self.coalesce()
    return sp._with_values(sp._values_t.div(other, rounding_mode=rounding_mode))


def _transpose(self: SparseCOOTensor, dim0: int, dim1: int) -> SparseCOOTensor:
    """Two sparse dims swapped (``torch.Tensor.transpose``); the entries keep their order, so
    the result is uncoalesced (as torch's). RuntimeError (torch's) for a dense dim."""
    ndim, sparse_dim = self.dim(), self.sparse_dim()
    for d in (dim0, dim1):
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
    dim0, dim1 = dim0 % ndim, dim1 % ndim
    if dim0 == dim1:
        return self
    if dim0 >= sparse_dim or dim1 >= sparse_dim:
        raise RuntimeError(
            f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: "
            f"{sparse_dim}, d0: {dim0}, d1: {dim1}")
    order = list(range(ndim))
    order[dim0], order[dim1] = dim1, dim0
    idx = self._indices_t._array[order[:sparse_dim]]
    shape = tuple(self.shape[d] for d in order)
    return self._derive_sink(
        SparseCOOTensor._build(np.ascontiguousarray(idx), self._values_t, shape, False),
        lambda sink: sink.transpose(dim0, dim1))


def sum(input: SparseCOOTensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of a sparse tensor (``torch.sparse.sum``, ``torch.sum``): over everything, a dense
    0-d tensor; over some dims, a sparse tensor of the others (dense when only dense dims
    remain). Differentiable in the values."""
    if input._sparse and input.layout is not _layout.sparse_coo:
        input.coalesce()  # torch's RuntimeError for CSR ("coalesce expected sparse coordinate")
    if input._values_t.dtype is dtypes.bool:  # NOTE: torch sums the coalesced (OR-ed) entries
        input = input.coalesce()
    values = input._values_t if dtype is None else input._values_t.to(dtype)
    if dim is None:
        return values.sum()
    ndim, sparse_dim = input.dim(), input.sparse_dim()
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        if d % ndim in dims:
            raise RuntimeError(f"dim {d % ndim} appears multiple times in the list of dims")
        dims.append(d % ndim)
    dims.sort()
    dense_dims = [d - sparse_dim + 1 for d in dims if d >= sparse_dim]
    if dense_dims:
        values = values.sum(dense_dims, keepdim=keepdim)
    kept = [d for d in range(sparse_dim) if d not in dims]
    shape = [1 if d in dims else n for d, n in enumerate(input.shape)] if keepdim else [
        n for d, n in enumerate(input.shape) if d not in dims]
    if not kept and not keepdim:
        return values.sum(0)
    idx = input._indices_t._array
    idx = idx * np.isin(np.arange(sparse_dim), kept)[:, None] if keepdim else idx[kept]
    out = SparseCOOTensor._build(np.ascontiguousarray(idx), values, tuple(shape), False)
    out = out.coalesce()
    out._coalesced = not keepdim  # NOTE: PyTorch marks a keepdim sum uncoalesced
    return out


def _method_sum(self, dim=None, keepdim=False, dtype=None):
    return sum(self, dim, keepdim, dtype=dtype)


SparseCOOTensor.mm = spmm
SparseCOOTensor.matmul = lambda self, other: _matmul(self, other, vector_ok=True)
SparseCOOTensor.__matmul__ = SparseCOOTensor.matmul
SparseCOOTensor.__rmatmul__ = lambda self, other: _matmul(other, self, vector_ok=True)
SparseCOOTensor._sparse_matmul = staticmethod(_matmul)
SparseCOOTensor.__add__ = _add
SparseCOOTensor.add = _add
SparseCOOTensor.__radd__ = _radd
SparseCOOTensor.__mul__ = SparseCOOTensor.__rmul__ = SparseCOOTensor.mul = _mul
SparseCOOTensor.__neg__ = lambda self: self._derive_sink(
    self._with_values(-self._values_t), lambda sink: -sink)
SparseCOOTensor.sum = _method_sum
SparseCOOTensor.__truediv__ = SparseCOOTensor.div = SparseCOOTensor.divide = _div
SparseCOOTensor.__floordiv__ = lambda self, other: _div(self, other, rounding_mode="floor")
SparseCOOTensor.transpose = SparseCOOTensor.swapaxes = SparseCOOTensor.swapdims = _transpose
SparseCOOTensor.T = property(lambda self: self.t())
SparseCOOTensor.mT = property(lambda self: _transpose(self, -2, -1))


def _type(self, dtype=None, non_blocking: bool = False, **kwargs):
    """``x.type()``: torch's name of a sparse tensor type ('torch.sparse.FloatTensor'); with a
    dtype or a type name, the tensor converted (``torch.Tensor.type``)."""
    if dtype is None:
        return Tensor.type(self).replace("torch.", "torch.sparse.", 1)
    if isinstance(dtype, str):
        dtype = Tensor._make(np.zeros(0)).type(dtype).dtype
    return self.to(dtype)


SparseCOOTensor.type = _type
for _name, _dtype in (("half", "float16"), ("bfloat16", "bfloat16"), ("int", "int32"),
                      ("short", "int16"), ("char", "int8"), ("byte", "uint8"), ("bool", "bool")):
    setattr(SparseCOOTensor, _name, (lambda dt: lambda self, memory_format=None: self.to(
        getattr(dtypes, dt)))(_dtype))
