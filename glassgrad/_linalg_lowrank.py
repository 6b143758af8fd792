"""Randomised low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``): Halko,
Martinsson and Tropp's range finder (their Algorithm 4.4, subspace iteration) followed by a small
exact SVD; composites of ``randn``, ``linalg.qr`` and ``linalg.svd``, so differentiable. The
random matrix is drawn as PyTorch draws it (``randn(n, q)``), so a shared seed gives PyTorch's
numbers."""

from __future__ import annotations

from . import linalg as _la
from ._factories import randn
from .autograd.function import Function


def _basis(A, q, niter, M):
    """An orthonormal ``(..., m, q)`` basis approximating the range of ``A - M``."""
    r = randn(A._array.shape[-1], q, dtype=A.dtype)
    x = A @ r if M is None else A @ r - M @ r
    basis = _la.qr(x).Q
    for _ in range(niter):
        x = A.mT @ basis if M is None else A.mT @ basis - M.mT @ basis
        basis = _la.qr(x).Q
        x = A @ basis if M is None else A @ basis - M @ basis
        basis = _la.qr(x).Q
    return basis


def _need_matrix(A):
    if A._array.ndim < 2:  # PyTorch's Python code unpacks A.shape[-2:] and fails the same way
        raise ValueError(f"not enough values to unpack (expected 2, got {A._array.ndim})")


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)``, an approximate rank-``q`` SVD ``A - M ~ U diag(S) V^T`` of ``A (..., m,
    n)`` from ``niter`` subspace iterations (``torch.svd_lowrank``)."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if not A.is_floating_point():
        A = A.float()
    _need_matrix(A)
    m, n = A._array.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:
        A = A.mT
        M = None if M is None else M.mT
    basis = _basis(A, q, niter, M)
    b = basis.mT @ A if M is None else basis.mT @ A - basis.mT @ M
    u, s, vh = _la.svd(b, full_matrices=False)
    u, v = basis @ u, vh.mT
    return (v, s, u) if m < n else (u, s, v)


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)`` of the (centred, when ``center``) data ``A (..., m, n)``: principal
    directions ``V``, singular values ``S`` (``torch.pca_lowrank``); ``q`` defaults to
    ``min(6, m, n)``."""
    from .tensor import Tensor

    if not isinstance(A, Tensor):
        raise TypeError(f"expected Tensor but got {type(A)}")
    _need_matrix(A)
    m, n = A._array.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)="
                         f"{min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A, q, niter=niter, M=A.mean(dim=-2, keepdim=True))


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """``(E, X)``: the ``k`` largest (``largest=False``: smallest) eigenpairs of the symmetric
    (generalised, ``A X = B X diag(E)`` with positive-definite ``B``) problem
    (``torch.lobpcg``). glassgrad solves it exactly with a dense ``eigh`` (through ``B``'s
    Cholesky factor), the point LOBPCG's iteration converges to: ``niter``, ``tol``, ``method``,
    ``iK`` and the ``ortho_*``/``tracker`` options of the iteration have nothing to tune, and the
    gradient is eigh's exact one. RuntimeError, as PyTorch, when ``m < 3 n``."""
    m = A._array.shape[-1]
    if k is None:
        k = 1 if X is None else X._array.shape[-1]
    if n is None:
        n = k if X is None else X._array.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than "
            f"3 x the number of requested eigenpairs (={n})")
    largest = True if largest is None else largest
    want = k if X is None else X._array.shape[-1]
    if B is None:
        values, vectors = _la.eigh(A)
    else:
        low = _la.cholesky(B)
        inner = _la.solve_triangular(low, A, upper=False)
        inner = _la.solve_triangular(low, inner.mT, upper=False)
        values, vectors = _la.eigh(inner)
        vectors = _la.solve_triangular(low.mT, vectors, upper=True)
        values, vectors = _NoGeneralizedBackward.apply(values, vectors)
    if largest:
        values, vectors = values.flip(-1), vectors.flip(-1)
    return values[..., :want], vectors[..., :want]


class _NoGeneralizedBackward(Function):
    """Identity whose backward raises PyTorch's lobpcg error for a generalised problem."""

    @staticmethod
    def forward(ctx, values, vectors):
        return values.clone(), vectors.clone()

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        raise ValueError("lobpcg.backward does not support backward with B != I yet.")
