"""``torch.choose_qparams_optimized`` (issue 15, lane agrad): the range search PyTorch's 4/8-bit
embedding quantization uses. glassgrad has no quantized tensors; this function works on float32
tensors and returns float32 ones, so it is plain computation.

NOTE: float32 arithmetic on purpose, step by step as PyTorch's CPU kernel does it (the minimum and
the scale rounded through float16, round-half-even), so the returned range is the same number.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .ops._names import scalar_type
from .tensor import Tensor

_f32 = np.float32


def _quant_loss(x: np.ndarray, xmin, xmax, qmax):
    """The L2 error of quantizing ``x`` to ``bit_width`` bits over [xmin, xmax]."""
    xmin = _f32(np.float16(xmin))
    span = _f32(xmax - xmin)
    scale = _f32(1.0) if span == 0 else _f32(np.float16(span / qmax))
    inverse = _f32(1.0) if scale == 0 else _f32(_f32(1.0) / scale)
    q = np.clip(np.rint((x - xmin) * inverse), _f32(0.0), qmax).astype(np.float32)
    err = x - (q * scale + xmin)
    return _f32(np.sqrt(np.cumsum(err * err, dtype=np.float32)[-1]))  # summed in order, as torch


def choose_qparams_optimized(input, numel: int, n_bins: int, ratio: float, bit_width: int):
    """``(xmax, xmin)``, one-element float32 tensors: the clipping range of the first ``numel``
    elements of ``input`` that a greedy search (shrinking [min, max] by (max - min) / n_bins from
    either end, down to (1 - ratio) of it) finds with the least ``bit_width``-bit quantization
    error (``torch.choose_qparams_optimized``).

    Raises RuntimeError for a non-float32 input or a ``numel`` beyond its size, as PyTorch does.
    """
    if input.dtype != dtypes.float32:
        raise RuntimeError(f"expected scalar type Float but found {scalar_type(input.dtype)}")
    if numel < 0 or numel > input.numel():
        raise RuntimeError("numel is out of the bound of input tensor")
    if input.numel() == 0:
        raise ValueError("input tensor is empty and has no data")
    # NOTE: numel=0 reads the first element as both ends, as PyTorch's (an empty search's) does
    x = np.ascontiguousarray(input.detach()._array).reshape(-1)[:max(numel, 1)]
    xmin, xmax = _f32(x.min()), _f32(x.max())
    qmax = _f32((1 << bit_width) - 1)
    step = _f32(_f32(xmax - xmin) / _f32(n_bins))
    thr = _f32(_f32(int(n_bins * (1.0 - ratio))) * step)
    best = cur = _quant_loss(x, xmin, xmax, qmax)
    best_min, best_max, lo, hi = xmin, xmax, xmin, xmax
    while _f32(lo + thr) < hi:
        loss_left = _quant_loss(x, _f32(lo + step), hi, qmax)
        loss_right = _quant_loss(x, lo, _f32(hi - step), qmax)
        if cur < loss_left and cur < loss_right and cur < best:  # a local optimum
            best, best_min, best_max = cur, lo, hi
        if loss_left < loss_right:
            lo, cur = _f32(lo + step), loss_left
        else:
            hi, cur = _f32(hi - step), loss_right
    return (Tensor._make(np.array([best_max], np.float32)),
            Tensor._make(np.array([best_min], np.float32)))
