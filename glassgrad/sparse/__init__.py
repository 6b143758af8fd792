"""Sparse tensors (``torch.sparse``): the COO layout, its constructors, conversions and the ops
that take it (NOTE [Sparse operands] in _coo.py). SciPy supplies the kernels
(``pip install glassgrad[sparse]``), imported on first use.

Example::

    >>> a = glassgrad.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
    >>> glassgrad.sparse.mm(a, glassgrad.ones(2, 3)).shape
    glassgrad.Size([2, 3])
"""

from __future__ import annotations

from ..tensor import Tensor
from ._construct import sparse_coo_tensor, to_sparse
from ._coo import SparseCOOTensor, SparseLayoutError
from ._ops import mm, sum

__all__ = ["SparseCOOTensor", "SparseLayoutError", "mm", "sparse_coo_tensor", "sum"]

Tensor.to_sparse = to_sparse
Tensor.to_dense = lambda self, dtype=None, *, masked_grad=None: (
    self if dtype is None else self.to(dtype))

# issue 22, lane sparse
from ._ops import addmm, spmm  # noqa: E402
from ._softmax import log_softmax, softmax  # noqa: E402

__all__ += ["addmm", "log_softmax", "softmax", "spmm"]
from ._csr import SparseCSRTensor, sparse_csr_tensor  # noqa: E402

__all__ += ["SparseCSRTensor", "sparse_csr_tensor"]
from . import _elementwise  # noqa: E402,F401  (binds the sparse elementwise methods)
from . import _gradcheck  # noqa: E402,F401  (gradcheck with sparse inputs)
