"""``torch.linalg``: decompositions, solvers, inverses, norms and products, batched over leading
dims, float32/float64, differentiable as PyTorch defines them (primitives in ops/linalg_*.py,
composites in this package)."""

from ..ops._linalg_check import LinAlgError
from ..ops.linalg_decomp import eigh, eigvalsh, svd, svdvals
from ..ops.linalg_solve import (
    cholesky, cholesky_ex, det, inv, inv_ex, slogdet, solve, solve_ex, solve_triangular,
)
from ._norms import cond, matrix_norm, norm, vector_norm
from ._products import cross, diagonal, matmul, vecdot

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
    "eigvalsh", "inv", "inv_ex", "matmul", "matrix_norm", "norm", "slogdet", "solve",
    "solve_ex", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
]
