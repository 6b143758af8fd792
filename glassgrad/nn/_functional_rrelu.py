"""Randomized leaky ReLU (``torch.nn.functional.rrelu``, ``rrelu_``, ``torch.rrelu``,
``torch.rrelu_``). Composed: no derivative code.

Training draws each non-positive element's slope from ``U(lower, upper)`` the way torch's CPU
kernel does (one ``uniform_real_distribution<double>`` draw per element with ``x <= 0``, in
order), so after the same seed the slopes are torch's; the output is ``input * noise`` with a
constant noise tensor, whose gradient is the sampled slope. Eval is ``leaky_relu`` with the mean
slope ``(lower + upper) / 2``.
"""

from __future__ import annotations

import numpy as np

from .._factories import _rng
from .._tensor_methods import _composite_inplace
from ..ops._names import scalar_type
from ..tensor import Tensor
from ._functional_activation import leaky_relu

__all__ = ["rrelu", "rrelu_"]

_LOWER, _UPPER = 1.0 / 8.0, 1.0 / 3.0


def _rrelu(input, lower=_LOWER, upper=_UPPER, training=False, generator=None):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound\n"
                           f"glassgrad: rrelu got lower={lower}, upper={upper}.")
    if not training:
        return leaky_relu(input, (lower + upper) / 2.0)
    x = input._array
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(
            f'"rrelu_with_noise_out_cpu" not implemented for \'{scalar_type(input.dtype)}\'')
    negative = np.ascontiguousarray(x <= 0).reshape(-1)
    noise = np.ones(x.size, dtype=x.dtype)
    unit = _rng(generator)._unit(int(negative.sum()), np.float64)
    # NOTE: torch holds the bounds in the input's type first (float32's 0.05 is not 0.05)
    lo, hi = float(x.dtype.type(lower)), float(x.dtype.type(upper))
    noise[negative] = unit * (hi - lo) + lo
    return input * Tensor._make(noise.reshape(x.shape))


def rrelu(input, lower: float = _LOWER, upper: float = _UPPER, training: bool = False,
          inplace: bool = False):
    """``x`` where ``x > 0`` else ``a x``, with ``a ~ U(lower, upper)`` per element when
    ``training`` (torch's slopes after the same seed) and ``a = (lower + upper) / 2`` otherwise
    (``torch.nn.functional.rrelu``). Float32/float64 input of any shape. RuntimeError when
    ``lower > upper``; NotImplementedError for other dtypes in training."""
    if inplace:
        return rrelu_(input, lower, upper, training)
    return _rrelu(input, lower, upper, training)


_rrelu_inplace = _composite_inplace(_rrelu, "rrelu_")


def rrelu_(input, lower: float = _LOWER, upper: float = _UPPER, training: bool = False):
    """In-place ``rrelu`` (``torch.nn.functional.rrelu_``); returns ``input``. Outside training
    a negative mean slope makes backward raise, as torch (it is then an in-place leaky_relu_)."""
    return _refuse_negative(_rrelu_inplace(input, lower, upper, training), lower, upper,
                            training)


def _refuse_negative(result, lower, upper, training):
    if not training and (lower + upper) / 2 < 0:
        from ._functional_activation import refuse_backward

        refuse_backward(result, "leakyReLu")
    return result


def rrelu_top(input, lower: float = _LOWER, upper: float = _UPPER, training: bool = False,
              generator=None):
    """``torch.rrelu``: ``F.rrelu`` with a ``generator`` for the training slopes."""
    return _rrelu(input, lower, upper, training, generator)


def rrelu_top_(input, lower: float = _LOWER, upper: float = _UPPER, training: bool = False,
               generator=None):
    """``torch.rrelu_``: in-place ``torch.rrelu``; returns ``input``."""
    return _refuse_negative(_rrelu_inplace(input, lower, upper, training, generator), lower,
                            upper, training)


# NOTE: published as torch.rrelu / torch.rrelu_, so errors and reprs name them so
rrelu_top.__name__, rrelu_top_.__name__ = "rrelu", "rrelu_"
