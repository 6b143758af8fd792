"""Reduction primitives and their public functions (``torch.sum``, ``amax``, ``cumsum``, ...).

``dim`` is an int, a tuple, or None (all dims); ``keepdim`` keeps reduced dims as size 1.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import dtypes
from . import primitive
from ._util import cast, is_tensor, wrap_dim, wrap_dims
from .primitive import Primitive


def _keep(grad, dims, keepdim, shape):
    """Reinsert reduced dims as size 1 so ``grad`` broadcasts against the input."""
    if keepdim or not dims:
        return grad
    from .shape import reshape

    return reshape(grad, tuple(1 if i in dims else s for i, s in enumerate(shape)))


class Sum(Primitive):
    @staticmethod
    def forward(xp, x, *, dims, keepdim, shape):
        return xp.sum(x, axis=dims, keepdims=keepdim, dtype=x.dtype)

    @staticmethod
    def backward(grad, *, dims, keepdim, shape):
        from .shape import expand

        return (expand(_keep(grad, dims, keepdim, shape), shape),)


class Prod(Primitive):
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dims, keepdim):
        return xp.prod(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim):
        from .elementwise import where

        g = _keep(grad, dims, keepdim, x.shape)
        r = _keep(result, dims, keepdim, x.shape)
        # NOTE: result / x is wrong where x == 0; fall back to the product of the others there
        if bool((x._array == 0).any()):
            return (g * _prod_others(x, dims),)
        return (where(x == 0, 0.0, g * r / x),)


def _prod_others(x, dims):
    """Product of the other elements of each reduced slice (exclusive products), differentiable."""
    from .shape import cat, flip, narrow, permute, reshape

    rest = [d for d in range(x.ndim) if d not in dims]
    moved = permute(x, *(rest + list(dims)))
    flat = reshape(moved, tuple(moved.shape[: len(rest)]) + (-1,))
    n = flat.shape[-1]
    ones = primitive._make(np.ones(flat.shape[:-1] + (1,), dtype=flat._array.dtype))

    def exclusive(v):
        return cumprod(narrow(cat([ones, v], -1), -1, 0, n), -1)

    others = exclusive(flat) * flip(exclusive(flip(flat, (-1,))), (-1,))
    return permute(reshape(others, moved.shape), *np.argsort(rest + list(dims)).tolist())


class Amax(Primitive):
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dims, keepdim):
        return xp.max(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim):
        # NOTE: ties share the gradient equally, as PyTorch's amax does
        mask = x == _keep(result, dims, keepdim, x.shape)
        count = Sum.apply(mask.to(grad.dtype), dims=dims, keepdim=True, shape=x.shape)
        return (_keep(grad, dims, keepdim, x.shape) * mask / count,)


class Amin(Amax):
    @staticmethod
    def forward(xp, x, *, dims, keepdim):
        return xp.min(x, axis=dims, keepdims=keepdim)


class Cumsum(Primitive):
    @staticmethod
    def forward(xp, x, *, dim):
        return xp.cumsum(x, axis=dim, dtype=x.dtype)

    @staticmethod
    def backward(grad, *, dim):
        from .shape import flip

        return (flip(cumsum(flip(grad, (dim,)), dim), (dim,)),)


class Cumprod(Primitive):
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dim):
        return xp.cumprod(x, axis=dim, dtype=x.dtype)

    @staticmethod
    def backward(grad, x, result, *, dim):
        from .shape import flip

        if bool((x._array == 0).any()):
            raise NotImplementedError(
                "glassgrad: cumprod backward with zeros in the input is not supported yet"
            )
        rev = flip(cumsum(flip(grad * result, (dim,)), dim), (dim,))
        return (rev / x,)


class LogSumExp(Primitive):
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dims, keepdim):
        if x.size == 0:
            return xp.log(xp.sum(xp.exp(x), axis=dims, keepdims=keepdim))
        m = xp.max(x, axis=dims, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
        out = xp.log(xp.sum(xp.exp(x - m), axis=dims, keepdims=True)) + m
        return out if keepdim else xp.squeeze(out, axis=dims)

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim):
        from .elementwise import exp

        r = _keep(result, dims, keepdim, x.shape)
        return (_keep(grad, dims, keepdim, x.shape) * exp(x - r),)


def _float_or_default(x, dtype):
    if dtype is not None:
        return cast(x, dtype.np)
    if x._array.dtype.kind in "biu":
        return cast(x, dtypes.int64.np)
    return x


def sum(input, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A001 - torch.sum
    """Sum over ``dim`` (all when None) (``torch.sum``); integers and bools sum as int64."""
    x = _float_or_default(input, dtype)
    dims = wrap_dims(dim, x._array.ndim, "sum")
    return Sum.apply(x, dims=dims, keepdim=keepdim, shape=x._array.shape)


def nansum(input, dim=None, keepdim: bool = False):
    from .elementwise import where

    return sum(where(input != input, 0.0, input), dim, keepdim)


def mean(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Arithmetic mean over ``dim`` (``torch.mean``); floating input only."""
    x = cast(input, dtype.np) if dtype is not None else input
    if not x.is_floating_point():
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {x.dtype.name.capitalize()}"
        )
    dims = wrap_dims(dim, x._array.ndim, "mean")
    n = 1
    for d in dims:
        n *= x._array.shape[d]
    return sum(x, dims, keepdim) / n


def prod(input, dim=None, keepdim: bool = False, *, dtype=None):
    x = _float_or_default(input, dtype)
    dims = wrap_dims(dim, x._array.ndim, "prod")
    return Prod.apply(x, dims=dims, keepdim=keepdim)


def amax(input, dim=(), keepdim: bool = False):
    """Maximum over ``dim`` (all when empty); ties share the gradient (``torch.amax``)."""
    dims = wrap_dims(dim if dim != () else None, input._array.ndim, "amax")
    _check_nonempty(input, dims, "amax")
    return Amax.apply(input, dims=dims, keepdim=keepdim)


def amin(input, dim=(), keepdim: bool = False):
    dims = wrap_dims(dim if dim != () else None, input._array.ndim, "amin")
    _check_nonempty(input, dims, "amin")
    return Amin.apply(input, dims=dims, keepdim=keepdim)


def _check_nonempty(x, dims, op):
    shp = x._array.shape
    if any(shp[d] == 0 for d in dims) or (not dims and x._array.size == 0):
        raise IndexError(
            f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument."
        )


MaxMin = namedtuple("MaxMin", ["values", "indices"])
torch_return_types_max = MaxMin


def _select_along(input, idx_arr, d, keepdim):
    from .indexing import gather

    idx = primitive._make(np.expand_dims(idx_arr, d))
    out = gather(input, d, idx)
    if not keepdim:
        from .shape import squeeze

        out = squeeze(out, d)
    return out


def max(input, dim=None, keepdim: bool = False):  # noqa: A001 - torch.max
    """Overall maximum; with ``dim``, ``(values, indices)``; with a Tensor, elementwise."""
    if is_tensor(dim):
        from .elementwise import maximum

        return maximum(input, dim)
    if dim is None:
        _check_nonempty(input, (), "max")
        return Amax.apply(input, dims=tuple(range(input._array.ndim)), keepdim=False)
    d = wrap_dim(dim, input._array.ndim, "max")
    idx = np.argmax(input._array, axis=d) if input._array.ndim else np.zeros((), np.int64)
    if input._array.ndim == 0:
        return MaxMin(input.clone(), primitive._make(np.zeros((), np.int64)))
    values = _select_along(input, idx, d, keepdim)
    idx_t = primitive._make(np.expand_dims(idx, d) if keepdim else idx)
    return MaxMin(values, idx_t)


def min(input, dim=None, keepdim: bool = False):  # noqa: A001 - torch.min
    if is_tensor(dim):
        from .elementwise import minimum

        return minimum(input, dim)
    if dim is None:
        _check_nonempty(input, (), "min")
        return Amin.apply(input, dims=tuple(range(input._array.ndim)), keepdim=False)
    d = wrap_dim(dim, input._array.ndim, "min")
    if input._array.ndim == 0:
        return MaxMin(input.clone(), primitive._make(np.zeros((), np.int64)))
    idx = np.argmin(input._array, axis=d)
    values = _select_along(input, idx, d, keepdim)
    idx_t = primitive._make(np.expand_dims(idx, d) if keepdim else idx)
    return MaxMin(values, idx_t)


def argmax(input, dim=None, keepdim: bool = False):
    """Index of the maximum (flattened when ``dim`` is None) (``torch.argmax``); int64."""
    if dim is None:
        return primitive._make(np.asarray(np.argmax(input._array), dtype=np.int64))
    d = wrap_dim(dim, input._array.ndim, "argmax")
    return primitive._make(np.argmax(input._array, axis=d, keepdims=keepdim).astype(np.int64))


def argmin(input, dim=None, keepdim: bool = False):
    if dim is None:
        return primitive._make(np.asarray(np.argmin(input._array), dtype=np.int64))
    d = wrap_dim(dim, input._array.ndim, "argmin")
    return primitive._make(np.argmin(input._array, axis=d, keepdims=keepdim).astype(np.int64))


def all(input, dim=None, keepdim: bool = False):  # noqa: A001 - torch.all
    dims = None if dim is None else wrap_dims(dim, input._array.ndim, "all")
    return primitive._make(np.asarray(np.all(input._array, axis=dims, keepdims=keepdim)))


def any(input, dim=None, keepdim: bool = False):  # noqa: A001 - torch.any
    dims = None if dim is None else wrap_dims(dim, input._array.ndim, "any")
    return primitive._make(np.asarray(np.any(input._array, axis=dims, keepdims=keepdim)))


def cumsum(input, dim: int, *, dtype=None):
    """Cumulative sum along ``dim`` (``torch.cumsum``)."""
    x = _float_or_default(input, dtype)
    return Cumsum.apply(x, dim=wrap_dim(dim, x._array.ndim, "cumsum"))


def cumprod(input, dim: int, *, dtype=None):
    x = _float_or_default(input, dtype)
    return Cumprod.apply(x, dim=wrap_dim(dim, x._array.ndim, "cumprod"))


def logsumexp(input, dim, keepdim: bool = False):
    """``log(sum(exp(x)))`` over ``dim``, computed stably (``torch.logsumexp``)."""
    x = input if input.is_floating_point() else cast(input, dtypes.get_default_dtype().np)
    dims = wrap_dims(dim, x._array.ndim, "logsumexp")
    return LogSumExp.apply(x, dims=dims, keepdim=keepdim)


def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Variance over ``dim`` with ``correction`` (default 1: Bessel) (``torch.var``)."""
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if isinstance(unbiased, (int, tuple, list)) and not isinstance(unbiased, bool):
        dim, unbiased = unbiased, None
    dims = wrap_dims(dim, input._array.ndim, "var")
    n = 1
    for d in dims:
        n *= input._array.shape[d]
    centred = input - mean(input, dims, keepdim=True)
    return sum(centred * centred, dims, keepdim) / _nonneg(n - correction)


def _nonneg(n):
    return n if n > 0 else 0.0


def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Standard deviation: ``sqrt(var)`` (``torch.std``)."""
    from .elementwise import sqrt

    return sqrt(var(input, dim, unbiased, keepdim, correction=correction))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """Vector p-norm over ``dim`` (all elements when None); p = 1, 2, inf, -inf, 'fro', or any
    number (``torch.norm``). The 2-norm's gradient at 0 is 0, as in PyTorch."""
    from .elementwise import abs as abs_

    x = cast(input, dtype.np) if dtype is not None else input
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("glassgrad: nuclear norm is not supported")
    dims = wrap_dims(dim, x._array.ndim, "norm")
    if p == float("inf"):
        return amax(abs_(x), dims, keepdim)
    if p == float("-inf"):
        return amin(abs_(x), dims, keepdim)
    if p == 0:
        return sum((x != 0).to(x.dtype), dims, keepdim)
    if p == 1:
        return sum(abs_(x), dims, keepdim)
    if p == 2:
        return Norm2.apply(x, dims=dims, keepdim=keepdim)
    return sum(abs_(x) ** p, dims, keepdim) ** (1.0 / p)


class Norm2(Primitive):
    node_name = "NormBackward1"
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dims, keepdim):
        return xp.sqrt(xp.sum(x * x, axis=dims, keepdims=keepdim, dtype=x.dtype))

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim):
        from .elementwise import where

        r = _keep(result, dims, keepdim, x.shape)
        g = _keep(grad, dims, keepdim, x.shape)
        # NOTE: the subgradient 0 at the origin, as PyTorch (avoids 0/0 = nan)
        return (where(r == 0, 0.0, g * x / r),)
