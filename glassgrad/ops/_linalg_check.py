"""Argument checks, ``LinAlgError`` and the named-tuple results shared by the linear-algebra ops.

Every check raises PyTorch's message first (so it can be searched for), then glassgrad's
explanation; LAPACK failures (a singular matrix, a matrix that is not positive-definite) become
``LinAlgError`` with PyTorch's wording and the LAPACK ``info`` it quotes.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._names import scalar_type


class LinAlgError(RuntimeError):
    """A linear-algebra kernel failed on its input: a singular matrix, a matrix that is not
    positive-definite, an iteration that did not converge (``torch.linalg.LinAlgError``, a
    ``RuntimeError`` subclass)."""


LinAlgError.__module__ = "glassgrad.linalg"


def svd_finite(a):
    """PyTorch's error for a non-finite input to an SVD (also behind pinv, matrix_rank, lstsq and
    the 2/nuclear norms). LAPACK's gesdd may never return on such input, so it is not called."""
    if not np.isfinite(a).all():
        raise LinAlgError(
            "linalg.svd: The algorithm failed to converge because the input matrix contained "
            "non-finite values.\nglassgrad: the matrix has NaN or Inf entries; find where they "
            "come from (torch.autograd.set_detect_anomaly(True) names the op).")


def result_type(name: str, fields: str):
    """A named tuple type standing for ``torch.return_types.<name>``."""
    cls = namedtuple(name, fields.split())
    cls.__module__ = "glassgrad.return_types"
    return cls


def _shape(t) -> str:
    return f"a {list(t.shape)} {t.dtype} tensor"


# ops whose backward follows the complex convention (NOTE [Complex gradients] in complex_ops.py)
COMPLEX_OK = frozenset({"linalg.inv", "linalg.inv_ex", "linalg.solve", "linalg.solve_ex",
                        "linalg.eig", "linalg.eigvals", "linalg.solve_triangular", "linalg.det",
                        "linalg.cholesky", "linalg.cholesky_ex", "linalg.eigh",
                        "linalg.eigvalsh", "linalg.matrix_exp", "cholesky_solve",
                        "cholesky_inverse", "linalg.svd", "linalg.svdvals", "linalg.qr",
                        "linalg.pinv", "linalg.lu", "torch.linalg.lu_factor",
                        "torch.linalg.lu_factor_ex", "linalg.lu_solve", "linalg.slogdet",
                        "logdet", "geqrf", "linalg.cond", "linalg.matrix_rank",
                        "torch.linalg.lstsq"})


def check_float(op: str, a, name: str = "input"):
    """PyTorch's error for an integer/bool input to a floating-point linear-algebra op; complex
    input only where the op's gradient is the complex one (``COMPLEX_OK``)."""
    if a._array.dtype.kind == "c" and op not in COMPLEX_OK:
        raise RuntimeError(
            f"glassgrad: {op} supports float32 and float64 inputs; complex inputs are supported "
            f"by {', '.join(sorted(COMPLEX_OK))} (got {_shape(a)}).")
    if a._array.dtype.kind not in "fc":
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as {name}. Got "
            f"{scalar_type(a.dtype)}\nglassgrad: {op} got {_shape(a)}; convert it with .double() "
            "or .float()."
        )


def check_matrix(op: str, a, name: str = "A", square: bool = True, floating: bool = True):
    """At least 2-D, (optionally) square and floating: PyTorch's checks of a matrix argument."""
    if not hasattr(a, "_array"):
        position = 1 if name in ("A", "input", "LU", "LD") else 2
        raise TypeError(f"{op.replace('torch.', '').replace('.', '_')}(): argument '{name}' "
                        f"(position {position}) must be Tensor, not {type(a).__name__}")
    if a._array.ndim < 2:
        raise RuntimeError(
            f"{op}: The input tensor {name} must have at least 2 dimensions.\n"
            f"glassgrad: {op} got {_shape(a)}; it works on (..., m, n) matrices."
        )
    if square and a._array.shape[-1] != a._array.shape[-2]:
        m, n = a._array.shape[-2:]
        raise RuntimeError(
            f"{op}: {name} must be batches of square matrices, but they are {m} by {n} matrices"
            f"\nglassgrad: {op} got {_shape(a)}."
        )
    if floating:
        check_float(op, a)


def check_same_dtype(op: str, a, b, names=("A", "B")):
    for k, (t, n) in enumerate(((a, names[0]), (b, names[1]))):
        if not hasattr(t, "_array"):
            raise TypeError(f"{op.replace('torch.', '').replace('.', '_')}(): argument '{n}' "
                            f"(position {k + 1}) must be Tensor, not {type(t).__name__}")
    if a._array.dtype != b._array.dtype:
        raise RuntimeError(
            f"{op}: Expected {names[0]} and {names[1]} to have the same dtype, but found "
            f"{names[0]} of type {scalar_type(a.dtype)} and {names[1]} of type "
            f"{scalar_type(b.dtype)} instead\nglassgrad: convert one with .to(other.dtype)."
        )


def batch_prefix(info: np.ndarray, k_flat: int) -> str:
    """PyTorch's "(Batch element i): " for the first failing matrix of a batch, "" unbatched."""
    return f"(Batch element {k_flat}): " if info.ndim else ""


def raise_info(op: str, info: np.ndarray, message):
    """Raise ``LinAlgError`` for the first nonzero LAPACK ``info`` (``message(info_value)``)."""
    flat = np.asarray(info).reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        k = int(bad[0])
        raise LinAlgError(f"{op}: {batch_prefix(np.asarray(info), k)}{message(int(flat[k]))}")


def getrf_info(a: np.ndarray) -> np.ndarray:
    """LAPACK getrf's ``info`` per matrix of ``a (..., n, n)``: 0, or the 1-based index of the
    first zero pivot of its LU factorisation."""
    from scipy.linalg import lapack

    flat = a.reshape((-1,) + a.shape[-2:]).astype(np.float64 if a.dtype.kind == "f" else a.dtype)
    out = np.zeros(flat.shape[0], np.int32)
    for k, m in enumerate(flat):
        getrf = lapack.get_lapack_funcs("getrf", (m,))
        out[k] = max(getrf(m)[2], 0)
    return out.reshape(a.shape[:-2])


def potrf_info(a: np.ndarray, lower: bool = True) -> np.ndarray:
    """LAPACK potrf's ``info`` per matrix: 0, or the order of the first leading minor that is
    not positive-definite."""
    from scipy.linalg import lapack

    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.zeros(flat.shape[0], np.int32)
    for k, m in enumerate(flat):
        potrf = lapack.get_lapack_funcs("potrf", (m,))
        c, info = potrf(m, lower=lower, clean=True)[:2]
        # NOTE: reference LAPACK (and PyTorch's MKL) stops at a NaN pivot, OpenBLAS's potrf
        # carries it on: the first NaN on the diagonal before any failure is the failing minor
        nan = np.isnan(np.diagonal(c)[:info - 1 if info > 0 else None])
        out[k] = int(np.argmax(nan)) + 1 if nan.any() else max(info, 0)
    return out.reshape(a.shape[:-2])


def singular_inv_message(info: int) -> str:
    return (f"The diagonal element {info} is zero, the inversion could not be completed because "
            "the input matrix is singular.")


def not_pd_message(info: int) -> str:
    return (f"The factorization could not be completed because the input is not positive-definite"
            f" (the leading minor of order {info} is not positive-definite).")


def write_out(res, out, op: str):
    """``op(..., out=out)``: the result written into ``out`` (resized when its shape differs);
    PyTorch refuses ``out=`` under autograd, and so do we. A tuple result takes a tuple ``out``."""
    if out is None:
        return res
    if isinstance(res, tuple):
        return type(res)(*(write_out(r, o, op) for r, o in zip(res, out)))
    from ..autograd.grad_mode import _state

    if _state.enabled and (res._requires_grad or out._requires_grad):
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad.")
    if out._array.shape != res._array.shape:
        out._array = np.empty(res._array.shape, dtype=out._array.dtype)
    out._write(res._array, op)
    return out


def plain_arrays(*arrays):
    """NOTE [Linalg under vmap]: LAPACK kernels (NumPy's gufuncs with tuple results, SciPy's
    loops) need plain ndarrays; inside ``vmap`` an input is a ``BatchedArray``, so the forward
    asks ``Primitive.apply`` to run it once per batch entry (``VmapFallback``) instead."""
    for a in arrays:
        if type(a) is not np.ndarray and hasattr(a, "shape"):
            from .primitive import VmapFallback

            raise VmapFallback("vmap: glassgrad runs this LAPACK kernel once per batch entry")


def check_tensors(op: str, *named):
    """PyTorch's TypeError for a list, number or NumPy array passed where ``op`` takes a Tensor:
    ``named`` is ``(name, value)`` pairs in positional order (a list/tuple value is a sequence
    of Tensors, checked element by element)."""
    from ..tensor import Tensor

    for k, (name, value) in enumerate(named):
        if name.endswith("[]"):
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"{op}(): argument '{name[:-2]}' (position {k + 1}) must be tuple "
                                f"of Tensors, not {type(value).__name__}")
            for j, item in enumerate(value):
                if not isinstance(item, Tensor):
                    raise TypeError(f"expected Tensor as element {j} in argument {k}, but got "
                                    f"{type(item).__name__}")
        elif not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{name}' (position {k + 1}) must be Tensor, not "
                            f"{type(value).__name__}\nglassgrad: convert the value first with "
                            "glassgrad.tensor(value).")
