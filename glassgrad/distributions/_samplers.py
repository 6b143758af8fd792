"""Samplers torch has and glassgrad's stream lacked: ``_standard_gamma``, ``_sample_dirichlet``,
``binomial``. They draw with NumPy's generators seeded from glassgrad's generator (two words
of its mt19937 stream per call), so ``manual_seed`` makes them reproducible; the numbers are
not torch's (torch's gamma sampler is Marsaglia-Tsang on its own stream)."""

from __future__ import annotations

import numpy as np

from glassgrad._generator import _engine
from glassgrad.ops.gamma_sample import StandardGamma, StandardGammaGrad
from glassgrad.tensor import Tensor

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "binomial"]


def _numpy_rng(generator) -> np.random.Generator:
    words = _engine(generator).words(2)
    return np.random.Generator(np.random.PCG64((int(words[0]) << 32) | int(words[1])))


def _floating(t, op: str, name: str):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position 1) must be Tensor, not "
                        f"{type(t).__name__}")
    if not t.dtype.is_floating_point:
        raise ValueError(f"{op} only supports floating-point dtypes for {name}, got: "
                         f"{t.dtype}\nglassgrad: convert it first, e.g. {name}.float().")


def _standard_gamma(alpha, generator=None):
    """Samples of Gamma(alpha, 1), one per element, differentiable w.r.t. ``alpha`` by the
    implicit reparameterisation (``torch._standard_gamma``)."""
    _floating(alpha, "_standard_gamma", "self")
    arr = alpha._array
    draws = _numpy_rng(generator).standard_gamma(arr.astype(np.float64)).astype(arr.dtype)
    return StandardGamma.apply(alpha, sample=np.asarray(draws))


def _standard_gamma_grad(alpha, x):
    """``d x / d alpha`` of standard gamma samples ``x`` (``torch._standard_gamma_grad``)."""
    return StandardGammaGrad.apply(alpha, x)


def _sample_dirichlet(concentration, generator=None):
    """Dirichlet samples over the last dim, as normalised gamma draws
    (``torch._sample_dirichlet``); differentiable through the gammas."""
    gammas = _standard_gamma(concentration, generator)
    return gammas / gammas.sum(-1, keepdim=True)


def binomial(count, prob, generator=None):
    """Binomial counts with ``count`` trials of success probability ``prob``, elementwise, in
    ``count``'s dtype (``torch.binomial``); not differentiable. RuntimeError for probabilities
    outside [0, 1] or negative counts."""
    _floating(count, "binomial", "count")
    c, p = np.broadcast_arrays(count._array, prob._array)
    if c.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("binomial: expected probabilities in [0, 1]\nglassgrad: prob "
                           "holds values outside [0, 1].")
    if c.size and not (c >= 0).all():
        raise RuntimeError("binomial: expected a non-negative count\nglassgrad: count holds "
                           "negative values.")
    draws = _numpy_rng(generator).binomial(c.astype(np.int64), p.astype(np.float64))
    return Tensor._make(draws.astype(count._array.dtype))
