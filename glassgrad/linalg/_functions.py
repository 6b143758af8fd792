"""Composites of the linalg primitives: ``matrix_power``, ``matrix_rank``, ``lstsq``,
``multi_dot``, ``tensorinv``, ``tensorsolve``, ``vander`` (``torch.linalg.*``); no derivative
code."""

from __future__ import annotations

import numpy as np

from ..ops import primitive
from ..ops._linalg_check import check_matrix, check_tensors, result_type, svd_finite, write_out
from ..ops._names import scalar_type
from ..ops.linalg import matmul
from ..ops.linalg_factor import pinv
from ..ops.linalg_solve import inv, solve


def matrix_power(A, n, *, out=None):
    """``A`` to the integer power ``n`` by repeated squaring (``torch.linalg.matrix_power``):
    ``n = 0`` gives the identity, ``n < 0`` powers the inverse."""
    check_matrix("linalg.matrix_power", A, floating=False)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    if n == 0:  # the identity, connected to A's graph (a zero gradient) as in PyTorch
        eye = primitive._make(np.eye(A._array.shape[-1], dtype=A._array.dtype))
        return write_out(A * 0 + eye, out, "linalg_matrix_power")
    base = inv(A) if n < 0 else A
    n = abs(int(n))
    result = None
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return write_out(result, out, "linalg_matrix_power")


def _default_rtol(A, atol, rtol):
    if rtol is not None:
        return rtol
    if atol is not None and np.any(np.asarray(getattr(atol, "_array", atol)) > 0):
        return 0.0
    return np.finfo(A._array.dtype).eps * max(A._array.shape[-2:])


def _as_array(v):
    return np.asarray(getattr(v, "_array", v), dtype=np.float64)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The numerical rank of ``A (..., m, n)`` -> int64 ``(...)``: singular values (absolute
    eigenvalues when ``hermitian``) above ``max(atol, rtol * s_max)`` (``torch.linalg.
    matrix_rank``); the older ``tol`` is an ``atol`` with ``rtol = 0``."""
    # NOTE: PyTorch skips the square check of a hermitian A with no elements (its rank is 0)
    check_tensors("linalg_matrix_rank", ("input", A))
    check_matrix("linalg.matrix_rank", A, square=bool(hermitian) and A._array.size > 0)
    if tol is not None:
        atol, rtol = tol, 0.0
    rtol = _default_rtol(A, atol, rtol)
    a = A._array
    if hermitian:
        if not a.size:
            s = np.zeros(a.shape[:-2] + (min(a.shape[-2:]),), np.finfo(a.dtype).dtype)
        elif not np.isfinite(a).all():  # no eigenvalues to trust: rank 0, as PyTorch's for Inf
            s = np.full(a.shape[:-1], np.nan, np.finfo(a.dtype).dtype)
        else:
            s = np.abs(np.linalg.eigvalsh(a))
    else:
        svd_finite(a)
        s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(
            a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)
    smax = s.max(-1, initial=0.0)
    cutoff = np.maximum(_as_array(0.0 if atol is None else atol), _as_array(rtol) * smax)
    rank = (s > cutoff[..., None]).sum(-1).astype(np.int64)
    return write_out(primitive._make(np.asarray(rank)), out, "linalg_matrix_rank")


Lstsq = result_type("linalg_lstsq", "solution residuals rank singular_values")
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares ``min ||A X - B||`` for ``A (..., m, n)``, ``B (..., m, k)`` or ``(..., m)``
    (``torch.linalg.lstsq``): ``(solution, residuals, rank, singular_values)`` with PyTorch's CPU
    rules per ``driver`` (default 'gelsy': rank, no residuals; 'gels': residuals when ``m > n``;
    'gelsd'/'gelss': rank, residuals and singular values). The solution is ``pinv(A) @ B``, the
    minimum-norm solution, differentiable in ``A`` and ``B`` (PyTorch's gradient)."""
    op = "torch.linalg.lstsq"
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           "gelss)")
    driver = driver or "gelsy"
    check_tensors("linalg_lstsq", ("self", A), ("b", B))
    check_matrix(op, A, square=False)
    if B._array.ndim < 1:
        raise RuntimeError(f"{op}: other must have at least 1 dimension.")
    if type(A._array) is not np.ndarray or type(B._array) is not np.ndarray:
        from ..ops.primitive import VmapFallback

        raise VmapFallback("vmap: glassgrad's linalg.lstsq reads the rank off plain arrays and "
                           "cannot run inside vmap; call it per sample, or use linalg.pinv(A) @ B")
    if A._array.dtype != B._array.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {scalar_type(A.dtype)} and other's dtype "
                           f"{scalar_type(B.dtype)}")
    vector = B._array.ndim == A._array.ndim - 1
    rhs = B.unsqueeze(-1) if vector else B
    if rhs._array.shape[-2] != A._array.shape[-2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2)")
    m, n = A._array.shape[-2:]
    eps = np.finfo(A._array.dtype).eps
    rcond = eps * max(m, n) if rcond is None else rcond
    solution = matmul(pinv(A, rtol=rcond), rhs)
    dt = np.finfo(A._array.dtype).dtype  # singular values and residuals are real
    svd_finite(A._array)
    s = np.linalg.svd(A._array, compute_uv=False) if A._array.size else np.zeros(
        A._array.shape[:-2] + (min(m, n),), dt)
    rank_arr = (s > rcond * s.max(-1, initial=0.0)[..., None]).sum(-1).astype(np.int64)
    empty = primitive._make(np.zeros((0,), dt))
    rank = primitive._make(np.zeros((0,), np.int64)) if driver == "gels" else \
        primitive._make(np.asarray(rank_arr))
    residuals = empty
    if driver != "gelsy" and m > n and (rank_arr == n).all():
        residuals = ((matmul(A, solution) - rhs).abs() ** 2).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    svals = primitive._make(s) if driver in ("gelsd", "gelss") else empty
    return Lstsq(solution.squeeze(-1) if vector else solution, residuals, rank, svals)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices in the cheapest order (``torch.linalg.multi_dot``):
    the first may be 1-D (a row), the last 1-D (a column), the rest 2-D."""
    check_tensors("linalg_multi_dot", ("tensors[]", tensors))
    tensors = list(tensors)
    k = len(tensors)
    if k < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {k}")
    for i, t in enumerate(tensors):
        nd = t._array.ndim
        where = "first" if i == 0 else "last" if i == k - 1 else None
        if (where and nd not in (1, 2)) or (not where and nd != 2):
            kind = f"the {where} tensor must be 1D or 2D" if where else \
                f"tensor {i} must be 2D"
            raise RuntimeError(f"multi_dot(): {kind} but got {nd}D")
        if t._array.dtype != tensors[0]._array.dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{_c(tensors[0])} and tensor {i} {_c(t)}")
    row, col = tensors[0]._array.ndim == 1, tensors[-1]._array.ndim == 1
    mats = [tensors[0].unsqueeze(0) if row else tensors[0]] + tensors[1:-1] + [
        tensors[-1].unsqueeze(-1) if col else tensors[-1]]
    res = _chain(mats, _order([m._array.shape[0] for m in mats] + [mats[-1]._array.shape[1]]),
                 0, len(mats) - 1)
    if row:
        res = res.squeeze(0)
    if col:
        res = res.squeeze(-1)
    return write_out(res, out, "linalg_multi_dot")


def _c(t):
    from ..ops._names import c_type

    return c_type(t.dtype)


def _order(dims):
    """The classic matrix-chain dynamic programme: ``split[i][j]`` for the cheapest order."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    s = split[i][j]
    return matmul(_chain(mats, split, i, s), _chain(mats, split, s + 1, j))


def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` read as a matrix of its first ``ind`` dims by the rest
    (``torch.linalg.tensorinv``): the result has shape ``A.shape[ind:] + A.shape[:ind]``."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A._array.shape)
    rows, cols = int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    res = inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])
    return write_out(res, out, "linalg_tensorinv")


def tensorsolve(A, B, dims=None, *, out=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B`` (``torch.linalg.tensorsolve``); ``dims`` of
    ``A`` are moved to the end first."""
    check_tensors("linalg_tensorsolve", ("A", A), ("B", B))
    if dims is not None:
        nd = A._array.ndim
        dims = [d % nd for d in dims]
        A = A.permute(*[d for d in range(nd) if d not in dims], *dims)
    shape = tuple(A._array.shape)
    nb = B._array.ndim
    rows, cols = int(np.prod(shape[:nb])), int(np.prod(shape[nb:]))
    if cols != B._array.size or rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {cols} != "
                           f"{B._array.size if cols != B._array.size else rows}")
    res = solve(A.reshape(rows, cols), B.reshape(rows)).reshape(shape[nb:])
    return write_out(res, out, "linalg_tensorsolve")


def vander(x, *, N=None):
    """The Vandermonde matrix ``(..., n, N)`` of ``x (..., n)``: columns ``x^0 ... x^(N-1)``
    (``torch.linalg.vander``, increasing powers; ``N`` defaults to ``n``)."""
    from ..ops.shape import cat

    check_tensors("linalg_vander", ("x", x))
    if x._array.ndim < 1:  # NOTE: PyTorch's check lets a 0-d x through, as one element
        x = x.reshape(1)
    n = x._array.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = primitive._make(np.ones(x._array.shape + (1,), x._array.dtype))
    powers = x.unsqueeze(-1).expand(*x._array.shape, n - 1).cumprod(-1)
    return cat([ones, powers], -1)
