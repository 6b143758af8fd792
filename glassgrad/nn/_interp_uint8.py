"""Bilinear ``interpolate`` of uint8 images as torch's CPU kernel computes it: separable passes
(width, then height) with fixed-point int16 weights, each pass rounded back to uint8.

Why not float weights: torch's integer kernel rounds between its two passes and quantises its
weights, so floating-point bilinear followed by rounding differs from it by 1 in a few percent of
the pixels. The weights are the antialias kernel's triangle (support 1, i.e. plain bilinear) at
centres ``scale * (i + 0.5)``, normalised per output pixel, scaled by ``2**precision`` where
``precision`` is the largest (up to 22) that keeps the biggest weight below ``2**15``.
"""

from __future__ import annotations

import numpy as np


def _fixed_point_weights(in_size: int, out_size: int, scale: float):
    """(out_size, in_size) int64 weights and their precision (bits) for one pass."""
    dense = np.zeros((out_size, in_size), dtype=np.float64)
    for i in range(out_size):
        center = scale * (i + 0.5)
        lo = max(int(center - 0.5), 0)  # int() of center - support + 0.5, support 1
        hi = min(int(center + 1.5), in_size)
        j = np.arange(lo, hi)
        w = np.clip(1.0 - np.abs(j - center + 0.5), 0.0, None)
        total = w.sum()
        dense[i, lo:hi] = w / total if total > 0 else w
    biggest = dense.max()
    precision = 0
    while precision < 22 and biggest * (1 << (precision + 1)) < (1 << 15):
        precision += 1
    return np.floor(dense * (1 << precision) + 0.5).astype(np.int64), precision


def _pass(a: np.ndarray, axis: int, out_size: int, scale: float) -> np.ndarray:
    weights, precision = _fixed_point_weights(a.shape[axis], out_size, scale)
    moved = np.moveaxis(a, axis, -1).astype(np.int64)
    acc = moved @ weights.T + (1 << (precision - 1) if precision else 0)
    return np.moveaxis(np.clip(acc >> precision, 0, 255).astype(np.uint8), -1, axis)


def bilinear_uint8(a: np.ndarray, out_size, scales) -> np.ndarray:
    """``a`` (N, C, H, W) uint8 resampled to (N, C, *out_size) (align_corners=False); ``scales``
    are ``interpolate``'s per-dim scale factors or None (torch then uses in/out)."""
    out = a
    for axis in (3, 2):  # width first, as torch's separable kernel
        in_size, size, sc = a.shape[axis], out_size[axis - 2], scales[axis - 2]
        if size != in_size or (sc is not None and sc > 0 and sc != 1.0):
            step = 1.0 / sc if sc is not None and sc > 0 else in_size / size
            out = _pass(out, axis, size, step)
    return out
