"""Activation functions of ``glassgrad.nn.functional`` (``torch.nn.functional.relu`` ...).

All are composed from primitives (``where``, ``sigmoid``, ``tanh``, ``erf``, ``softplus``); each
``where`` keeps its unused branch finite, so gradients and double backward never see ``0 * inf``.
Gradients at the kinks (x == 0, the hardtanh bounds) are PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor_methods import _composite_inplace
from ..amp.autocast import autocast_args
from ..autograd.node_names import named_as
from ..amp.autocast import state as _autocast
from ..functional import log_softmax, softmax, softmin
from ..ops._util import is_tensor
from ..ops.activation import Gelu, Hardswish, Mish, Silu, Softplus
from ..ops.elementwise import clamp, erf, expm1, sigmoid, tanh, where
from ..ops.elementwise import relu as _relu
from ..ops.fused import LeakyRelu
from ..ops.shape import chunk

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def relu(input, inplace: bool = False):
    """``max(x, 0)``; gradient 0 at 0 (``torch.nn.functional.relu``). ``inplace`` writes into x."""
    return input.relu_() if inplace else _relu(input)


def relu_(input):
    return input.relu_()


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``clamp(x, min_val, max_val)`` with gradient 0 at and beyond the bounds
    (``torch.nn.functional.hardtanh``)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    inside = (input > min_val) & (input < max_val)
    return named_as(where(inside, input, clamp(input.detach(), min_val, max_val)),
                    "HardtanhBackward0", input)


def relu6(input, inplace: bool = False):
    """``min(max(x, 0), 6)`` (``torch.nn.functional.relu6``)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``x`` where ``x > 0`` else ``negative_slope * x`` (``torch.nn.functional.leaky_relu``)."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    if (input._array.dtype.kind == "f" and type(input._array) is np.ndarray
            and isinstance(negative_slope, (int, float))):
        return LeakyRelu.apply(input, negative_slope=float(negative_slope))  # one op (ops/fused.py)
    return where(input > 0, input, input * negative_slope)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """``x`` where ``x > 0`` else ``alpha * (exp(x) - 1)`` (``torch.nn.functional.elu``)."""
    if inplace:
        return elu_(input, alpha)
    return named_as(where(input > 0, input, expm1(_negative_part(input)) * alpha), "EluBackward0",
                    input)


def _negative_part(input):
    # NOTE: x where x <= 0 else 0: expm1's unused branch stays finite for large x (no inf * 0 =
    # nan), and a NaN input keeps a NaN gradient (PyTorch's vectorised elu kernel; clamp's is 0)
    return where(input > 0, 0.0, input)


def selu(input, inplace: bool = False):
    """``scale * elu(x, alpha)`` with the self-normalising constants (``torch.nn.functional.selu``)."""
    if inplace:
        return selu_(input)
    return named_as(elu(input, _SELU_ALPHA) * _SELU_SCALE, "EluBackward0", input)


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``torch.nn.functional.celu``)."""
    if inplace:
        return celu_(input, alpha)
    return named_as(where(input > 0, input, expm1(_negative_part(input) / alpha) * alpha),
                    "CeluBackward0", input)


def gelu(input, approximate: str = "none"):
    """``x * Phi(x)``, exact (erf) or ``approximate='tanh'`` (``torch.nn.functional.gelu``)."""
    if approximate in ("none", "tanh") and input._array.dtype.kind == "f":
        return Gelu.apply(input, approximate=approximate)  # one node (ops/activation.py)
    if approximate == "none":
        return input * 0.5 * (1.0 + erf(input * (1.0 / math.sqrt(2.0))))
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2.0 / math.pi)
        return input * 0.5 * (1.0 + tanh(inner))
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input, inplace: bool = False):
    """``x * sigmoid(x)`` (``torch.nn.functional.silu``)."""
    if inplace:
        return _silu_(input)
    if input._array.dtype.kind == "f":
        return Silu.apply(input)  # one node (ops/activation.py)
    return input * sigmoid(input)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta x)) / beta``, linear where ``beta x > threshold``
    (``torch.nn.functional.softplus``)."""
    scaled = input * beta if beta != 1 else input
    soft = Softplus.apply(scaled)
    if beta != 1:
        soft = soft / beta
    return named_as(where(scaled > threshold, input, soft), "SoftplusBackward0", input)


def mish(input, inplace: bool = False):
    """``x * tanh(softplus(x))`` (``torch.nn.functional.mish``)."""
    if inplace:
        return _mish_(input)
    if input._array.dtype.kind == "f":
        return Mish.apply(input)  # one node (ops/activation.py)
    return input * tanh(Softplus.apply(input))


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)``, finite for any x (``torch.nn.functional.logsigmoid``)."""
    return named_as(-Softplus.apply(-input), "LogSigmoidBackward0", input)


def softsign(input):
    """``x / (1 + |x|)`` (``torch.nn.functional.softsign``)."""
    return input / (input.abs() + 1.0)


def hardsigmoid(input, inplace: bool = False):
    """``relu6(x + 3) / 6`` (``torch.nn.functional.hardsigmoid``); gradient 1/6 strictly inside
    (-3, 3), 0 elsewhere and at NaN, as PyTorch's."""
    if inplace:
        return _hardsigmoid_(input)
    inside = (input > -3.0) & (input < 3.0)
    return where(inside, input / 6.0 + 0.5, clamp(input.detach() / 6.0 + 0.5, 0.0, 1.0))


def hardswish(input, inplace: bool = False):
    """``x * relu6(x + 3) / 6`` (``torch.nn.functional.hardswish``); PyTorch's pieces: 0 up to
    -3 (selected, so an inf gradient gives 0 there), ``x / 3 + 0.5`` below 3, 1 from 3 and at NaN."""
    if inplace:
        return _hardswish_(input)
    if input._array.dtype.kind == "f":
        return Hardswish.apply(input)  # one node (ops/activation.py)
    return input * hardsigmoid(input)


def tanhshrink(input):
    """``x - tanh(x)`` (``torch.nn.functional.tanhshrink``)."""
    return input - tanh(input)


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``x`` where ``x > threshold`` else ``value`` (``torch.nn.functional.threshold``); NaN
    stays NaN."""
    if inplace:
        return threshold_(input, threshold, value)
    if (is_tensor(input) and input._array.dtype.kind in "iu" and isinstance(value, float)
            and not isinstance(value, bool)):
        value = int(value)  # torch casts value to an integer input's dtype (the result keeps it)
    return named_as(where(input <= threshold, value, input), "ThresholdBackward0", input)


def softshrink(input, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0 (signed as ``x``);
    NaN stays NaN, with gradient 0 as PyTorch's vectorised kernel
    (``torch.nn.functional.softshrink``). RuntimeError for a ``lambd`` outside [0, the dtype's
    largest finite value]."""
    if input.dtype.is_floating_point:
        from .._dtype_info import finfo
        from ..ops._names import scalar_type

        top = float(finfo(input.dtype).max)
        if not 0 <= lambd <= top:
            raise RuntimeError(
                f"lambda must be in range [0, {top:g}] for input dtype "
                f"{scalar_type(input.dtype)}, but found {lambd:g}")
    shifted = where(input > lambd, input - lambd, input + lambd)
    return where((input > lambd) | (input < -lambd), shifted, input.detach() * 0.0)


def hardshrink(input, lambd: float = 0.5):
    """``x`` where ``|x| > lambd`` else 0 (``torch.nn.functional.hardshrink``); NaN stays NaN
    (with gradient 0, as PyTorch's vectorised kernel)."""
    detached = input.detach()
    # NOTE: x - x is the +0 PyTorch gives inside, and NaN at NaN
    return where((input > lambd) | (input < -lambd), input, detached - detached)


def prelu(input, weight):
    """``x`` where ``x > 0`` else ``weight * x``, one weight per channel (dim 1) or one shared
    (``torch.nn.functional.prelu``)."""
    if _autocast.on:
        input, weight = autocast_args("prelu", input, weight)
    if not is_tensor(input):
        raise TypeError(f"prelu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    w = weight
    if weight.numel() != 1:
        if input.ndim < 2 and input.ndim != 1:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim >= 2 else input.shape[0]
        if weight.numel() != channels:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                f"{weight.numel()} and channel size = {channels}."
            )
        if input.ndim >= 2:
            w = weight.reshape((channels,) + (1,) * (input.ndim - 2))
    # NOTE: the slope is selected, not the product: where x > 0 an Inf/NaN weight must not reach
    # x's gradient (0 * nan), nor an infinite x the weight's (torch's prelu backward)
    return named_as(input * where(input > 0, 1.0, w), "PreluKernelBackward0", input, weight)


def glu(input, dim: int = -1):
    """``a * sigmoid(b)`` for the two halves ``a, b`` of ``input`` along ``dim``
    (``torch.nn.functional.glu``)."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % input.ndim} is size {size}"
        )
    a, b = chunk(input, 2, dim)
    return named_as(a * sigmoid(b), "GluBackward0", input)


def _in_place(fn, op):
    """``fn`` written into its input, as PyTorch's ``op``: the same values and gradients, the
    input's version bumps, and a leaf (or a view of one) that requires grad is refused."""
    method = _composite_inplace(fn, op)
    method.__doc__ = f"In-place ``{fn.__name__}`` (``torch.nn.functional.{op}``); returns input."
    return method


_NEGATIVE_SLOPE = {
    "elu": "In-place elu backward calculation is triggered with a negative slope which is not "
           "supported. This is caused by calling in-place forward function with a negative "
           "slope, please call out-of-place version instead.",
    "leakyReLu": "In-place leakyReLu backward calculation is triggered with a negative slope "
                 "which is not supported. This is caused by calling in-place forward function "
                 "with a negative slope, please call out-of-place version instead. File an issue "
                 "at https://github.com/pytorch/pytorch if you do require supporting in-place "
                 "leakRelu backward calculation with negative slope",
}


def refuse_backward(result, kernel: str) -> None:
    """Make backward through the in-place ``result`` of a negative-slope ``kernel`` raise
    torch's RuntimeError."""
    if result.requires_grad:
        def refuse(grad):
            raise RuntimeError(_NEGATIVE_SLOPE[kernel])

        result.register_hook(refuse)


def _in_place_sloped(fn, op, slope_name, default, kernel):
    """``_in_place(fn, op)`` whose backward raises torch's RuntimeError for a negative slope: an
    in-place result no longer holds the input that gradient needs."""
    method = _in_place(fn, op)

    def sloped(input, *args, **kwargs):
        result = method(input, *args, **kwargs)
        if (args[0] if args else kwargs.get(slope_name, default)) < 0:
            refuse_backward(result, kernel)
        return result

    sloped.__name__, sloped.__doc__ = op, method.__doc__
    return sloped


hardtanh_ = _in_place(hardtanh, "hardtanh_")
leaky_relu_ = _in_place_sloped(leaky_relu, "leaky_relu_", "negative_slope", 0.01, "leakyReLu")
elu_ = _in_place_sloped(elu, "elu_", "alpha", 1.0, "elu")
selu_ = _in_place(selu, "selu_")
celu_ = _in_place_sloped(celu, "celu_", "alpha", 1.0, "elu")
threshold_ = _in_place(threshold, "threshold_")
_silu_ = _in_place(silu, "silu_")  # (PyTorch has no F.silu_: inplace=True only)
_mish_ = _in_place(mish, "mish_")
_hardsigmoid_ = _in_place(hardsigmoid, "hardsigmoid_")
_hardswish_ = _in_place(hardswish, "hardswish_")


def sigmoid_(input):
    return input.sigmoid_()


def tanh_(input):
    return input.tanh_()


__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]
