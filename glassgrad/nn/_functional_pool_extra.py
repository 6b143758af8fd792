"""Pooling names beyond the core family (issue 16): the ``*_with_indices`` spellings,
``adaptive_max_pool3d`` and power-average pooling ``lp_pool1d/2d/3d``. Everything composes the
pooling functions of ``_functional_pool.py``: no derivative code here."""

from __future__ import annotations

import math
import numbers

from ..ops.elementwise import sign
from ..tensor import Tensor
from ._functional_activation import relu
from ._functional_pool import (
    _adaptive_max_poolnd,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)

__all__ = [
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool3d_with_indices",
]


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool3d`` returning ``(values, indices)`` whatever ``return_indices`` says
    (``torch.nn.functional.max_pool3d_with_indices``); indices are int64 flat offsets into each
    (D*H*W) plane."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d`` returning ``(values, indices)``
    (``torch.nn.functional.adaptive_max_pool1d_with_indices``)."""
    return _adaptive_max_poolnd(input, output_size, True, 1, "adaptive_max_pool1d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over PyTorch's adaptive bins: (N, C, D, H, W) or (C, D, H, W) -> (N, C,
    *output_size) (``torch.nn.functional.adaptive_max_pool3d``); None entries of
    ``output_size`` keep the input size; optionally also the int64 flat indices into each
    (D*H*W) plane. RuntimeError for an input that is not 4-D or 5-D."""
    return _adaptive_max_poolnd(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d`` returning ``(values, indices)``
    (``torch.nn.functional.adaptive_max_pool3d_with_indices``)."""
    return adaptive_max_pool3d(input, output_size, True)


def _window_volume(kernel_size, nd: int, op: str) -> int:
    """The number of elements of one window (torch unpacks ``kernel_size`` before pooling)."""
    if nd == 1:
        if not isinstance(kernel_size, numbers.Integral):
            # NOTE: torch's key phrase: it multiplies the pooled tensor by kernel_size
            raise TypeError(f"mul(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(kernel_size).__name__}\nglassgrad: {op} takes kernel_size "
                            "as one int")
        return int(kernel_size)
    sizes = (kernel_size,) * nd if isinstance(kernel_size, numbers.Integral) else tuple(
        kernel_size)
    if len(sizes) != nd:
        # NOTE: Python's own unpacking messages, which torch raises here
        what = (f"not enough values to unpack (expected {nd}, got {len(sizes)})"
                if len(sizes) < nd else f"too many values to unpack (expected {nd})")
        raise ValueError(f"{what}\n"
                         f"glassgrad: {op} takes an int or {nd} ints as kernel_size")
    return math.prod(int(k) for k in sizes)


_POOLS = {1: (max_pool1d, avg_pool1d), 2: (max_pool2d, avg_pool2d), 3: (max_pool3d, avg_pool3d)}


def _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, nd: int):
    op = f"lp_pool{nd}d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    volume = _window_volume(kernel_size, nd, op)
    max_pool, avg_pool = _POOLS[nd]
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    mean = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    # NOTE: torch's rule: sign(mean) * relu(|mean|) equals the mean but has a zero gradient
    # where the mean is 0 (an all-zero window: no inf * 0 = NaN from 0 ** (1/p - 1)); times the
    # window volume it is the sum of powers (also for ceil_mode's partial windows, as in torch)
    return (sign(mean) * relu(mean.abs())).mul(volume).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """Power-average pooling ``(sum over the window of x**p) ** (1/p)`` over (N, C, L) or
    (C, L) (``torch.nn.functional.lp_pool1d``): ``norm_type`` p=inf is max-of-abs pooling, -inf
    min-of-abs; no padding; ``stride`` defaults to ``kernel_size``. TypeError for a
    non-int ``kernel_size``, as in torch."""
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """Power-average pooling over (N, C, H, W) or (C, H, W)
    (``torch.nn.functional.lp_pool2d``); see ``lp_pool1d``. ValueError when ``kernel_size`` is
    not one int or two."""
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W)
    (``torch.nn.functional.lp_pool3d``); see ``lp_pool1d``."""
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 3)
