"""LU-based and Householder composites (``torch.linalg.lu_factor``/``lu_factor_ex``/``lu_solve``,
``householder_product``, ``torch.lu_unpack``/``ormqr``/``geqrf``) and LDL^T (``ldl_factor``,
``ldl_solve``); no derivative code: gradients flow through ``Lu``, ``solve_triangular`` and
matmuls. Pivots are LAPACK's: 1-based int32 row swaps."""

from __future__ import annotations

import numpy as np

from ..ops import primitive
from ..ops._util import cj
from ..ops._linalg_check import (
    check_matrix, check_same_dtype, check_tensors, result_type, write_out,
)
from ..ops.linalg_factor import Lu, _check_lu, lu_factor_arrays, permutation
from ..ops.linalg_solve import solve_triangular
from ..ops.shape import cat

LuFactor = result_type("linalg_lu_factor", "LU pivots")
LuFactorEx = result_type("linalg_lu_factor_ex", "LU pivots info")
LuUnpack = result_type("lu_unpack", "P L U")


def _const(array):
    return primitive._make(np.array(array, order="C"))


def _pack(lower, upper):
    """LAPACK's packed ``LU``: strict lower part of ``L`` and ``U`` in one ``(m, n)`` matrix."""
    m, n = lower._array.shape[-2], upper._array.shape[-1]
    strict = lower.tril(-1)
    if m > n:
        return strict + cat([upper, _const(np.zeros(upper._array.shape[:-2] + (m - n, n),
                                                    upper._array.dtype))], -2)
    if n > m:
        return upper + cat([strict, _const(np.zeros(strict._array.shape[:-2] + (m, n - m),
                                                    strict._array.dtype))], -1)
    return strict + upper


def _factor(op, A, pivot):
    _check_lu(op, A, pivot)
    _, piv = lu_factor_arrays(A._array)
    _, lower, upper = Lu.apply(A)
    diag = np.diagonal(upper._array, 0, -2, -1)
    zero = diag == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32) if diag.shape[-1] \
        else np.zeros(diag.shape[:-1], np.int32)  # an empty matrix: no zero pivot to report
    return _pack(lower, upper), _const((piv + 1).astype(np.int32)), info


def lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)``: LAPACK's packed LU factorisation of ``A (..., m, n)``
    (``torch.linalg.lu_factor``); RuntimeError for a singular matrix (use ``lu_factor_ex``)."""
    packed, pivots, info = _factor("torch.linalg.lu_factor", A, pivot)
    if info.any():
        k = int(info.reshape(-1)[np.flatnonzero(info)[0]])
        prefix = f"(Batch element {int(np.flatnonzero(info)[0])}): " if info.ndim else ""
        raise RuntimeError(
            f"torch.linalg.lu_factor: {prefix}U[{k},{k}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return write_out(LuFactor(packed, pivots), out, "linalg_lu_factor")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``(LU, pivots, info)`` (``torch.linalg.lu_factor_ex``): ``info`` (int32) is 0 or the
    1-based index of the first zero on ``U``'s diagonal."""
    packed, pivots, info = _factor("torch.linalg.lu_factor_ex", A, pivot)
    if check_errors and info.any():
        from ..ops._linalg_check import raise_info

        raise_info("torch.linalg.lu_factor_ex", info, lambda k: (
            f"The factorization could not be completed because the input is not invertible "
            f"(U[{k},{k}] is zero)."))
    res = LuFactorEx(packed, pivots, _const(info))
    return write_out(res, out, "linalg_lu_factor_ex")


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from ``lu_factor``'s packed ``LU`` and 1-based ``pivots``
    (``torch.lu_unpack``); differentiable in ``LU_data``. Skipped parts are empty tensors."""
    if LU_pivots._array.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    m, n = LU_data._array.shape[-2:]
    k = min(m, n)
    empty = _const(np.zeros((0,), LU_data._array.dtype))
    lower = upper = perm = empty
    if unpack_data:
        eye = _const(np.eye(m, k, dtype=LU_data._array.dtype))
        lower = LU_data[..., :, :k].tril(-1) + eye
        upper = LU_data[..., :k, :].triu()
    if unpack_pivots:
        perm = _const(permutation(LU_pivots._array.astype(np.int64) - 1, m, LU_data._array.dtype))
    return write_out(LuUnpack(perm, lower, upper), out, "lu_unpack")


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve ``A X = B`` from ``A``'s ``lu_factor`` (``torch.linalg.lu_solve``): ``adjoint``
    solves ``A^T X = B``, ``left=False`` solves ``X A = B``; batch dims broadcast."""
    op = "linalg.lu_solve"
    check_matrix(op, LU, name="LU")
    check_matrix(op, B, name="B", square=False)
    check_same_dtype(op, LU, B, ("LU", "B"))
    n = LU._array.shape[-1]
    rows = B._array.shape[-2] if left else B._array.shape[-1]
    if rows != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B._array.shape[-2]}x{B._array.shape[-1]})")
    p, lower, upper = lu_unpack(LU, pivots)
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return write_out(lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH, out,
                         "linalg_lu_solve")
    if adjoint:  # A^H = U^H L^H P^H
        y = solve_triangular(upper.mH, B, upper=False)
        y = solve_triangular(lower.mH, y, upper=True, unitriangular=True)
        res = p @ y
    else:
        y = solve_triangular(lower, p.mT @ B, upper=False, unitriangular=True)
        res = solve_triangular(upper, y, upper=True)
    return write_out(res, out, "linalg_lu_solve")


def _reflect(A, tau, C, left, transpose):
    """``C`` multiplied by ``Q = H_0 ... H_{k-1}`` (or ``Q^T``; from the left or right), with
    ``H_i = I - tau_i v_i v_i^H`` and ``v_i`` column ``i`` of ``A`` below the diagonal, 1 on it."""
    m = A._array.shape[-2]
    k = tau._array.shape[-1]
    if not k and A._array.size and A.requires_grad:  # Q = I, still a function of A
        from ..ops.elementwise import where

        C = where(_const(np.ones(C._array.shape, bool)), C, A[..., :1, :1].expand(C.shape))
    order = range(k - 1, -1, -1) if left != transpose else range(k)
    for i in order:
        below = np.zeros(m, A._array.dtype)
        below[i + 1:] = 1
        unit = np.zeros(m, A._array.dtype)
        unit[i] = 1
        v = A[..., :, i] * _const(below) + _const(unit)
        t = tau[..., i].unsqueeze(-1).unsqueeze(-1)
        t = cj(t) if transpose else t  # H_i^H = I - conj(tau_i) v v^H
        if left:
            C = C - t * v.unsqueeze(-1) @ (cj(v).unsqueeze(-2) @ C)
        else:
            C = C - t * (C @ v.unsqueeze(-1)) @ cj(v).unsqueeze(-2)
    return C


def householder_product(A, tau, *, out=None):
    """The first ``n`` columns of ``Q = H_0 ... H_{k-1}`` from Householder vectors in the columns
    of ``A (..., m, n)`` and scalars ``tau (..., k)`` (``torch.linalg.householder_product``, LAPACK
    orgqr); differentiable in both."""
    op = "torch.linalg.householder_product"
    check_tensors("linalg_householder_product", ("input", A), ("tau", tau))
    if A._array.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if tau._array.ndim < 1:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    m, n = A._array.shape[-2:]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < tau._array.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    check_same_dtype(op, A, tau, ("input", "tau"))
    eye = _const(np.broadcast_to(np.eye(m, n, dtype=A._array.dtype),
                                 A._array.shape[:-2] + (m, n)))
    return write_out(_reflect(A, tau, eye, True, False), out, "linalg_householder_product")


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """``Q @ C`` (``Q^T``, or from the right) for ``Q`` of ``geqrf``'s Householder form
    ``(input, tau=input2)`` and ``C = input3`` (``torch.ormqr``), without forming ``Q``."""
    check_tensors("ormqr", ("input", input), ("input2", input2), ("input3", input3))
    for t, name in ((input, "input"), (input3, "other")):
        if t._array.ndim < 2:
            raise RuntimeError(f"torch.ormqr: {name} must have at least 2 dimensions.")
    if input2._array.ndim < 1:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    check_same_dtype("torch.ormqr", input, input3, ("input", "other"))
    return write_out(_reflect(input, input2, input3, left, transpose), out, "ormqr")


Geqrf = result_type("geqrf", "a tau")


def geqrf(input, *, out=None):
    """LAPACK geqrf: ``R`` above the diagonal and Householder vectors below it, with their
    ``tau`` (``torch.geqrf``); not differentiable (as in PyTorch)."""
    from scipy.linalg import lapack

    check_matrix("geqrf", input, name="input", square=False)
    a = input._array
    k = min(a.shape[-2:])
    if not a.size:  # nothing to factor (NumPy cannot reshape an empty batch to -1)
        res = Geqrf(_const(a.copy()), _const(np.zeros(a.shape[:-2] + (k,), a.dtype)))
        return write_out(res, out, "geqrf")
    flat = a.reshape((-1,) + a.shape[-2:])
    qr = np.empty_like(flat)
    tau = np.empty((flat.shape[0], k), a.dtype)
    for i, mat in enumerate(flat):
        f = lapack.get_lapack_funcs("geqrf", (mat,))
        res, t = f(mat)[:2]
        qr[i], tau[i] = res, t[:k]
    res = Geqrf(_const(qr.reshape(a.shape)), _const(tau.reshape(a.shape[:-2] + (k,))))
    return write_out(res, out, "geqrf")


LdlFactor = result_type("linalg_ldl_factor", "LD pivots")
LdlFactorEx = result_type("linalg_ldl_factor_ex", "LD pivots info")


def _sytrf(a, hermitian):
    from scipy.linalg import lapack

    flat = a.reshape((-1,) + a.shape[-2:])
    ld, piv = np.empty_like(flat), np.empty(flat.shape[:2], np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    for i, mat in enumerate(flat):
        f = lapack.get_lapack_funcs("hetrf" if hermitian and a.dtype.kind == "c" else "sytrf",
                                    (mat,))
        ld[i], piv[i], info[i] = f(mat, lower=1)
    return (np.tril(ld).reshape(a.shape), piv.reshape(a.shape[:-1]),
            np.maximum(info, 0).reshape(a.shape[:-2]))


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``(LD, pivots, info)``: LAPACK sytrf's compact Bunch-Kaufman ``L D L^T`` of symmetric
    ``A`` (``torch.linalg.ldl_factor_ex``; lower triangle read); not differentiable."""
    check_matrix("torch.linalg.ldl_factor_ex", A)
    ld, piv, info = _sytrf(A._array, hermitian)
    if check_errors and info.any():
        from ..ops._linalg_check import raise_info

        raise_info("torch.linalg.ldl_factor_ex", info, lambda k: (
            f"The factorization could not be completed because the input is singular "
            f"(D[{k},{k}] is zero)."))
    res = LdlFactorEx(_const(ld), _const(piv), _const(info))
    return write_out(res, out, "linalg_ldl_factor_ex")


def ldl_factor(A, *, hermitian=False, out=None):
    """``(LD, pivots)`` (``torch.linalg.ldl_factor``); see ``ldl_factor_ex``."""
    ld, piv, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return write_out(LdlFactor(ld, piv), out, "linalg_ldl_factor")


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve ``A X = B`` from ``ldl_factor``'s ``(LD, pivots)`` (``torch.linalg.ldl_solve``,
    LAPACK sytrs); not differentiable."""
    from scipy.linalg import lapack

    check_matrix("torch.linalg.ldl_solve", LD, name="LD")
    check_same_dtype("torch.linalg.ldl_solve", LD, B, ("LD", "B"))
    nd = B._array.ndim
    if nd < 2:
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if not nd else
                         "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    n = LD._array.shape[-1]
    if B._array.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix "
                           f"is {n} by {n} but each b matrix is {B._array.shape[-2]} by "
                           f"{B._array.shape[-1]}")
    if not B._array.size:
        shape = np.broadcast_shapes(LD._array.shape[:-2], B._array.shape[:-2])
        return write_out(_const(np.zeros(shape + B._array.shape[-2:], B._array.dtype)), out,
                         "linalg_ldl_solve")
    shape = np.broadcast_shapes(LD._array.shape[:-2], B._array.shape[:-2])
    ld = np.broadcast_to(LD._array, shape + LD._array.shape[-2:]).reshape((-1,) + LD.shape[-2:])
    piv = np.broadcast_to(pivots._array, shape + pivots._array.shape[-1:]).reshape(
        (-1, pivots._array.shape[-1]))
    b = np.broadcast_to(B._array, shape + B._array.shape[-2:]).reshape((-1,) + B.shape[-2:])
    x = np.empty_like(b)
    for i in range(b.shape[0]):
        f = lapack.get_lapack_funcs("sytrs", (ld[i],))
        x[i] = f(ld[i], piv[i], b[i], lower=1)[0]
    return write_out(_const(x.reshape(shape + B._array.shape[-2:])), out, "linalg_ldl_solve")
