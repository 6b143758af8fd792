"""``SparseCSRTensor``: compressed sparse rows (``layout=torch.sparse_csr``), 2-D with scalar
values, as torch's CPU build supports them: ``sparse_csr_tensor``, ``to_sparse_csr()``,
``crow_indices()``, ``col_indices()``, ``values()``, ``to_dense()``, ``to_sparse()``, products
with a dense matrix, ``+``, ``*``/``-`` by a number and ``sum()``.

It is a ``SparseCOOTensor`` underneath (NOTE [Sparse operands] in _coo.py) whose ``_indices_t``
holds each entry's row and column in row order, so the COO kernels (SciPy's CSR product,
``index_put`` for ``to_dense``) serve it unchanged; ``_crow_t`` holds the compressed rows.
What torch refuses for CSR, or what glassgrad has not built (CSC, batched or hybrid CSR,
sparse @ sparse), raises with torch's wording or NotImplementedError naming the case.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _factories, _layout
from ..backend import device as _device
from ..tensor import Tensor
from ._coo import SparseCOOTensor

__all__ = ["SparseCSRTensor", "sparse_csr_tensor"]


def _array(x) -> np.ndarray:
    return x._array if isinstance(x, Tensor) else np.asarray(x)


def _not_coo(name: str):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got SparseCsr\n"
                           "glassgrad: x.to_sparse() gives the COO form.")

    method.__name__ = name
    return method


def _no_csc(self, *args, **kwargs):
    raise NotImplementedError(
        "glassgrad: transposing a CSR tensor gives a CSC tensor (layout=torch.sparse_csc), "
        "which glassgrad does not implement; use x.to_sparse().t() (COO) instead.")


class SparseCSRTensor(SparseCOOTensor):
    """A 2-D sparse CSR tensor (``torch.Tensor`` with ``layout=torch.sparse_csr``). Build one with
    ``glassgrad.sparse_csr_tensor(crow_indices, col_indices, values, size)`` or
    ``x.to_sparse_csr()``. Gradients flow to the values; a leaf's ``.grad`` has torch's layout
    (dense through ``@``/``mm``, CSR through ``to_dense``, ``sparse.mm`` and ``*``).

    Example::

        >>> c = glassgrad.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_csr()
        >>> c.crow_indices(), c.col_indices()
        (tensor([0, 1, 2]), tensor([1, 0]))
    """

    __slots__ = ("_crow_t",)

    @classmethod
    def _build_csr(cls, crow: np.ndarray, col: np.ndarray, values: Tensor, shape: tuple):
        rows = np.repeat(np.arange(shape[0], dtype=np.int64), np.diff(crow))
        out = cls._build(np.stack([rows, col.astype(np.int64)]), values, tuple(shape), True)
        out._crow_t = Tensor._make(crow.astype(np.int64))
        return out

    def _with_values(self, values: Tensor, coalesced: bool | None = None) -> SparseCSRTensor:
        return SparseCSRTensor._build_csr(self._crow_t._array, self._indices_t._array[1], values,
                                          self._array.shape)

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_sparse_csr(self) -> bool:
        return True

    @property
    def layout(self):
        return _layout.sparse_csr

    def crow_indices(self) -> Tensor:
        """The compressed row pointers, ``(nrows + 1,)`` int64."""
        return self._crow_t.detach()

    def col_indices(self) -> Tensor:
        """Each entry's column, ``(nnz,)`` int64."""
        return Tensor._make(self._indices_t._array[1])

    def values(self) -> Tensor:
        """The entries' values, ``(nnz,)``; gradients flow."""
        return self._values_t

    indices = _not_coo("indices")
    _indices = _not_coo("_indices")
    coalesce = _not_coo("coalesce")
    is_coalesced = _not_coo("is_coalesced")
    t = transpose = swapaxes = swapdims = _no_csc
    T = mT = property(_no_csc)

    def detach(self) -> SparseCSRTensor:
        return self._with_values(self._values_t.detach())

    def clone(self, *, memory_format=None) -> SparseCSRTensor:
        return self._with_values(self._values_t.clone())

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self._with_values(self._values_t.__deepcopy__(memo))
            memo[id(self)]._leaf = self._leaf
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._crow_t._array.copy(), self._indices_t._array[1].copy(),
                           self._values_t, self._array.shape))

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert SparseCsr layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The dense matrix; differentiable in the values (``torch.Tensor.to_dense``)."""
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
        return super().to_dense()

    def to_sparse(self, *args, layout=None, **kwargs):
        """The COO form, coalesced (``layout=torch.sparse_csr``: this tensor)."""
        if layout is _layout.sparse_csr:
            return self
        return SparseCOOTensor._build(self._indices_t._array, self._values_t, self._array.shape,
                                      True)

    def to_sparse_coo(self):
        return self.to_sparse()

    def to_sparse_csr(self, dense_dim=None) -> SparseCSRTensor:
        return self

    def __add__(self, other):
        """CSR + CSR is CSR; CSR + dense is dense (as torch)."""
        if isinstance(other, SparseCSRTensor):
            return coo_to_csr(self.to_sparse() + other.to_sparse())
        if isinstance(other, Tensor) and not other._sparse:
            return other + self.to_dense()
        raise NotImplementedError(
            f"glassgrad: a CSR tensor plus {type(other).__name__} is not implemented; convert "
            "both to one layout first.")

    add = __add__

    def __mul__(self, other):
        if isinstance(other, numbers.Number) or (
                isinstance(other, Tensor) and not other._sparse and other.dim() == 0):
            return self._with_values(self._values_t * other)
        raise NotImplementedError(
            "glassgrad: a CSR tensor times a tensor (torch's masked product) is not implemented; "
            "only a number or a 0-d tensor.")

    __rmul__ = mul = __mul__

    def __truediv__(self, other):
        raise RuntimeError("unsupported tensor layout: SparseCsr\nglassgrad: torch divides "
                           "only COO tensors; multiply by 1 / number instead.")

    div = divide = __truediv__

    def sum(self, dim=None, keepdim=False, dtype=None) -> Tensor:
        """The sum of every entry as a dense 0-d tensor; RuntimeError (torch's) with ``dim``."""
        if dim is not None and not keepdim:
            raise RuntimeError(
                "reduction operations on CSR tensors with keepdim=False is unsupported")
        if dim is not None:
            raise NotImplementedError("glassgrad: sums of a CSR tensor over a dim are not "
                                      "implemented; use x.to_sparse().sum(dim).")
        values = self._values_t if dtype is None else self._values_t.to(dtype)
        return values.sum()


def _rebuild(crow, col, values, shape) -> SparseCSRTensor:
    return SparseCSRTensor._build_csr(crow, col, values, tuple(shape))


def coo_to_csr(sp: SparseCOOTensor) -> SparseCSRTensor:
    """A 2-D COO tensor with scalar values as CSR (coalesced first: row order, sums)."""
    if sp.sparse_dim() != 2 or sp.dense_dim() != 0:
        raise NotImplementedError(
            f"glassgrad: only 2-D CSR tensors with scalar values are implemented; this tensor "
            f"has {sp.sparse_dim()} sparse and {sp.dense_dim()} dense dims (batched and hybrid "
            "CSR are not).")
    sp = sp.coalesce()
    rows = sp._indices_t._array[0]
    crow = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=sp.shape[0]))])
    return SparseCSRTensor._build_csr(crow, sp._indices_t._array[1], sp._values_t,
                                      tuple(sp.shape))


def to_sparse_csr(self, dense_dim=None) -> SparseCSRTensor:
    """The CSR form of a 2-D dense or COO tensor (``torch.Tensor.to_sparse_csr``);
    differentiable in the entries. NotImplementedError for batched/hybrid CSR (``dense_dim``,
    more than 2 dims), RuntimeError for fewer than 2 dims."""
    if dense_dim:
        raise NotImplementedError("glassgrad: hybrid CSR tensors (dense_dim > 0) are not "
                                  "implemented.")
    if self.dim() < 2:
        raise RuntimeError(
            f"to_sparse_csr: expected a tensor of at least 2 dims, got {self.dim()}-D "
            f"(sizes {list(self.shape)})")
    return coo_to_csr(self if self._sparse else self.to_sparse())


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad: bool = False,
                      check_invariants=None) -> SparseCSRTensor:
    """A 2-D sparse CSR tensor (``torch.sparse_csr_tensor``): row ``r``'s entries are
    ``values[crow_indices[r]:crow_indices[r + 1]]`` at columns ``col_indices[...]``. ``size``
    defaults to ``(len(crow_indices) - 1, max(col_indices) + 1)``. NOTE: torch checks the
    invariants only with ``check_invariants=True``; glassgrad always checks them (RuntimeError),
    since a bad pointer would compute on entries that are not there.

    Example::

        >>> glassgrad.sparse_csr_tensor([0, 1, 2], [1, 0], [2.0, 3.0], (2, 2)).to_dense()
        tensor([[0., 2.], [3., 0.]])
    """
    if device is not None:
        _device(device)
    crow = _array(crow_indices).astype(np.int64)
    col = _array(col_indices).astype(np.int64)
    if not isinstance(values, Tensor):
        values = _factories.tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if crow.ndim != 1 or col.ndim != 1 or values.dim() != 1:
        raise NotImplementedError(
            "glassgrad: only 2-D CSR tensors with scalar values are implemented (1-D "
            f"crow_indices, col_indices and values); got {crow.ndim}-D, {col.ndim}-D and "
            f"{values.dim()}-D (batched and hybrid CSR are not).")
    nnz = values.shape[0]
    if size is None:
        size = (len(crow) - 1, int(col.max()) + 1 if len(col) else 0)
    size = tuple(int(s) for s in size)
    problem = None
    if len(size) != 2:
        problem = f"size must have 2 dims, got {list(size)}"
    elif len(crow) != size[0] + 1:
        problem = f"crow_indices must have nrows + 1 = {size[0] + 1} elements, got {len(crow)}"
    elif len(col) != nnz:
        problem = f"col_indices and values must have the same nnz, got {len(col)} and {nnz}"
    elif crow[0] != 0 or crow[-1] != nnz or (np.diff(crow) < 0).any():
        problem = (f"crow_indices must start at 0, end at nnz = {nnz} and never decrease, got "
                   f"{crow.tolist()}")
    elif nnz and (col.min() < 0 or col.max() >= size[1]):
        problem = f"col_indices must be in [0, {size[1]}), got {col.tolist()}"
    if problem is not None:
        raise RuntimeError(f"sparse_csr_tensor: {problem}")
    if requires_grad:
        values = values.detach().requires_grad_()
    elif not values._requires_grad:
        values = values.detach()
    out = SparseCSRTensor._build_csr(crow, col, values, size)
    out._leaf = bool(requires_grad)
    return out


def _crow_error(name):
    def method(self, *args, **kwargs):
        got = "Sparse" if self._sparse else "Strided"
        raise RuntimeError(f"{name} expected sparse row compressed tensor layout but got {got}\n"
                           "glassgrad: x.to_sparse_csr() gives the CSR form of a 2-D tensor.")

    method.__name__ = name
    method.__doc__ = f"CSR tensors only (``torch.Tensor.{name}``): RuntimeError on others."
    return method


for _name in ("crow_indices", "col_indices"):
    setattr(Tensor, _name, _crow_error(_name))
Tensor.to_sparse_csr = to_sparse_csr
Tensor.to_sparse_coo = lambda self: self.to_sparse()
Tensor.is_sparse_csr = property(lambda self: False)
