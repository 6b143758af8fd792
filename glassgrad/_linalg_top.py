"""Top-level linear-algebra names (``torch.cholesky``, ``torch.det``, ``torch.inverse``,
``torch.cholesky_solve`` ...): thin composites of ``glassgrad.linalg`` with the older argument
conventions, and the names PyTorch removed in 1.9 that now only raise its message pointing at the
``torch.linalg`` replacement (that message is PyTorch's behaviour, so it is reproduced exactly)."""

from __future__ import annotations

import warnings

from . import linalg as _la
from .ops._linalg_check import check_matrix, result_type, write_out
from .ops.linalg_solve import logdet  # noqa: F401 - re-exported

_warned: set = set()


def _warn_once(key, message):
    if key not in _warned:  # PyTorch's TORCH_WARN_ONCE
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


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
    low = L.mT if upper else L
    y = _la.solve_triangular(low, B, upper=False)
    return write_out(_la.solve_triangular(low.mT, y, upper=True), out, "cholesky_solve")


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
