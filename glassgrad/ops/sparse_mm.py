"""``SparseMM``: a sparse COO matrix times a dense matrix, the primitive behind ``torch.mm``,
``torch.spmm``, ``torch.sparse.mm`` and ``@`` when one operand is sparse (``glassgrad/sparse/``).

The sparse operand enters as its values (a Tensor, so gradients reach them) plus its indices and
size (attributes, not differentiable). The product runs in SciPy's CSR kernel (the optional extra
``glassgrad[sparse]``), which, like PyTorch's CPU kernel, accumulates each output row over the
row's entries in the result dtype.
"""

from __future__ import annotations

from . import primitive
from .gather import index_select
from .primitive import Primitive


def scipy_sparse():
    """``scipy.sparse``, imported on first use; ImportError naming the extra when absent."""
    try:
        import scipy.sparse as sp
    except ImportError:
        raise ImportError(
            "glassgrad's sparse tensors use SciPy's kernels; install them with "
            "`pip install glassgrad[sparse]` (or `pip install scipy`)"
        ) from None
    return sp


class SparseMM(Primitive):
    """(n, k) sparse with ``values`` at ``indices`` (2, nnz) @ (k, m) dense -> (n, m) dense."""

    node_name = "MmBackward0"
    saves = ("values", "dense")
    saved_for = {"values": ("dense",), "dense": ("values",)}  # NOTE [Saved when needed]
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, values, dense, indices, size):
        sp = scipy_sparse()
        matrix = sp.csr_matrix((values, (indices[0], indices[1])), shape=size)
        return xp.ascontiguousarray(matrix @ dense)

    @staticmethod
    def backward(grad, values, dense, indices, size, needs_input_grad):
        grad_values = grad_dense = None
        if needs_input_grad[0]:  # d/dv_e of out[r_e, :] = v_e * dense[c_e, :]
            rows = primitive._make(indices[0])
            cols = primitive._make(indices[1])
            grad_values = (index_select(grad, 0, rows) * index_select(dense, 0, cols)).sum(1)
        if needs_input_grad[1]:  # A^T @ grad: the same entries with rows and columns swapped
            grad_dense = SparseMM.apply(values, grad, indices=indices[::-1], size=size[::-1])
        return grad_values, grad_dense


class SparseMMFull(Primitive):
    """A sparse leaf's product as torch.mm differentiates it (NOTE [Sparse gradient layouts] in
    sparse/_ops.py): ``matrix`` is the leaf's dense stand-in (zeros, never read) and receives the
    gradient of the whole (n, k) matrix; the entries are ``values`` at ``indices`` (attributes)."""

    node_name = "MmBackward0"
    saves = ("dense",)
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, matrix, dense, values, indices, size):
        return SparseMM.forward(xp, values, dense, indices, size)

    @staticmethod
    def backward(grad, dense, values, indices, size, needs_input_grad):
        grad_matrix = grad_dense = None
        if needs_input_grad[0]:
            grad_matrix = grad @ dense.t()
        if needs_input_grad[1]:
            grad_dense = SparseMM.apply(primitive._make(values), grad, indices=indices[::-1],
                                        size=size[::-1])
        return grad_matrix, grad_dense
