"""Norms (``torch.linalg.vector_norm``/``matrix_norm``/``norm``/``cond``): composites of the
reductions, ``abs`` and ``svdvals``; no derivative code (vector 2- and p-norms use ops/reduction.py's
primitives, whose gradient at 0 is 0 as in PyTorch)."""

from __future__ import annotations

import math

import numpy as np
from numbers import Number

from ..ops._linalg_check import check_float, check_matrix, check_tensors, write_out
from ..ops._names import scalar_type
from ..ops._util import cast, wrap_dim
from ..ops.reduction import norm as _vector_norm
from ..dtypes import bfloat16 as _bfloat16

_BF16, _F32 = _bfloat16.np, np.dtype("float32")


def _cast_dtype(op, x, dtype):
    if dtype is None:
        return x
    if dtype.np.kind not in "fc":
        raise RuntimeError(f"{op}: dtype should be floating point or complex, but got "
                           f"{scalar_type(dtype)}")
    if dtype.np.itemsize < x._array.dtype.itemsize and x._array.dtype.kind in "fc":
        raise RuntimeError(
            f"{op}: the dtype of the input ({scalar_type(x.dtype)}) should be convertible "
            f"without narrowing to the specified dtype ({scalar_type(dtype)})")
    return cast(x, dtype.np)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements when None or ``()``)
    (``torch.linalg.vector_norm``): ``ord`` any number incl. ``inf``, ``-inf`` and 0 (the count of
    nonzeros). RuntimeError for integer input (unless ``dtype`` is floating) and for an inf norm of
    an empty reduction; the gradient at 0 is 0."""
    op = "linalg.vector_norm"
    check_tensors("linalg_vector_norm", ("input", x))
    if dtype is not None and x._array.dtype.kind not in "fc":  # PyTorch checks before the cast
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type(x.dtype)}")
    if not isinstance(ord, Number) or isinstance(ord, bool):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    x = _cast_dtype(op, x, dtype)
    if x._array.dtype.kind == "c":  # the norm of the moduli (a real result, as in PyTorch)
        x = x.abs()
    if x._array.dtype == _BF16:
        # NOTE: NumPy has no bfloat16 kernels; torch accumulates a bfloat16 norm in float32 and
        # rounds the result, which the round trip below reproduces (gradient included)
        return write_out(cast(vector_norm(cast(x, _F32), ord, dim, keepdim), _BF16), out,
                         "linalg_vector_norm")
    check_float(op, x)
    if dim == ():
        dim = None
    return write_out(_vector_norm(x, ord, dim, keepdim), out, "linalg_vector_norm")


def _two_dims(op, A, dim):
    if isinstance(dim, int):
        raise TypeError(
            "linalg_matrix_norm() received an invalid combination of arguments - got (Tensor, "
            "dim=int), but expected one of:\n * (Tensor input, Number ord, tuple of ints dim = "
            "{-2,-1}, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n * "
            "(Tensor input, str ord = \"fro\", tuple of ints dim = {-2,-1}, bool keepdim = False, "
            "*, torch.dtype dtype = None, Tensor out = None)\n")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got "
                           + (" ".join(map(str, dim)) if isinstance(dim, (tuple, list)) else
                              str(dim)))
    d0, d1 = (wrap_dim(d, A._array.ndim, op) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The matrix norm of ``A`` over the two dims ``dim`` (``torch.linalg.matrix_norm``):
    ``'fro'``, ``'nuc'`` (sum of singular values), ``2``/``-2`` (largest/smallest singular value),
    ``1``/``-1`` (max/min column abs-sum), ``inf``/``-inf`` (max/min row abs-sum)."""
    op = "linalg.matrix_norm"
    check_tensors("linalg_matrix_norm", ("input", A))
    if A._array.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    A = _cast_dtype(op, A, dtype)
    check_float(op, A.abs() if A._array.dtype.kind == "c" else A)
    d0, d1 = _two_dims(op, A, dim)
    if ord == "fro":
        res = _vector_norm(A.abs() if A._array.dtype.kind == "c" else A, 2, (d0, d1), keepdim)
        return write_out(res, out, "linalg_matrix_norm")
    if ord not in ("nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    x = A.movedim((d0, d1), (-2, -1))
    if ord in ("nuc", 2, -2):
        from ..ops.linalg_decomp import svdvals

        s = svdvals(x)
        # NOTE: PyTorch's largest value of an empty set of norms is 0; the smallest raises
        res = s.sum(-1) if ord == "nuc" or ord == 2 and not s._array.shape[-1] else (
            s.amax(-1) if ord == 2 else s.amin(-1))
    else:
        sums = x.abs().sum(-2 if abs(ord) == 1 else -1)
        res = sums.sum(-1) if ord > 0 and not sums._array.shape[-1] else (
            sums.amax(-1) if ord > 0 else sums.amin(-1))
    if keepdim:
        for d in sorted((d0, d1)):
            res = res.unsqueeze(d)
    return write_out(res, out, "linalg_matrix_norm")


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """``torch.linalg.norm``: a matrix norm when ``ord`` is a string or ``dim`` a 2-tuple (or
    ``A`` is 2-D with a numeric ``ord`` and no ``dim``), else a vector norm (the 2-norm of all
    elements when both are None)."""
    op = "linalg.norm"
    check_tensors("linalg_norm", ("input", A))
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"{op}: If dim is specified, it must be of length 1 or 2. Got "
                           f"{list(dim)}")
    if ord is None:
        res = vector_norm(A, 2, dim, keepdim, dtype=dtype)
    elif dim is None:
        if A._array.ndim not in (1, 2):
            raise RuntimeError(f"{op}: If dim is not specified but ord is, the input must be 1D "
                               f"or 2D. Got {A._array.ndim}D.")
        if A._array.ndim == 2 or isinstance(ord, str):
            res = matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        else:
            res = vector_norm(A, ord, None, keepdim, dtype=dtype)
    elif len(dim) == 2:
        res = matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    else:
        res = vector_norm(A, ord, dim, keepdim, dtype=dtype)
    return write_out(res, out, "linalg_norm")


def cond(A, p=None, *, out=None):
    """The condition number of ``A`` in the ``p`` matrix norm (``torch.linalg.cond``): for
    ``None``/2/-2 the ratio of extreme singular values (any shape), else
    ``norm(A, p) * norm(inv(A), p)`` (square only); singular gives inf."""
    op = f"linalg.cond(ord={p})"
    if p in (None, 2, -2):
        check_matrix("linalg.cond", A, square=False)
        from ..ops.linalg_decomp import svdvals

        s = svdvals(A)
        res = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    else:
        check_matrix(op, A)
        from ..ops.linalg_solve import inv_ex

        inverse, info = inv_ex(A)
        res = matrix_norm(A, p) * matrix_norm(inverse, p)
        if info._array.any():
            from .. import where

            res = where(info != 0, float("inf"), res)
    return write_out(res, out, "linalg_cond")
