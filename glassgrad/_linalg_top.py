"""Top-level linear-algebra names (``torch.cholesky``, ``torch.det``, ``torch.inverse``,
``torch.cholesky_solve`` ...): thin composites of ``glassgrad.linalg`` with the older argument
conventions, and the names PyTorch removed in 1.9 that now only raise its message pointing at the
``torch.linalg`` replacement (that message is PyTorch's behaviour, so it is reproduced exactly)."""

from __future__ import annotations


from . import linalg as _la
from .autograd.node_names import named_as
from .ops._linalg_check import check_matrix, check_tensors, result_type, write_out
from .ops.linalg_solve import logdet  # noqa: F401 - re-exported
from ._user_warning import warn_user

_warned: set = set()


def _warn_once(key, message):
    if key not in _warned:  # PyTorch's TORCH_WARN_ONCE
        _warned.add(key)
        warn_user(message, UserWarning, stacklevel=3)


def cholesky(input, upper=False, *, out=None):
    """The Cholesky factor (``torch.cholesky``, deprecated by PyTorch in favour of
    ``torch.linalg.cholesky``, with the same warning)."""
    _warn_once("cholesky", (
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
        "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for "
        "all valid (symmetric positive definite) inputs."))
    return write_out(_la.cholesky(input, upper=upper), out, "cholesky")


def det(input):
    """``torch.det``: ``torch.linalg.det``."""
    return _la.det(input)


Slogdet = result_type("slogdet", "sign logabsdet")


def slogdet(input, *, out=None):
    """``torch.slogdet``: ``(sign, logabsdet)`` as ``torch.linalg.slogdet``."""
    return write_out(Slogdet(*_la.slogdet(input)), out, "slogdet")


def inverse(input, *, out=None):
    """``torch.inverse``: ``torch.linalg.inv``."""
    return write_out(_la.inv(input), out, "inverse")


def cholesky_solve(B, L, upper=False, *, out=None):
    """Solve ``A X = B`` given the Cholesky factor ``L`` of ``A`` (``torch.cholesky_solve``;
    ``upper``: ``L`` is the upper factor ``U`` with ``A = U^T U``); batch dims broadcast."""
    check_matrix("cholesky_solve", L, name="A")
    check_matrix("cholesky_solve", B, name="B", square=False)
    low = L.mH if upper else L
    y = _la.solve_triangular(low, B, upper=False)
    return write_out(_la.solve_triangular(low.mH, y, upper=True), out, "cholesky_solve")


def cholesky_inverse(L, upper=False, *, out=None):
    """``A^-1`` given the Cholesky factor of ``A`` (``torch.cholesky_inverse``)."""
    check_matrix("cholesky_inverse", L, name="input")
    from ._factories import eye

    n = L._array.shape[-1]
    identity = eye(n, dtype=L.dtype).expand(L.shape)
    return write_out(cholesky_solve(identity, L, upper), out, "cholesky_inverse")


_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_SYMEIG = (
    _REMOVED + "The default behavior has changed from using the upper triangular portion of the "
    "matrix by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
    "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else "
    "'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
    "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_EIG = (
    _REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
    "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced "
    "with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
    "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")
_LSTSQ = (
    _REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg."
    "lstsq` has reversed arguments and does not return the QR decomposition in the returned tuple "
    "(although it returns other information about the problem).\n\nTo get the QR decomposition "
    "consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the "
    "residuals of the solution in the last m - n columns of the returned value whenever m > n. "
    "In torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named "
    "tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution"
    "[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_SOLVE = (
    _REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` "
    "has its arguments reversed and does not return the LU factorization.\n\nTo get the LU "
    "factorization see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`."
    "\nX = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")
_MATRIX_RANK = (
    _REMOVED + "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
    "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def _removed(name, message):
    def fn(*args, **kwargs):
        raise RuntimeError(message)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}``: removed in PyTorch 1.9; raises PyTorch's RuntimeError "
                  "naming the ``torch.linalg`` replacement.")
    return fn


symeig = _removed("symeig", _SYMEIG)
eig = _removed("eig", _EIG)
lstsq = _removed("lstsq", _LSTSQ)
solve = _removed("solve", _SOLVE)
matrix_rank = _removed("matrix_rank", _MATRIX_RANK)


Svd = result_type("svd", "U S V")
Qr = result_type("qr", "Q R")
TriangularSolve = result_type("triangular_solve", "solution cloned_coefficient")


def svd(input, some=True, compute_uv=True, *, out=None):
    """``(U, S, V)`` with ``input = U diag(S) V^T`` (``torch.svd``: ``V``, not ``Vh``; ``some``
    gives the reduced form; ``compute_uv=False`` gives zero ``U (m, m)`` and ``V (n, n)``)."""
    if not compute_uv:
        from ._factories import zeros

        check_matrix("svd", input, name="input", square=False, floating=False)
        m, n = input._array.shape[-2:]
        batch = tuple(input._array.shape[:-2])
        s = _la.svdvals(input)
        res = Svd(zeros(*batch, m, m, dtype=input.dtype), s, zeros(*batch, n, n,
                                                                   dtype=input.dtype))
    else:
        u, s, vh = _la.svd(input, full_matrices=not some)
        res = Svd(u, s, vh.mT)
    return write_out(res, out, "svd")


def qr(input, some=True, *, out=None):
    """``(Q, R)`` (``torch.qr``: ``some`` for the reduced form, else complete)."""
    return write_out(Qr(*_la.qr(input, "reduced" if some else "complete")), out, "qr")


def lu(A, pivot=True, get_infos=False, out=None):
    """``(LU, pivots)`` or ``(LU, pivots, infos)`` (``torch.lu``, ``torch.linalg.lu_factor_ex``
    with the older names); a singular matrix is reported in ``infos``, not raised."""
    packed, pivots, info = _la.lu_factor_ex(A, pivot=pivot)
    res = (packed, pivots, info) if get_infos else (packed, pivots)
    return write_out(res, out, "lu")


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """``torch.lu_solve``: ``torch.linalg.lu_solve(LU_data, LU_pivots, b)``."""
    return write_out(_la.lu_solve(LU_data, LU_pivots, b), out, "lu_solve")


def matrix_power(input, n, *, out=None):
    """``torch.matrix_power``: ``torch.linalg.matrix_power``."""
    return _la.matrix_power(input, n, out=out)


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: ``torch.linalg.pinv(input, rtol=rcond)``."""
    check_tensors("pinverse", ("input", input))
    return _la.pinv(input, rtol=rcond)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``(solution, cloned_coefficient)`` of ``A X = b`` (``A^T X = b`` when ``transpose``) for
    triangular ``A`` (``torch.triangular_solve``; deprecated by PyTorch for
    ``torch.linalg.solve_triangular``)."""
    a = A.mT if transpose else A
    x = _la.solve_triangular(a, b, upper=upper != bool(transpose), unitriangular=unitriangular)
    return write_out(TriangularSolve(x, A.clone()), out, "triangular_solve")


def orgqr(input, tau):
    """``torch.orgqr``: ``torch.linalg.householder_product``."""
    check_tensors("orgqr", ("input", input), ("tau", tau))
    return _la.householder_product(input, tau)


def chain_matmul(*matrices, out=None):
    """The product of 2-D ``matrices`` in the cheapest order (``torch.chain_matmul``, deprecated
    by PyTorch for ``torch.linalg.multi_dot``)."""
    check_tensors("chain_matmul", ("matrices[]", matrices))
    if len(matrices) == 1:
        return write_out(matrices[0].clone(), out, "chain_matmul")
    return _la.multi_dot(matrices, out=out)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-D ``x`` (``torch.vander``): columns ``x^(N-1) ... x^0``, or
    increasing powers when ``increasing``."""
    check_tensors("vander", ("x", x))
    if x._array.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._array.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if n <= 1:
        from ._factories import ones

        return ones(x._array.shape[0], n, dtype=x.dtype)
    res = _la.vander(x, N=n)
    return res if increasing else res.flip(-1)


def frobenius_norm(input, dim=(), keepdim=False, *, out=None):
    """``torch.frobenius_norm`` (kept by PyTorch for JIT): the 2-norm over ``dim``."""
    check_tensors("frobenius_norm", ("input", input))
    return _la.vector_norm(input, 2, dim, keepdim, out=out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """``torch.nuclear_norm``: the sum of singular values over the last two dims (or ``dim``)."""
    check_tensors("nuclear_norm", ("input", input))
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    return _la.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, out=out)


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims
    (``torch.norm_except_dim``, weight normalisation's helper); ``dim=-1`` is the whole norm."""
    check_tensors("norm_except_dim", ("v", v))
    if dim == -1:
        return _la.vector_norm(v, pow)
    nd = v._array.ndim
    if nd == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {dim})")
    dim %= nd
    dims = tuple(d for d in range(v._array.ndim) if d != dim)
    return _la.vector_norm(v, pow, dims, keepdim=True)


def dist(input, other, p=2):
    """``||input - other||_p`` over all elements, broadcasting (``torch.dist``)."""
    check_tensors("dist", ("input", input), ("other", other))
    return named_as(_la.vector_norm(input - other, p), "DistBackward0", input, other)


def _scaled_sum(op, input, product, beta, alpha):
    out = product if alpha == 1 else product * alpha
    if beta == 0:  # NOTE: PyTorch ignores input's values (even nan) when beta == 0
        from .ops.shape import broadcast_to

        broadcast_to(input, out.shape)
        return out
    return out + (input if beta == 1 else input * beta)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)`` (``torch.addmv``)."""
    from .ops.linalg import mv

    check_tensors("addmv", ("input", input), ("mat", mat), ("vec", vec))
    if mat._array.ndim == 2 and not mat._array.size and vec._array.ndim == 1 \
            and input._array.ndim <= 1:
        # NOTE: PyTorch's kernel returns beta * input as it is (not broadcast) for an empty mat
        rows = mat._array.shape[0]
        if input._array.ndim and input._array.shape[0] not in (1, rows) \
                or mat._array.shape[1] != vec._array.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({', '.join(map(str, input.shape))}), "
                               f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
        res = input.new_zeros(input.shape) if beta == 0 else input * beta
        return write_out(res, out, "addmv")
    return write_out(_scaled_sum("addmv", input, mv(mat, vec), beta, alpha), out, "addmv")


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)`` (``torch.addr``)."""
    from .ops.linalg import outer

    check_tensors("addr", ("input", input), ("vec1", vec1), ("vec2", vec2))
    return write_out(_scaled_sum("addr", input, outer(vec1, vec2), beta, alpha), out, "addr")


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])`` (``torch.addbmm``)."""
    from .ops.linalg import bmm

    check_tensors("addbmm", ("input", input), ("batch1", batch1), ("batch2", batch2))
    product = bmm(batch1, batch2).sum(0)
    return write_out(_scaled_sum("addbmm", input, product, beta, alpha), out, "addbmm")


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """``torch.addmv_``: ``input.addmv_(mat, vec)``, in place."""
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)

