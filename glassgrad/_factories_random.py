"""The random factories (``torch.rand``, ``randn``, ``randint``, ``randperm``, ``normal``, the
``*_like`` ones, ``bernoulli``, ``multinomial``, ``poisson``): torch's numbers after the same seed
(NOTE [Torch's stream]). Imported by, and re-exported from, ``_factories``, which must be
imported first (it is, by ``glassgrad``)."""

from __future__ import annotations

import numpy as np

from . import dtypes
from ._factories import _dt, _finish, _like, _rng, _size, _size_kw
from ._factory_args import (
    _check_multinomial,
    _check_p,
    _check_randperm,
    _check_range,
    _check_std,
    _floating,
    _int_arg,
    _randint_args,
)
from .tensor import Tensor

def _float_dt(dtype, kernel: str):
    dt = _dt(dtype)
    _floating(dt, kernel)
    return dt


def _complex_samples(draw, shape, dt, scale: float):
    """torch's complex ``rand``/``randn``: the samples of the real ``(..., 2)`` view, in its
    order (normal ones scaled by ``1/sqrt(2)``, so each complex sample has variance 1)."""
    part = np.dtype(np.float64 if dt == np.complex128 else np.float32)
    pairs = draw(tuple(shape) + (2,), part)
    if scale != 1:
        pairs = pairs * part.type(scale)
    return np.ascontiguousarray(pairs).view(dt)[..., 0]


def rand(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples in [0, 1) of shape ``size`` (``torch.rand``); torch's numbers after the
    same seed (NOTE [Torch's stream]). NotImplementedError for a non-floating dtype."""
    if args and size is not None:
        raise TypeError("rand() received an invalid combination of arguments - got (int, "
                        "size=tuple), but expected one of:\n * (tuple of ints size, *, ...)")
    shape = _size_kw("rand", args, size)
    if dtype is not None and dtype.is_complex:
        return _finish(_complex_samples(_rng(generator).uniform, shape, dtype.np, 1), requires_grad)
    dt = _float_dt(dtype, "check_uniform_bounds")
    return _finish(_rng(generator).uniform(shape, dt), requires_grad)


def randn(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples of shape ``size`` (``torch.randn``); torch's numbers after the
    same seed (exactness per path: ``_sampling.py``). NotImplementedError for a non-floating
    dtype."""
    if args and size is not None:
        raise TypeError("randn() received an invalid combination of arguments - got (int, "
                        "size=tuple), but expected one of:\n * (tuple of ints size, *, ...)")
    shape = _size_kw("randn", args, size)
    if dtype is not None and dtype.is_complex:
        samples = _complex_samples(_rng(generator).normal, shape, dtype.np, 2 ** -0.5)
        return _finish(samples, requires_grad)
    dt = _float_dt(dtype, "normal_kernel_cpu")
    return _finish(_rng(generator).normal(shape, dt), requires_grad)


def randint(low=None, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    """Integers in [low, high) of shape ``size`` (``torch.randint``, also ``randint(high,
    size)`` and ``randint(high=, size=)``); int64 by default; torch's numbers after the same
    seed."""
    _randint_args(low, high, size)
    if low is None:
        low = 0
    elif size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    dt = _dt(dtype, dtypes.int64)
    _check_range(low, high, "randint", dt)
    return _finish(_rng(generator).integers(_size((size,)), dt, low, high), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of 0..n-1 (``torch.randperm``); int64. RuntimeError for n < 0.
    torch's permutation after the same seed."""
    n = _int_arg(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]\n"
                           f"glassgrad: randperm(n={n}) needs n >= 0.")
    dt = _dt(dtype, dtypes.int64)
    _check_randperm(n, dt)
    return _finish(_rng(generator).permutation(n, dt), requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False) -> Tensor:
    """Normal samples with ``mean``/``std`` numbers or tensors (``torch.normal``); RuntimeError
    for a negative std. As torch: standard normals of the broadcast shape, times std, plus mean
    (two roundings), so the numbers are torch's after the same seed."""
    m = mean._array if isinstance(mean, Tensor) else mean
    s = std._array if isinstance(std, Tensor) else std
    _check_std(s)
    eng = _rng(generator)
    if not isinstance(m, np.ndarray) and not isinstance(s, np.ndarray):
        return _finish(eng.normal(_size((size,)), _dt(dtype), m, s), requires_grad)
    shape = np.broadcast_shapes(np.shape(m), np.shape(s))
    dt = (m if isinstance(m, np.ndarray) else s).dtype
    if not isinstance(s, np.ndarray):  # normal_(0, std).add_(mean)
        out = eng.normal(shape, dt, 0.0, s) + m
    else:  # normal_(0, 1).mul_(std).add_(mean)
        out = eng.normal(shape, dt) * s + (m if isinstance(m, np.ndarray) else dt.type(m))
    return _finish(out.astype(dt, copy=False), requires_grad)


def _strided_like(input, dt):
    """torch's ``empty_like`` (preserve_format) of a non-contiguous, dense, non-overlapping
    input (a transpose, a permute): a tensor with input's strides, which an in-place sampler
    then fills in memory order as torch's does; None where torch's result is contiguous."""
    a = input._array
    if a.flags.c_contiguous or a.ndim < 2 or 0 in a.strides:
        return None
    order = np.argsort([-abs(st) for st in a.strides], kind="stable")
    if not a.transpose(order).flags.c_contiguous:
        return None
    dense = np.empty(tuple(a.shape[i] for i in order), dtype=dt)
    return Tensor._make(dense.transpose(np.argsort(order)))


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """``rand`` of ``input``'s shape and dtype (``torch.rand_like``), with input's strides
    where torch keeps them (so a transposed input gets torch's numbers in torch's places)."""
    shape, dt = _like(input, dtype, "rand_like")
    _floating(dt, "check_uniform_bounds")
    out = _strided_like(input, dt)
    if out is not None:
        return _finish(out.uniform_(generator=generator)._array, requires_grad)
    return _finish(_rng(generator).uniform(shape, dt), requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    """``randn`` of ``input``'s shape and dtype (``torch.randn_like``), with input's strides
    where torch keeps them."""
    shape, dt = _like(input, dtype, "randn_like")
    _floating(dt, "normal_kernel_cpu")
    out = _strided_like(input, dt)
    if out is not None:
        return _finish(out.normal_(generator=generator)._array, requires_grad)
    return _finish(_rng(generator).normal(shape, dt), requires_grad)


def randint_like(input, low, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """``randint`` of ``input``'s shape and dtype (``torch.randint_like``)."""
    if high is None:
        low, high = 0, low
    shape, dt = _like(input, dtype, "randint_like")
    _check_range(low, high, "randint_like", dt)
    return _finish(_rng(generator).integers(shape, dt, low, high), requires_grad)


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with probability ``input`` (or the number ``p``) (``torch.bernoulli``);
    RuntimeError for probabilities outside [0, 1]. torch's CPU kernels: a float64 uniform per
    element for a number or float64 probabilities, a float32 one for float32 probabilities."""
    if p is None:
        _floating(input._array.dtype, "bernoulli_tensor_cpu_p_")
    _check_p(input._array if p is None else p, "bernoulli")
    prob = input._array if p is None else p
    return Tensor._make(_rng(generator).bernoulli(input._array.shape, input._array.dtype, prob))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices per row of weights ``(C,)`` or ``(N, C)``
    (``torch.multinomial``); int64. RuntimeError for negative/inf/nan weights or a zero row.
    torch's samplers: with replacement, binary search of a uniform in the normalized cumulative
    weights; without, the top ``num_samples`` of ``weights / exponential``."""
    _check_multinomial(input._array, num_samples, replacement, input.dtype)
    res = _rng(generator).multinomial(input._array, num_samples, replacement)
    return Tensor._make(res.astype(np.int64, copy=False))


def poisson(input, generator=None):
    """Poisson counts with rates ``input`` (``torch.poisson``), in input's dtype; torch's
    numbers after the same seed. RuntimeError for a negative rate."""
    rates = input._array
    if rates.size and not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative\nglassgrad: "
                           "torch.poisson takes rates >= 0 (e.g. exp of a log-rate).")
    return Tensor._make(_rng(generator).poisson(rates))
