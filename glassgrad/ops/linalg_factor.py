"""Factorisations and matrix functions: ``Qr``, ``Lu``, ``MatrixExp``, ``Pinv``
(``torch.linalg.qr``/``lu``/``lu_factor``/``matrix_exp``/``pinv``). Kernels: NumPy's batched QR
and SVD, SciPy's batched ``lu_factor`` and ``expm``; backwards in glassgrad ops (differentiable
again)."""

from __future__ import annotations

import numpy as np

from . import primitive
from ._linalg_check import (check_float, check_matrix, plain_arrays, result_type, svd_finite,
                            write_out)
from .linalg_solve import solve_triangular
from .primitive import Primitive


def _copyltu(x):
    """The Hermitian matrix whose strict lower triangle is ``x``'s, with ``x``'s real diagonal."""
    if x._array.dtype.kind == "c":
        return x.tril(-1) + x.tril(-1).mH + x.diagonal(0, -2, -1).real.diag_embed().to(x.dtype)
    return x.tril() + x.tril(-1).mT


def _qr_backward_tall(grad_q, grad_r, q, r):
    """``A = QR`` with ``m >= n``: ``gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T``."""
    m = 0
    if grad_r is not None:
        m = r @ grad_r.mH
    if grad_q is not None:
        m = m - grad_q.mH @ q
    b = q @ _copyltu(m) if not isinstance(m, int) else q * 0
    if grad_q is not None:
        b = b + grad_q
    return solve_triangular(r.mH, b, upper=False, left=False)


class Qr(Primitive):
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns, ``R`` upper triangular."""

    node_name = "LinalgQrBackward0"
    multi_output = True
    saves = ("result", "result1")

    @staticmethod
    def forward(xp, x, *, mode):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        if mode == "r":
            return xp.zeros((0,), x.dtype), xp.linalg.qr(x, mode="r")
        q, r = xp.linalg.qr(x, mode=mode)
        return q, r

    @staticmethod
    def backward(grads, q, r, *, mode):
        grad_q, grad_r = grads
        if mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                "through linalg.qr.")
        m, n = q._array.shape[-2], r._array.shape[-1]
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if m >= n:
            return (_qr_backward_tall(grad_q, grad_r, q, r),)
        from .shape import cat

        x, y = r[..., :m], r[..., m:]  # A = Q [X | Y], X square
        grad_x = None if grad_r is None else grad_r[..., :m]
        grad_y = None if grad_r is None else grad_r[..., m:]
        if grad_y is not None:
            extra = q @ (y @ grad_y.mH)  # Y = Q^H A_Y moves with Q
            grad_q = extra if grad_q is None else grad_q + extra
        left = _qr_backward_tall(grad_q, grad_x, q, x)
        right = q @ grad_y if grad_y is not None else y * 0
        return (cat([left, right], -1),)


QrResult = result_type("linalg_qr", "Q R")


def qr(A, mode="reduced", *, out=None):
    """QR decomposition of ``A (..., m, n)`` (``torch.linalg.qr``): ``mode`` 'reduced'
    (``Q (m, k)``, ``R (k, n)``), 'complete' (``Q (m, m)``), or 'r' (``R`` only, ``Q`` empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    check_matrix("linalg.qr", A, square=False)
    return write_out(QrResult(*Qr.apply(A, mode=mode)), out, "linalg_qr")


def lu_factor_arrays(a):
    """SciPy's batched ``lu_factor`` (LAPACK getrf): the packed ``LU`` and 0-based ``pivots``."""
    import warnings

    from scipy.linalg import lu_factor

    if a.size == 0:
        k = min(a.shape[-2:])
        return a.copy(), np.zeros(a.shape[:-2] + (k,), np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a singular matrix: info is read off U's diagonal
        return lu_factor(a, check_finite=False)


def permutation(pivots, m, dtype):
    """The permutation matrices ``P (..., m, m)`` of LAPACK's 0-based row swaps ``pivots``
    (``A = P L U``)."""
    batch = pivots.shape[:-1]
    order = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    idx = np.indices(batch) if batch else ()
    for i in range(pivots.shape[-1]):
        j = pivots[..., i]
        a, b = order[(*idx, np.full(batch, i, int))], order[(*idx, j)]
        order[(*idx, np.full(batch, i, int))], order[(*idx, j)] = b, a
    p = np.zeros(batch + (m, m), dtype)
    np.put_along_axis(p, order[..., None, :], 1, axis=-2)
    return p


def _unpack(lu):
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = np.tril(lu[..., :, :k], -1)
    lower[..., range(k), range(k)] = 1
    return lower, np.triu(lu[..., :k, :])


class Lu(Primitive):
    """``(P, L, U)`` with ``A = P L U`` (partial pivoting): ``L (m, k)`` unit lower, ``U (k, n)``
    upper; the gradient is ``P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T``, with the extra
    rows of ``L`` (tall) or columns of ``U`` (wide) solved through."""

    node_name = "LinalgLuBackward0"
    multi_output = True
    saves = ("result", "result1", "result2")

    @staticmethod
    def forward(xp, x):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        lu, piv = lu_factor_arrays(x)
        lower, upper = _unpack(lu)
        return permutation(piv, x.shape[-2], x.dtype), lower, upper

    @staticmethod
    def backward(grads, p, lower, upper):
        _, grad_l, grad_u = grads
        m, n = lower._array.shape[-2], upper._array.shape[-1]
        k = min(m, n)
        grad_l = lower * 0 if grad_l is None else grad_l
        grad_u = upper * 0 if grad_u is None else grad_u
        if m == n:
            return (_lu_backward_square(p, lower, upper, grad_l, grad_u),)
        from .shape import cat

        if m < n:  # A = P L [U1 | U2]
            u1, u2, gu2 = upper[..., :k], upper[..., k:], grad_u[..., k:]
            pl_gu2 = solve_triangular(lower.mH, gu2, upper=True, unitriangular=True)
            grad_l = grad_l - pl_gu2 @ u2.mH
            left = _lu_backward_square(p, lower, u1, grad_l, grad_u[..., :k])
            return (cat([left, p @ pl_gu2], -1),)
        l1, l2, gl2 = lower[..., :k, :], lower[..., k:, :], grad_l[..., k:, :]  # P^T A = [L1; L2] U
        gl2_u = solve_triangular(upper.mH, gl2, upper=False, left=False)  # gL2 U^-T
        grad_u = grad_u - l2.mH @ gl2_u
        top = _lu_backward_square(None, l1, upper, grad_l[..., :k, :], grad_u)
        return (p @ cat([top, gl2_u], -2),)


def _lu_backward_square(p, lower, upper, grad_l, grad_u):
    inner = (lower.mH @ grad_l).tril(-1) + (grad_u @ upper.mH).triu()
    x = solve_triangular(lower.mH, inner, upper=True, unitriangular=True)
    x = solve_triangular(upper.mH, x, upper=False, left=False)
    return x if p is None else p @ x


LuResult = result_type("linalg_lu", "P L U")


def lu(A, *, pivot=True, out=None):
    """LU decomposition with partial pivoting ``A = P L U`` of ``A (..., m, n)``
    (``torch.linalg.lu``); ``pivot=False`` is CUDA-only in PyTorch (RuntimeError here too)."""
    _check_lu("linalg.lu", A, pivot)
    p, lower, upper = Lu.apply(A)
    return write_out(LuResult(p.detach(), lower, upper), out, "linalg_lu")  # P: no gradient


def _check_lu(op, A, pivot):
    check_matrix(op, A, square=False, floating=False)
    if A._array.dtype.kind not in "fc":
        from ._names import scalar_type

        raise NotImplementedError(f'"lu_cpu" not implemented for \'{scalar_type(A.dtype)}\'')
    check_float(op, A)
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU")


class MatrixExp(Primitive):
    """``exp(A)`` of square matrices; the gradient is the top-right block of
    ``exp([[A^T, grad], [0, A^T]])`` (the Fréchet derivative's adjoint)."""

    node_name = "LinalgMatrixExpBackward0"
    saves = ("x",)

    @staticmethod
    def forward(xp, x):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        from scipy.linalg import expm

        if x.size == 0:
            return x.copy()
        return expm(x).astype(x.dtype, copy=False)

    @staticmethod
    def backward(grad, x):
        from .shape import cat

        n = x._array.shape[-1]
        xt = x.mH
        grad = grad.expand(xt.shape) if grad._array.shape != xt._array.shape else grad
        big = cat([cat([xt, grad], -1), cat([xt * 0, xt], -1)], -2)
        return (MatrixExp.apply(big)[..., :n, n:],)


def matrix_exp(A):
    """The matrix exponential of square matrices ``A (..., n, n)`` (``torch.linalg.matrix_exp``)."""
    check_matrix("linalg.matrix_exp", A)
    return MatrixExp.apply(A)


class Pinv(Primitive):
    """The Moore-Penrose pseudo-inverse through the SVD (singular values at or below
    ``max(atol, rtol * s_max)`` dropped); the gradient is the constant-rank formula
    ``-P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)``."""

    node_name = "LinalgPinvBackward0"
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, atol, rtol, hermitian):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        if x.size == 0:
            return xp.zeros(x.shape[:-2] + x.shape[-2:][::-1], x.dtype)
        if hermitian:
            w, v = xp.linalg.eigh(x)
            s, u, vt = xp.abs(w), v * xp.sign(w)[..., None, :], xp.swapaxes(v, -1, -2).conj()
        else:
            svd_finite(x)
            u, s, vt = xp.linalg.svd(x, full_matrices=False)
        cutoff = xp.maximum(atol, rtol * s.max(-1))[..., None]
        with np.errstate(divide="ignore"):
            s_inv = xp.where(s > cutoff, 1 / s, 0).astype(s.dtype)
        return (xp.swapaxes(vt, -1, -2).conj()
                @ (s_inv[..., :, None] * xp.swapaxes(u, -1, -2).conj())).astype(x.dtype)

    @staticmethod
    def backward(grad, x, result, *, atol, rtol, hermitian):
        pt, gt = result.mH, grad.mH
        y = gt @ result @ pt
        z = pt @ result @ gt
        return (-(pt @ grad @ pt) + y - x @ (result @ y) + z - (z @ result) @ x,)


def _tol(value):
    if value is None:
        return None
    if primitive.Tensor is not None and isinstance(value, primitive.Tensor):
        return np.asarray(value._array, np.float64)
    return float(value)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The pseudo-inverse ``A+ (..., n, m)`` of ``A (..., m, n)`` (``torch.linalg.pinv``):
    singular values ``<= max(atol, rtol * s_max)`` are dropped; ``rtol`` defaults to
    ``eps * max(m, n)`` when neither is given (0 when only ``atol`` is)."""
    from ._linalg_check import check_tensors

    check_tensors("linalg_pinv", ("input", A))
    if A._array.ndim < 2 or A._array.dtype.kind not in "fc":
        from ._names import scalar_type

        raise RuntimeError(
            f"linalg.pinv({scalar_type(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 "
            "or more dimensions of float, double, cfloat or cdouble types")
    check_float("linalg.pinv", A)
    a_tol, r_tol = _tol(atol), _tol(rtol)
    if r_tol is None:
        eps = np.finfo(A._array.dtype).eps
        r_tol = 0.0 if a_tol is not None and np.any(a_tol > 0) else eps * max(A._array.shape[-2:])
    res = Pinv.apply(A, atol=0.0 if a_tol is None else a_tol, rtol=r_tol,
                     hermitian=bool(hermitian))
    return write_out(res, out, "linalg_pinv")
