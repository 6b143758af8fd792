"""``torch.linalg``: decompositions, solvers, inverses, norms and products, batched over leading
dims, float32/float64, differentiable as PyTorch defines them (primitives in ops/linalg_*.py,
composites in this package)."""

from ..ops._linalg_check import LinAlgError
from ..ops.linalg_decomp import eig, eigh, eigvals, eigvalsh, svd, svdvals
from ..ops.linalg_factor import lu, matrix_exp, pinv, qr
from ..ops.linalg_solve import (
    cholesky, cholesky_ex, det, inv, inv_ex, slogdet, solve, solve_ex, solve_triangular,
)
from ._factor import (
    householder_product, ldl_factor, ldl_factor_ex, ldl_solve, lu_factor, lu_factor_ex, lu_solve,
)
from ._functions import (
    lstsq, matrix_power, matrix_rank, multi_dot, tensorinv, tensorsolve, vander,
)
from ._norms import cond, matrix_norm, norm, vector_norm
from ._products import cross, diagonal, matmul, vecdot

# the shared doc snippets torch.linalg's docstrings are built from (glassgrad's own wording)
common_notes = {
    "experimental_warning": "This function is experimental: its interface may still change.",
    "sync_note": "glassgrad runs on the CPU, so no device synchronisation happens (on a CUDA "
                 "device PyTorch synchronises with the CPU here).",
    "sync_note_ex": "glassgrad runs on the CPU; PyTorch on CUDA synchronises only when "
                    "check_errors=True.",
    "sync_note_has_ex": "glassgrad runs on the CPU; PyTorch on CUDA synchronises here, and the "
                        "_ex variant of this function does not (it returns info instead).",
}

__all__ = [
    "LinAlgError", "common_notes", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh",
    "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex",
    "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp",
    "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
    "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve",
    "vander", "vecdot", "vector_norm",
]
