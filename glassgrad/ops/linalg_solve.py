"""Solvers and determinants: ``Cholesky``, ``SolveTriangular``, ``Inv``, ``Solve``, ``Det``,
``Slogdet`` (``torch.linalg.cholesky``/``solve_triangular``/``inv``/``solve``/``det``/``slogdet``).

Forwards are NumPy's batched gufuncs (one call for a whole batch); a LAPACK failure is reported
with the failing matrix's ``info`` (ops/_linalg_check.py). Backwards are written in these same
primitives and matmuls, so every gradient is differentiable again.
"""

from __future__ import annotations

import numpy as np

from . import primitive
from ._linalg_check import (
    plain_arrays,
    LinAlgError,
    check_matrix,
    check_same_dtype,
    getrf_info,
    not_pd_message,
    potrf_info,
    raise_info,
    result_type,
    write_out,
    singular_inv_message,
)
from ._util import cj
from .primitive import Primitive


def _half_diag_tril(x):
    """tril(x) with its diagonal halved: the symmetric part's lower-triangular generator."""
    return x.tril() - 0.5 * x.diagonal(0, -2, -1).diag_embed()


class Cholesky(Primitive):
    """Lower Cholesky factor ``L`` of a symmetric positive-definite ``A = L L^T``; the gradient
    is ``L^-T tril_half(L^T gL) L^-1``, symmetrised (only ``A``'s symmetric part is read)."""

    node_name = "LinalgCholeskyExBackward0"
    saves = ("result",)

    @staticmethod
    def forward(xp, x, *, check_errors):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        try:
            res = xp.linalg.cholesky(x)
            if not np.isnan(res).any() or not potrf_info(np.asarray(x)).any():
                return res
            raise np.linalg.LinAlgError  # a NaN pivot (NaN in A), as LAPACK's check sees it
        except np.linalg.LinAlgError:
            info = potrf_info(np.asarray(x))
            if check_errors:
                raise_info("linalg.cholesky", info, not_pd_message)
            return _partial_cholesky(np.asarray(x))

    @staticmethod
    def backward(grad, result, *, check_errors):
        phi = _half_diag_tril(result.mH @ grad)
        grad_x = solve_triangular(result.mH, phi, upper=True)
        grad_x = solve_triangular(result, grad_x, upper=False, left=False)
        return (0.5 * (grad_x + grad_x.mH),)


def _partial_cholesky(a):
    """LAPACK potrf's (partial) factors, matrix by matrix: what ``cholesky_ex`` returns for a
    matrix that is not positive-definite, as PyTorch's CPU kernel does."""
    from scipy.linalg import lapack

    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.empty_like(flat)
    for k, m in enumerate(flat):
        out[k] = lapack.get_lapack_funcs("potrf", (m,))(m, lower=True, clean=True)[0]
    return out.reshape(a.shape)


class SolveTriangular(Primitive):
    """``X = A^-1 B`` for a triangular ``A`` (only its ``upper``/lower triangle is read, its
    diagonal taken as ones when ``unitriangular``); batch dims broadcast."""

    node_name = "LinalgSolveTriangularBackward0"
    saves = ("x", "result")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y, *, upper, unitriangular):
        plain_arrays(x, y)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        a = xp.triu(x) if upper else xp.tril(x)
        if unitriangular:
            n = a.shape[-1]
            a = a.copy()
            a[..., range(n), range(n)] = 1
        try:
            return xp.linalg.solve(a, y)
        except np.linalg.LinAlgError:  # a zero on the diagonal: LAPACK's trtrs gives inf/nan
            with np.errstate(divide="ignore", invalid="ignore"):
                shape = np.broadcast_shapes(a.shape[:-2], y.shape[:-2])
                a = np.broadcast_to(a, shape + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
                b = np.broadcast_to(y, shape + y.shape[-2:]).reshape((-1,) + y.shape[-2:])
                out = np.stack([_tri_solve(m, r, upper) for m, r in zip(a, b)])
            return out.reshape(shape + y.shape[-2:])

    @staticmethod
    def backward(grad, x, result, *, upper, unitriangular, needs_input_grad):
        grad_y = solve_triangular(x.mH, grad, upper=not upper, unitriangular=unitriangular)
        grad_x = None
        if needs_input_grad[0]:
            grad_x = -(grad_y @ result.mH)
            k = 1 if unitriangular else 0
            grad_x = grad_x.triu(k) if upper else grad_x.tril(-k)
        return grad_x, grad_y


def _tri_solve(a, b, upper):
    x = np.empty_like(b)
    n = a.shape[-1]
    rows = range(n - 1, -1, -1) if upper else range(n)
    for i in rows:
        rest = slice(i + 1, n) if upper else slice(0, i)
        x[i] = (b[i] - a[i, rest] @ x[rest]) / a[i, i]
    return x


def solve_triangular(A, B, *, upper=None, left=True, unitriangular=False, out=None):
    """Solve ``A X = B`` (``X A = B`` when ``left=False``) for triangular ``A (..., n, n)`` and
    ``B (..., n, k)`` (``torch.linalg.solve_triangular``); batch dims broadcast. RuntimeError for
    non-square ``A``, mismatched shapes or dtypes, integer input."""
    op = "linalg.solve_triangular"
    if upper is None:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    check_matrix(op, A)
    check_matrix(op, B, "B", square=False, floating=False)
    if B._array.dtype.kind in "biu":  # PyTorch casts an integer B to A's dtype
        from ._util import cast

        B = cast(B, A._array.dtype)
    check_same_dtype(op, A, B)
    n = A._array.shape[-1]
    if (B._array.shape[-2] if left else B._array.shape[-1]) != n:
        m, k = B._array.shape[-2:]
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {m}x{k})"
        )
    if not left:
        res = SolveTriangular.apply(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    else:
        res = SolveTriangular.apply(A, B, upper=bool(upper), unitriangular=bool(unitriangular))
    return write_out(res, out, "linalg_solve_triangular")


class Inv(Primitive):
    """``A^-1``; the gradient is ``-A^-T grad A^-T`` (from the saved inverse)."""

    node_name = "LinalgInvExBackward0"
    saves = ("result",)

    @staticmethod
    def forward(xp, x, *, check_errors):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        try:
            return xp.linalg.inv(x)
        except np.linalg.LinAlgError:
            info = getrf_info(np.asarray(x))
            if check_errors:
                raise_info("linalg.inv", info, singular_inv_message)
            return _inv_where_possible(np.asarray(x), info)

    @staticmethod
    def backward(grad, result, *, check_errors):
        return (-(result.mH @ grad @ result.mH),)


def _inv_where_possible(a, info):
    """The inverse of each invertible matrix of a batch, NaN for the singular ones (the values
    ``inv_ex`` leaves undefined where ``info > 0``)."""
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.full_like(flat, np.nan)
    ok = info.reshape(-1) == 0
    if ok.any():
        out[ok] = np.linalg.inv(flat[ok])
    return out.reshape(a.shape)


def _info_tensor(info):
    return primitive._make(np.asarray(info, dtype=np.int32))


InvEx = result_type("linalg_inv_ex", "inverse info")
CholeskyEx = result_type("linalg_cholesky_ex", "L info")


def inv(A, *, out=None):
    """The inverse of square matrices ``A (..., n, n)`` (``torch.linalg.inv``); LinAlgError
    naming the zero pivot for a singular matrix, RuntimeError for non-square or integer input."""
    check_matrix("linalg.inv", A)
    return write_out(Inv.apply(A, check_errors=True), out, "linalg_inv")


def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)`` (``torch.linalg.inv_ex``): ``info`` (int32, per matrix) is 0 or the
    1-based index of the zero pivot; the inverse of a singular matrix is NaN."""
    check_matrix("linalg.inv_ex", A)
    info = getrf_info(A._array) if A._array.size else np.zeros(A._array.shape[:-2], np.int32)
    if check_errors:
        raise_info("linalg.inv_ex", info, singular_inv_message)
    res = InvEx(Inv.apply(A, check_errors=False), _info_tensor(info))
    return write_out(res, out, "linalg_inv_ex")


def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor of symmetric positive-definite ``A (..., n, n)``: lower ``L`` with
    ``A = L L^T`` (upper ``U = L^T`` when ``upper``) (``torch.linalg.cholesky``); only the lower
    triangle is read. LinAlgError naming the first leading minor that is not positive-definite."""
    check_matrix("linalg.cholesky", A)
    res = Cholesky.apply(A, check_errors=True)
    return write_out(res.mH if upper else res, out, "linalg_cholesky")


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)`` (``torch.linalg.cholesky_ex``): ``info`` (int32) is 0 or the order of the
    first leading minor that is not positive-definite, where ``L`` is LAPACK's partial factor."""
    check_matrix("linalg.cholesky_ex", A)
    info = potrf_info(A._array) if A._array.size else np.zeros(A._array.shape[:-2], np.int32)
    if check_errors:
        raise_info("linalg.cholesky_ex", info, not_pd_message)
    res = Cholesky.apply(A, check_errors=False)
    res = CholeskyEx(res.mH if upper else res, _info_tensor(info))
    return write_out(res, out, "linalg_cholesky_ex")


class Solve(Primitive):
    """``X = A^-1 B`` for square ``A (..., n, n)`` and ``B (..., n, k)``, batches broadcast."""

    node_name = "LinalgSolveExBackward0"
    saves = ("x", "result")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        plain_arrays(x, y)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        try:
            return xp.linalg.solve(x, y)
        except np.linalg.LinAlgError:
            info = getrf_info(np.broadcast_to(x, np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
                                              + x.shape[-2:]))
            raise_info("torch.linalg.solve", info,
                       lambda _: "The solver failed because the input matrix is singular.")
            raise

    @staticmethod
    def backward(grad, x, result, needs_input_grad):
        grad_y = Solve.apply(x.mH, grad)
        grad_x = -(grad_y @ result.mH) if needs_input_grad[0] else None
        return grad_x, grad_y


SolveEx = result_type("linalg_solve_ex", "result info")


def _vector_rhs(A, B) -> bool:
    nb = B._array.ndim
    return nb == 1 or (nb == A._array.ndim - 1 and B._array.shape == A._array.shape[:-1])


def solve(A, B, *, left=True, out=None):
    """Solve ``A X = B`` (``X A = B`` when ``left=False``) for square ``A (..., n, n)``
    (``torch.linalg.solve``); ``B`` is a batch of vectors when it is 1-D or has ``A``'s shape
    without the last dim, else ``(..., n, k)`` with broadcast batch dims. LinAlgError for a
    singular ``A``; RuntimeError for mismatched shapes or dtypes, integer input."""
    op = "linalg.solve"
    check_matrix(op, A)
    check_same_dtype(op, A, B)
    if B._array.ndim < 1:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    n = A._array.shape[-1]
    vector = _vector_rhs(A, B)
    rhs = B.unsqueeze(-1) if vector else B
    rows = rhs._array.shape[-2] if left or vector else rhs._array.shape[-1]
    if rhs._array.ndim < 2 or rows != n:
        m, k = (rhs._array.shape[-2:]) if rhs._array.ndim >= 2 else (1, rhs._array.shape[-1])
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {m}x{k})")
    if left or vector:
        res = Solve.apply(A.mT, rhs) if not left else Solve.apply(A, rhs)
    else:
        res = Solve.apply(A.mT, rhs.mT).mT
    return write_out(res.squeeze(-1) if vector else res, out, "linalg_solve")


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)`` (``torch.linalg.solve_ex``); a singular ``A`` raises LinAlgError when
    ``check_errors``, else gives ``info > 0`` and a NaN result for that matrix."""
    check_matrix("linalg.solve_ex", A)
    info = getrf_info(A._array) if A._array.size else np.zeros(A._array.shape[:-2], np.int32)
    if info.any():
        if check_errors:
            raise_info("torch.linalg.solve_ex", info,
                       lambda _: "The solver failed because the input matrix is singular.")
        x = inv_ex(A).inverse
        res = (x @ B.unsqueeze(-1)).squeeze(-1) if _vector_rhs(A, B) else (
            x @ B if left else B @ x)
    else:
        res = solve(A, B, left=left)
    res = SolveEx(res, _info_tensor(info))
    return write_out(res, out, "linalg_solve_ex")


class Det(Primitive):
    """``det(A)``; the gradient is ``grad det(A) A^-T``, or, where a matrix is singular, its
    cofactor matrix through the SVD (defined there too, as in PyTorch)."""

    node_name = "LinalgDetBackward0"
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        return xp.linalg.det(x)

    @staticmethod
    def backward(grad, x, result):
        scale = (grad * cj(result)).unsqueeze(-1).unsqueeze(-1)
        if x._array.size and np.all(result._array != 0):
            return (scale * Inv.apply(x, check_errors=True).mH,)
        if x._array.dtype.kind == "c":
            raise RuntimeError("glassgrad: the gradient of linalg.det at a singular complex "
                               "matrix is not supported (real matrices and invertible complex "
                               "ones are).")
        from .linalg_decomp import svd

        u, s, vh = svd(x, full_matrices=False)
        sign = primitive._make(np.linalg.det(u._array) * np.linalg.det(vh._array))
        others = _prod_of_others(s)
        return ((u * (grad * sign).unsqueeze(-1).unsqueeze(-1) * others.unsqueeze(-2)) @ vh,)


def _prod_of_others(s):
    """``out[..., i] = prod_{j != i} s[..., j]`` without division (zeros allowed)."""
    from .shape import cat

    ones = s[..., :1] * 0 + 1
    before = cat([ones, s[..., :-1]], -1).cumprod(-1)
    after = cat([ones, s.flip(-1)[..., :-1]], -1).cumprod(-1).flip(-1)
    return before * after


class Slogdet(Primitive):
    """``(sign, log|det A|)``; the gradient is ``c A^-H`` with ``c = g_logabsdet`` for real
    ``A`` (``sign`` has none) and ``c = g_logabsdet - i Im(conj(g_sign) sign)`` for complex."""

    node_name = "LinalgSlogdetBackward0"
    multi_output = True
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        sign, logabsdet = xp.linalg.slogdet(x)
        return sign, logabsdet

    @staticmethod
    def backward(grads, x, sign):
        grad_sign, grad = grads
        if x._array.dtype.kind == "c" and grad_sign is not None:
            phase = (grad_sign.conj() * sign).imag * -1j
            grad = phase if grad is None else grad + phase
        if grad is None:
            return (None,)
        # a singular matrix (logabsdet -inf) gives a non-finite gradient, as in PyTorch
        return (grad.unsqueeze(-1).unsqueeze(-1) * Inv.apply(x, check_errors=False).mH,)


SlogdetResult = result_type("linalg_slogdet", "sign logabsdet")


def det(A, *, out=None):
    """The determinant of square matrices ``A (..., n, n)`` -> ``(...)`` (``torch.linalg.det``);
    differentiable at singular matrices too."""
    check_matrix("linalg.det", A)
    return write_out(Det.apply(A), out, "linalg_det")


def slogdet(A, *, out=None):
    """``(sign, logabsdet)`` of square matrices (``torch.linalg.slogdet``): ``det = sign *
    exp(logabsdet)``; a singular matrix gives ``(0, -inf)``."""
    check_matrix("linalg.slogdet", A)
    sign, logabsdet = Slogdet.apply(A)
    res = SlogdetResult(sign, logabsdet)
    return write_out(res, out, "linalg_slogdet")


def logdet(input):
    """``log(det(A))`` (``torch.logdet``): NaN where the determinant is negative, -inf where it
    is zero."""
    check_matrix("logdet", input, name="A")
    sign, logabsdet = Slogdet.apply(input)
    if input._array.dtype.kind == "c":  # log det = log|det| + i angle(det): the phase moves
        return logabsdet + sign.log()
    return logabsdet + primitive._make(_log_sign(sign._array))


def _log_sign(sign):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(sign)


__all__ = ["LinAlgError"]
