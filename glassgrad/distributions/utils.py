"""Shared helpers of the distributions: broadcasting parameters, logits <-> probs, cached
properties, triangular packing (``torch.distributions.utils``)."""

from __future__ import annotations

from numbers import Number

import numpy as np

import glassgrad as _g
from glassgrad.tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def finfo_eps(dtype) -> float:
    """Machine epsilon of a glassgrad floating dtype."""
    return float(np.finfo(dtype.np).eps)


def finfo_tiny(dtype) -> float:
    """Smallest positive normal number of a glassgrad floating dtype."""
    return float(np.finfo(dtype.np).tiny)


def broadcast_all(*values):
    """Broadcast tensors and numbers to one shape (``torch.distributions.utils.broadcast_all``):
    numbers become tensors of the first tensor's dtype (the default dtype when all are numbers).
    ValueError for an argument that is neither."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, Tensor)), _g.get_default_dtype())
        values = [v if isinstance(v, Tensor) else _g.tensor(v, dtype=dtype) for v in values]
    return _g.broadcast_tensors(*values)


def _standard_normal(shape, dtype):
    return _g.randn(tuple(shape), dtype=dtype)


def _sum_rightmost(value, dim: int):
    """Sum out the ``dim`` rightmost dims of ``value`` (none for ``dim == 0``)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: sigmoid for binary, else softmax over the last dim."""
    if is_binary:
        return _g.sigmoid(logits)
    return _g.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Probabilities clamped into ``[eps, 1 - eps]`` of their dtype, so logs stay finite."""
    eps = finfo_eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities (clamped first): ``log p - log1p(-p)`` for binary, ``log p``
    for categorical."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return _g.log(ps_clamped) - _g.log1p(-ps_clamped)
    return _g.log(ps_clamped)


class lazy_property:
    """A property computed once per instance, then stored in the instance's ``__dict__``
    (so ``Bernoulli(probs=p).logits`` is computed on first use). Read on the class it is the
    descriptor itself, which ``Distribution`` uses to skip unset parameters."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with _g.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        lazy_property.__init__(self, wrapped)
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower triangle (offset ``diag``) of the last two dims, row by row, as a vector."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, k=diag)
    return mat[..., _g.tensor(rows), _g.tensor(cols)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """Inverse of ``tril_matrix_to_vec``: a square matrix with zeros above diagonal ``diag``."""
    n = int((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag)
                                * (diag + 1)) ** 0.5) / 2)
    eps = finfo_eps(vec.dtype)
    if not _g.is_tensor(vec) or round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    rows, cols = np.tril_indices(n, k=diag)
    flat = rows * n + cols
    out = vec.new_zeros(tuple(vec.shape[:-1]) + (n * n,))
    out = out.scatter(-1, _g.tensor(flat).expand(tuple(vec.shape)), vec)
    return out.reshape(tuple(vec.shape[:-1]) + (n, n))

