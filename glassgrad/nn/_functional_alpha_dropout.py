"""Alpha dropout for SELU networks (``torch.nn.functional.alpha_dropout``,
``feature_alpha_dropout``): dropped values go to SELU's negative saturation and an affine map
keeps the mean and variance. torch's CPU arithmetic, so the numbers are torch's after the same
seed (the mask is ``bernoulli_(1 - p)`` on torch's stream)."""

from __future__ import annotations

import math

from .._factories import _rng
from .._tensor_methods import _composite_inplace
from ..tensor import Tensor
from ._functional_dropout import _check_p

_ALPHA = 1.7580993408473766  # -SELU's alpha * scale, torch's constant


def _alpha_dropout(input, p, training, feature):
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input * 0.0
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input\n"
                           f"glassgrad: got a {input.ndim}-D tensor; pass (N, C, ...).")
    shape = input._array.shape
    if feature:
        shape = shape[:2] + (1,) * (input.ndim - 2)
    dt = input._array.dtype
    noise = _rng(None).bernoulli(shape, dt, 1.0 - p)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    # torch: b = noise.add(-1).mul_(alpha * a).add_(alpha * a * p); noise.mul_(a)
    b = (noise + dt.type(-1)) * dt.type(_ALPHA * a) + dt.type(_ALPHA * a * p)
    return input * Tensor._make(noise * dt.type(a)) + Tensor._make(b)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of each element with probability ``p`` when ``training`` (note torch's
    default ``training=False``); ValueError for p outside [0, 1]
    (``torch.nn.functional.alpha_dropout``)."""
    if inplace:
        return _alpha_dropout_(input, p, training, False)
    return _alpha_dropout(input, p, training, False)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of whole channels of ``(N, C, ...)``; RuntimeError under 2 dimensions
    (``torch.nn.functional.feature_alpha_dropout``)."""
    if inplace:
        return _alpha_dropout_(input, p, training, True)
    return _alpha_dropout(input, p, training, True)


_alpha_dropout_ = _composite_inplace(_alpha_dropout, "alpha_dropout_")

__all__ = ["alpha_dropout", "feature_alpha_dropout"]
