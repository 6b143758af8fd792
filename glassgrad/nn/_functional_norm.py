"""Instance normalisation with running statistics and local response normalisation
(``torch.nn.functional.instance_norm``, ``local_response_norm``); composed from primitives: no
derivative code."""

from __future__ import annotations

import math

import numpy as np

from ..autograd.grad_mode import no_grad
from ..ops._util import is_tensor
from .._factories import zeros
from ..ops import primitive
from ..ops.fused_norm import BatchNorm
from ..ops.elementwise import rsqrt
from ..ops.linalg import einsum
from ..ops.reduction import mean
from ..tensor import Tensor
from ._functional_layers import _check_mixed, _fusable, _half_input, _widen, pad, scale_shift
from ._functional_pool import avg_pool2d

__all__ = ["instance_norm", "local_response_norm"]


def _check_instance_args(input, running_mean, running_var, weight, bias, use_input_stats):
    """torch.instance_norm's checks, in its order; the per-channel tensors are sized against
    the (1, N*C, *) batch-norm input torch builds (its messages count N*C)."""
    from .._nn_top import _tensor_args  # NOTE: lazy: glassgrad._nn_top imports this package

    if not is_tensor(input):
        raise TypeError(f"instance_norm(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    _tensor_args("instance_norm", weight=(2, weight), bias=(3, bias),
                 running_mean=(4, running_mean), running_var=(5, running_var))
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    if input.ndim < 2:
        top = max(input.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-top}, "
                         f"{top - 1}], but got 1)\nglassgrad: instance_norm takes (N, C, *) "
                         f"input; got {list(input.shape)}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    n, c = input.shape[:2]
    if n == 0 and (weight is not None or bias is not None):
        raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0"
                         "\nglassgrad: instance_norm of an empty batch with weight or bias, as "
                         "torch refuses it")
    if input.numel() == 0:
        return
    named = (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
             ("bias", bias))
    for name, t in named:
        if is_tensor(t) and t.numel() != c:
            raise RuntimeError(f"{name} should contain {n * c} elements not {n * t.numel()}\n"
                               f"glassgrad: instance_norm wants {c} values (one per channel)")
        if is_tensor(t) and t.requires_grad and name.startswith("running"):
            raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with "
                               f"respect to argument '{name}'. This input cannot have "
                               "requires_grad True.")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """Normalise each ``(n, c)`` plane of ``(N, C, *)`` by its own mean and biased variance
    (``use_input_stats``), or by ``running_mean``/``running_var`` (C,) (evaluation), then the
    per-channel affine (``torch.nn.functional.instance_norm``). With input statistics, given
    running statistics are updated in place: ``(1 - momentum) * running + momentum * stat``
    averaged over the batch, the unbiased variance, as torch does. ValueError for one spatial
    element when using input statistics; RuntimeError without running statistics in
    evaluation, or for per-channel tensors that do not hold C values."""
    if is_tensor(input) and use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    return instance_norm_unchecked(input, running_mean, running_var, weight, bias,
                                   use_input_stats, momentum, eps)


def instance_norm_unchecked(input, running_mean, running_var, weight, bias,
                            use_input_stats, momentum, eps):
    """``torch.instance_norm``: ``instance_norm`` without the Python layer's spatial-size
    check (one spatial element then normalises to 0, as torch does)."""
    _check_instance_args(input, running_mean, running_var, weight, bias, use_input_stats)
    if input.is_floating_point():
        _check_mixed("instance_norm", input, weight, bias)
    if _half_input(input):
        return instance_norm_unchecked(*_widen(input), running_mean, running_var,
                                       *_widen(weight, bias), use_input_stats, momentum,
                                       eps).to(input.dtype)
    c, nd = input.shape[1], input.ndim
    channel = (1, c) + (1,) * (nd - 2)
    w, b = (None if t is None else t.reshape(channel) for t in (weight, bias))
    if not use_input_stats:
        mu = running_mean.to(input.dtype).reshape(channel)
        rstd = rsqrt(running_var.to(input.dtype).reshape(channel) + eps)
        return scale_shift(input, mu, rstd, w, b)
    dims = tuple(range(2, nd))
    n = input.shape[0]
    if weight is not None and n and _fusable(input, weight, bias if bias is not None else weight,
                                             1):
        # torch's own route: batch norm of the (1, N*C, *) view with the affine repeated N
        # times (one fused op, and its closed-form backward: torch's gradients at Inf weights)
        shift = bias.repeat(n) if bias is not None else zeros(n * c, dtype=weight.dtype)
        out, mu, var = BatchNorm.apply(input.reshape((1, n * c) + input.shape[2:]),
                                       weight.repeat(n), shift, dims=(0,) + dims, eps=eps)
        out = out.reshape(input.shape)
    else:
        mu = mean(input, dims, keepdim=True)
        centred = input - mu
        var = mean(centred * centred, dims, keepdim=True)
        out = scale_shift(input, mu, rsqrt(var + eps), w, b)
    size = math.prod(input.shape[2:])
    if running_mean is not None and size:
        _update_running_stats(running_mean, running_var, mu, var, n, c, size, momentum)
    return out


def _update_running_stats(running_mean, running_var, mu, var, n, c, size, momentum):
    """torch's update: each of the N repeated copies of the running statistics steps by
    ``momentum`` towards its sample's mean and unbiased variance, then the N copies are averaged
    (an empty batch leaves NaN, one spatial element a NaN variance, as in torch; an empty plane
    leaves them unchanged, as torch's empty batch norm does)."""
    with no_grad(), np.errstate(invalid="ignore"):  # 0 * inf: torch's NaN variance, silently
        if n == 0:
            for buf in (running_mean, running_var):
                buf.fill_(math.nan)
            return
        unbiased = size / (size - 1) if size > 1 else math.inf
        batch_mean = mu.detach().reshape(-1, c).mean(0)
        batch_var = var.detach().reshape(-1, c).mean(0) * unbiased
        for buf, stat in ((running_mean, batch_mean), (running_var, batch_var)):
            buf.copy_(buf * (1.0 - momentum) + stat.to(buf.dtype) * momentum)


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """``x / (k + alpha / size * sum of x**2 over the ``size`` neighbouring channels) ** beta``
    over (N, C, *) with at least one spatial dim (``torch.nn.functional.local_response_norm``);
    the channel window is zero-padded, ``size // 2`` before and ``(size - 1) // 2`` after.
    ValueError for an input of under 3 dims."""
    if not is_tensor(input):
        raise TypeError(f"local_response_norm(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim < 3:
        # NOTE: torch's message, with the run of spaces its source line continuation leaves
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    # the channel window as a (size, 1) average over (N, 1, C, everything else)
    squares = (input * input).reshape(n, 1, c, -1)
    padded = pad(squares, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(padded, (size, 1), stride=1).reshape(input.shape)
    return input / (div * alpha + k).pow(beta)


def _cross_map_window(channels: int, size: int):
    """torch's CrossMapLRN2d channel window as a (C, C) 0/1 matrix: channel c sums channels up
    to ``c + pre - 1``, ``pre = (size - 1) // 2 + 1``, from ``c - pre + 1`` on; NOTE: torch's
    running-sum loop never takes channel 0 out again, so it stays in every window (kept: the
    values are torch's)."""
    pre = int((size - 1) / 2 + 1)
    c = np.arange(channels)[:, None]
    j = np.arange(channels)[None, :]
    return ((j <= c + pre - 1) & ((j == 0) | (j > c - pre))).astype(np.float64)


def cross_map_lrn2d(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """``x * (k + alpha / size * windowed channel sum of x**2) ** -beta`` over (N, C, H, W), the
    window of torch's ``CrossMapLRN2d`` (see ``_cross_map_window``). Differentiable to any
    order as a composite; ValueError for an input that is not 4-D."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    window = primitive._make(_cross_map_window(input.shape[1], size).astype(input._array.dtype))
    sums = einsum("ij,njhw->nihw", window, input * input)
    return input * (sums * (alpha / size) + k).pow(-beta)
