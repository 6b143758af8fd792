"""Reduction primitives and their public functions (``torch.sum``, ``amax``, ``var``, ``norm``, ...).

``dim`` is an int, a tuple, or None (all dims); ``keepdim`` keeps reduced dims as size 1. Scans
(``cumsum``, ``cumprod``) live in scan.py; ``max``/``min``/``arg*`` with a dim in selection.py.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from ..amp.autocast import autocast_arg
from ..amp.autocast import state as _autocast
from ..autograd.grad_mode import _state as _grad_mode
from ..autograd.node_names import named_as
from . import primitive
from ._names import scalar_type
from ._numpy_warnings import prod_of, sum_of
from ._util import cast, half, widened, wrap_dim, wrap_dims
from .primitive import Primitive
from .reduction_backward import MeanBackward, SumBackward
from .scan import Cumprod, Cumsum, cumprod, cumsum, logcumsumexp  # noqa: F401 - re-exported
from .selection import (  # noqa: F401 - re-exported
    MaxMin,
    aminmax,
    argmax,
    argmin,
    max,
    min,
)
from .._user_warning import warn_user


def reduce_dims(dim, ndim: int, op: str) -> tuple:
    """``dim`` (int, tuple, list or None) -> sorted non-negative dims; () for a 0-d input, whose
    only valid dims are 0 and -1 (PyTorch's rule)."""
    if ndim == 0:
        if dim is not None:
            dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
            for d in dims:
                wrap_dim(int(d), 0, op)
            if len(dims) > 1:
                raise RuntimeError("dim 0 appears multiple times in the list of dims")
        return ()
    return wrap_dims(dim, ndim, op)


def keep_dims(grad, dims, keepdim, shape):
    """Reinsert reduced dims as size 1 so ``grad`` broadcasts against the input."""
    if keepdim or not dims:
        return grad
    from .shape import reshape

    return reshape(grad, tuple(1 if i in dims else s for i, s in enumerate(shape)))


class Sum(Primitive):
    @staticmethod
    def forward(xp, x, *, dims, keepdim, shape):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return sum_of(xp, x, dims, keepdim, np.float32).astype(x.dtype)
        return sum_of(xp, x, dims, keepdim, x.dtype)

    @staticmethod
    def backward(grad, *, dims, keepdim, shape):
        return (SumBackward.apply(grad, dims=dims, keepdim=keepdim, shape=shape),)


class SumDim(Sum):
    """``sum(x, dim)``: the same op; PyTorch names its node SumBackward1."""

    node_name = "SumBackward1"


class Mean(Primitive):
    @staticmethod
    def forward(xp, x, *, dims, keepdim, shape, n):
        if n == 0:
            with np.errstate(invalid="ignore"):
                return xp.sum(x, axis=dims, keepdims=keepdim, dtype=x.dtype) / x.dtype.type(0)
        # NOTE: NumPy's mean is this sum divided by the count (NOTE [NumPy warnings])
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return (sum_of(xp, x, dims, keepdim, np.float32) / np.float32(n)).astype(x.dtype)
        return sum_of(xp, x, dims, keepdim, x.dtype) / x.dtype.type(n)

    @staticmethod
    def backward(grad, *, dims, keepdim, shape, n):
        from .shape import expand

        if n:
            return (MeanBackward.apply(grad, dims=dims, keepdim=keepdim, shape=shape, n=n),)
        # NOTE: divide after expanding, as PyTorch: with n == 0 the expanded grad is empty, and
        # double backward then sums an empty tensor (0), not 0 / 0
        return (expand(keep_dims(grad, dims, keepdim, shape), shape) / n,)


class MeanDim(Mean):
    """``mean(x, dim)``: the same op; PyTorch names its node MeanBackward1."""

    node_name = "MeanBackward1"


class Prod(Primitive):
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dims, keepdim):
        return prod_of(xp, x, dims, keepdim)

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim):
        g = keep_dims(grad, dims, keepdim, x.shape)
        # NOTE: result / x is wrong where x == 0: use the product of the other elements there
        zeros = int((x._array == 0).sum())
        if zeros:
            if zeros > 1 and len(dims) == x.ndim and not _grad_mode.enabled:
                # PyTorch's prod() (all dims, first order): zeros, even for an inf/NaN grad
                from .piecewise import zero_grad

                return (zero_grad(x),)
            return (g * _prod_others(x, dims),)
        return (g * keep_dims(result, dims, keepdim, x.shape) / x,)


def _prod_others(x, dims):
    """Product of the other elements of each reduced slice: the exclusive prefix product times the
    exclusive suffix product (exact with zeros, and differentiable through cumprod)."""
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
    def forward(xp, x, *, dims, keepdim, evenly=False):
        return xp.max(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim, evenly=False):
        # NOTE: ties share the gradient equally, as PyTorch's amax and max() do; max() (evenly)
        # also shares it among NaNs when the result is NaN (PyTorch's evenly_distribute_backward)
        r = keep_dims(result, dims, keepdim, x.shape)
        if evenly:  # NOTE: PyTorch's masked_fill: 0 off the ties even for an inf/NaN grad
            from .elementwise import select_grad

            ties = (x == r) | (x.isnan() & r.isnan())
            count = Sum.apply(ties.to(grad.dtype), dims=dims, keepdim=True, shape=x.shape)
            return (select_grad(ties, keep_dims(grad, dims, keepdim, x.shape) / count),)
        mask = (x == r).to(grad.dtype)  # (amax/amin: PyTorch multiplies by the mask)
        count = Sum.apply(mask, dims=dims, keepdim=True, shape=x.shape)
        return (keep_dims(grad, dims, keepdim, x.shape) * mask / count,)


class Amin(Amax):
    @staticmethod
    def forward(xp, x, *, dims, keepdim, evenly=False):
        return xp.min(x, axis=dims, keepdims=keepdim)


class MaxAll(Amax):  # x.max(): PyTorch's node for the overall max (NOTE [Node names], shape.py)
    node_name = "MaxBackward1"


class MinAll(Amin):
    node_name = "MinBackward1"


class LogSumExp(Primitive):
    node_name = "LogsumexpBackward0"
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dims, keepdim):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(LogSumExp.forward, xp, x, dims=dims, keepdim=keepdim)
        if x.size == 0:
            with np.errstate(divide="ignore"):
                return xp.log(xp.sum(xp.exp(x), axis=dims, keepdims=keepdim))
        m = xp.max(x, axis=dims, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
        with np.errstate(divide="ignore"):
            out = xp.log(xp.sum(xp.exp(x - m), axis=dims, keepdims=True)) + m
        return out if keepdim else xp.squeeze(out, axis=dims)

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim):
        from .elementwise import exp

        r = keep_dims(result, dims, keepdim, x.shape)
        return (keep_dims(grad, dims, keepdim, x.shape) * exp(x - r),)


class Var(Primitive):
    """Variance with ``correction`` (one ``xp.var`` call); backward ``2 (x - mean) / (N - c)``."""

    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, dims, keepdim, correction):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(Var.forward, xp, x, dims=dims, keepdim=keepdim, correction=correction)
        with np.errstate(divide="ignore", invalid="ignore"):
            if correction < _count(x.shape, dims):
                return xp.var(x, axis=dims, ddof=correction, keepdims=keepdim)
            with warnings.catch_warnings():  # NumPy's "Degrees of freedom <= 0": var() warned
                warnings.simplefilter("ignore", RuntimeWarning)
                return xp.var(x, axis=dims, ddof=correction, keepdims=keepdim)

    @staticmethod
    def backward(grad, x, *, dims, keepdim, correction):
        n = 1
        for d in dims:
            n *= x.shape[d]
        centred = x - mean(x, dims, keepdim=True)
        scale = 2.0 / (n - correction) if n > correction else float("nan")
        return (keep_dims(grad, dims, keepdim, x.shape) * centred * scale,)


class Norm2(Primitive):
    node_name = "LinalgVectorNormBackward0"  # PyTorch 2.x: norm() is linalg.vector_norm
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dims, keepdim):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(Norm2.forward, xp, x, dims=dims, keepdim=keepdim)
        return xp.sqrt(xp.sum(x * x, axis=dims, keepdims=keepdim, dtype=x.dtype))

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim):
        r = keep_dims(result, dims, keepdim, x.shape)
        g = keep_dims(grad, dims, keepdim, x.shape)
        # NOTE: the subgradient 0 at the origin, as PyTorch; the safe divisor keeps the unused
        # branch of where() finite, so double backward does not see 0 * inf = nan
        # (grad times the masked x / r, as PyTorch: an inf grad at the origin gives nan)
        zero = r == 0
        return (g * _where(zero, 0.0, x / _where(zero, 1.0, r)),)


class NormP(Primitive):
    """The vector p-norm for a finite ``p`` other than 0, 1, 2 (PyTorch's masking at 0)."""

    node_name = "LinalgVectorNormBackward0"
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x, *, dims, keepdim, p):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(NormP.forward, xp, x, dims=dims, keepdim=keepdim, p=p)
        with np.errstate(divide="ignore"):
            return xp.sum(xp.abs(x) ** p, axis=dims, keepdims=keepdim) ** (1.0 / p)

    @staticmethod
    def backward(grad, x, result, *, dims, keepdim, p):
        from .elementwise import abs as abs_
        from .elementwise import sign

        r = keep_dims(result, dims, keepdim, x.shape)
        g = keep_dims(grad, dims, keepdim, x.shape)
        x_zero = x == 0
        scaled = sign(x) * _where(x_zero, 0.0, abs_(_where(x_zero, 1.0, x)) ** (p - 1))
        if p < 1:  # PyTorch: grad * r ** (1 - p), unmasked (0 at the origin; nan for inf grad)
            return (scaled * (g * r ** (1.0 - p)),)
        r_zero = r == 0
        return (scaled * _where(r_zero, 0.0, g / _where(r_zero, 1.0, r) ** (p - 1)),)


def _where(cond, a, b):
    from .elementwise import where

    return where(cond, a, b)


def _float_or_default(x, dtype):
    if dtype is not None:
        return cast(x, dtype.np)
    if x._array.dtype.kind in "biu":
        return cast(x, dtypes.int64.np)
    return x


def _require_float(x, op):
    if not x.is_floating_point() and x._array.dtype.kind != "c":
        raise RuntimeError(
            f"{op}(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {scalar_type(x.dtype)}\n"
            f"glassgrad: {op} of a {list(x.shape)} {x.dtype} tensor; convert it with .float() "
            "or pass dtype=glassgrad.float32."
        )


def sum(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Sum over ``dim`` (all when None) (``torch.sum``); integers and bools sum as int64.

    Example: ``glassgrad.ones(2, 3).sum(1)`` is ``tensor([3., 3.])``."""
    if input._sparse:  # NOTE [Sparse operands] in sparse/_coo.py
        return input.sum(dim, keepdim, dtype=dtype)
    if _autocast.on and dtype is None:
        input = autocast_arg("sum", input)
    x = _float_or_default(input, dtype)
    dims = reduce_dims(dim, x._array.ndim, "sum")
    prim = Sum if dim is None else SumDim
    return prim.apply(x, dims=dims, keepdim=keepdim, shape=x._array.shape)


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Sum treating NaN as zero (``torch.nansum``); NaN entries get zero gradient."""
    from .elementwise import where

    x = where(np.isnan(input._array), 0, input) if input.is_floating_point() else input
    return sum(x, dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Arithmetic mean over ``dim`` (``torch.mean``); floating input only (RuntimeError else)."""
    x = cast(input, dtype.np) if dtype is not None else input
    _require_float(x, "mean")
    dims = reduce_dims(dim, x._array.ndim, "mean")
    n = 1
    for d in dims:
        n *= x._array.shape[d]
    prim = Mean if dim is None else MeanDim
    return prim.apply(x, dims=dims, keepdim=keepdim, shape=x._array.shape, n=n)


def prod(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Product over one ``dim`` or all elements (``torch.prod``); exact gradients with zeros."""
    if _autocast.on and dtype is None:
        input = autocast_arg("prod", input)
    x = _float_or_default(input, dtype)
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(
            f"prod() received an invalid combination of arguments - got dim={dim!r}: prod takes "
            "one int dim (glassgrad: reduce over several dims by calling prod once per dim, or "
            "flatten them first)"
        )
    dims = reduce_dims(dim, x._array.ndim, "prod")
    return Prod.apply(x, dims=dims, keepdim=keepdim if dim is not None else False)


def _check_nonempty(x, dims, op, dim_given):
    shp = x._array.shape
    if not dim_given and x._array.size == 0:
        raise RuntimeError(
            f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument."
        )
    for d in dims:
        if shp[d] == 0:
            raise IndexError(
                f"{op}(): Expected reduction dim {d} to have non-zero size.\n"
                f"glassgrad: the input has shape {list(shp)}; a maximum/minimum of nothing is "
                "undefined."
            )


def amax(input, dim=(), keepdim: bool = False):
    """Maximum over ``dim`` (all when empty); ties share the gradient (``torch.amax``)."""
    given = dim not in ((), None)
    dims = reduce_dims(dim if given else None, input._array.ndim, "amax")
    _check_nonempty(input, dims, "amax", given)
    return Amax.apply(input, dims=dims, keepdim=keepdim)


def amin(input, dim=(), keepdim: bool = False):
    """Minimum over ``dim`` (all when empty); ties share the gradient (``torch.amin``)."""
    given = dim not in ((), None)
    dims = reduce_dims(dim if given else None, input._array.ndim, "amin")
    _check_nonempty(input, dims, "amin", given)
    return Amin.apply(input, dims=dims, keepdim=keepdim)


def _logical(np_fn, name):
    def fn(input, dim=None, keepdim: bool = False):
        arr = input._array
        axis = None if dim is None else reduce_dims(dim, arr.ndim, name)
        out = np_fn(arr, axis=axis, keepdims=keepdim)  # NOTE: _make takes NumPy scalars
        # NOTE: PyTorch keeps uint8 for uint8 input, bool otherwise
        return primitive._make(out.astype(np.uint8) if arr.dtype == np.uint8 else out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Whether {'all' if name == 'all' else 'any'} elements over ``dim`` are nonzero "
        f"(``torch.{name}``); bool result (uint8 for uint8 input), no gradient."
    )
    return fn


all = _logical(np.all, "all")
any = _logical(np.any, "any")


def logsumexp(input, dim, keepdim: bool = False):
    """``log(sum(exp(x)))`` over ``dim``, computed stably (``torch.logsumexp``)."""
    if _autocast.on:
        input = autocast_arg("logsumexp", input)
    x = input if input._array.dtype.kind in "fcV" else cast(input, dtypes.get_default_dtype().np)
    dims = reduce_dims(dim, x._array.ndim, "logsumexp")
    if x._array.dtype.kind == "c":  # composed: shifted by the largest real part, as torch
        top = np.max(x._array.real, axis=dims, keepdims=True) if x._array.size else \
            np.zeros([1 if d in dims else n for d, n in enumerate(x._array.shape)])
        top = np.where(np.isfinite(top), top, 0).astype(x._array.real.dtype)
        total = (x - primitive._make(top)).exp().sum(dim=dims, keepdim=keepdim).log()
        return total + primitive._make(top if keepdim else np.squeeze(top, axis=dims))
    return LogSumExp.apply(x, dims=dims, keepdim=keepdim)


def _correction(dim, unbiased, correction, op):
    """PyTorch's overloads: ``var(x, unbiased)``, ``var(x, dim, unbiased, keepdim)``,
    ``var(x, dim, correction=c)`` -> (dim, correction)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(
            f"{op}() received an invalid combination of arguments - got both unbiased and "
            "correction (glassgrad: unbiased=False is correction=0, unbiased=True is correction=1)"
        )
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def _count(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Variance over ``dim`` with ``correction`` (default 1: Bessel) (``torch.var``).

    Accepts ``var(x, dim)``, ``var(x, dim, unbiased)``, ``var(x, unbiased)`` and ``correction=``;
    floating input only (RuntimeError else). Warns (UserWarning, as PyTorch) and gives nan/inf
    when ``correction`` is not below the number of reduced elements."""
    return _var(input, dim, unbiased, keepdim, correction, "var")


def _var(input, dim, unbiased, keepdim, correction, op):
    dim, correction = _correction(dim, unbiased, correction, op)
    if input._array.dtype.kind == "c":  # the variance of the parts' sum: a real result
        from .complex_ops import imag, real

        return (_var(real(input), dim, None, keepdim, correction, op)
                + _var(imag(input), dim, None, keepdim, correction, op))
    if not input.is_floating_point():
        raise RuntimeError(
            "std and var only support floating point and complex dtypes\n"
            f"glassgrad: got a {list(input.shape)} {input.dtype} tensor; call .float() first."
        )
    dims = reduce_dims(dim, input._array.ndim, op)
    if _count(input._array.shape, dims) - correction <= 0:
        warn_user(
            f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    return Var.apply(input, dims=dims, keepdim=keepdim, correction=correction)


class StdFromVar(Primitive):
    """``sqrt(var)`` whose gradient is 0 where the deviation is 0 (a constant input), as in
    PyTorch's std, instead of the plain square root's inf * 0 = nan."""

    node_name = "StdBackward0"
    saves = ("result",)

    @staticmethod
    def forward(xp, x):
        return xp.sqrt(x)

    @staticmethod
    def backward(grad, result):
        from .elementwise import where

        zero = result == 0
        return (where(zero, 0.0, grad / (2 * where(zero, 1.0, result))),)


def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Standard deviation: ``sqrt(var)``; same arguments as ``var`` (``torch.std``). The gradient
    is 0 where the deviation is 0, as in PyTorch."""
    return StdFromVar.apply(_var(input, dim, unbiased, keepdim, correction, "std"))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim`` (``torch.var_mean``)."""
    v = _var(input, dim, unbiased, keepdim, correction, "var_mean")
    dim, _ = _correction(dim, unbiased, correction, "var_mean")
    # torch's one node for both outputs: each output's node takes its name
    return (named_as(v, "VarMeanBackward0", input),
            named_as(mean(input, dim, keepdim), "VarMeanBackward0", input))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim`` (``torch.std_mean``)."""
    s = StdFromVar.apply(_var(input, dim, unbiased, keepdim, correction, "std_mean"))
    dim, _ = _correction(dim, unbiased, correction, "std_mean")
    return (named_as(s, "StdMeanBackward0", input),
            named_as(mean(input, dim, keepdim), "StdMeanBackward0", input))


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """Vector p-norm over ``dim`` (all elements when None); p = 1, 2, inf, -inf, 'fro', 0 or any
    number (``torch.norm``). Gradients at 0 are 0, as in PyTorch; 'nuc' is not supported."""
    if _autocast.on and dtype is None:
        input = autocast_arg("norm", input)
    from .elementwise import abs as abs_
    from .elementwise import sign

    x = cast(input, dtype.np) if dtype is not None else input
    if x._array.dtype.kind == "c":  # a vector norm of z is the norm of |z|
        x = abs_(x)
    if not x.is_floating_point():
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{scalar_type(x.dtype)}\nglassgrad: norm of a {list(x.shape)} {x.dtype} "
            "tensor; call .float() first."
        )
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise NotImplementedError(f"glassgrad: norm(p={p!r}) is not supported (only vector norms)")
    dims = reduce_dims(dim, x._array.ndim, "norm")
    if p in (float("inf"), float("-inf")):
        shape = x._array.shape
        if 0 in [shape[d] for d in dims] or (x._array.size == 0 and not dims):
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {p} norm on an empty tensor because the "
                f"operation does not have an identity\nglassgrad: norm of a {list(shape)} tensor "
                f"over dims {list(dims)}."
            )
        return (amax if p > 0 else amin)(abs_(x), dims, keepdim)
    if p == 0:  # the count of nonzeros; abs(sign(x)) keeps a (zero) gradient path, as PyTorch
        return sum(abs_(sign(x)), dims, keepdim)
    if p == 1:
        return sum(abs_(x), dims, keepdim)
    if p == 2:
        return Norm2.apply(x, dims=dims, keepdim=keepdim)
    return NormP.apply(x, dims=dims, keepdim=keepdim, p=float(p))
