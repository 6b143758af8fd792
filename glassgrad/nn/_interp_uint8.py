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


def _fixed_point_weights(dense):
    """(out_size, in_size) int64 weights and their precision (bits) for one pass."""
    biggest = dense.max()
    precision = 0
    while precision < 22 and biggest * (1 << (precision + 1)) < (1 << 15):
        precision += 1
    return np.floor(dense * (1 << precision) + 0.5).astype(np.int64), precision


def _pass(a: np.ndarray, axis: int, dense) -> np.ndarray:
    weights, precision = _fixed_point_weights(dense)
    moved = np.moveaxis(a, axis, -1).astype(np.int64)
    acc = moved @ weights.T + (1 << (precision - 1) if precision else 0)
    return np.moveaxis(np.clip(acc >> precision, 0, 255).astype(np.uint8), -1, axis)


def resample_uint8(a: np.ndarray, out_size, scales, mode="bilinear", antialias=False,
                   align_corners=False) -> np.ndarray:
    """``a`` (N, C, H, W) uint8 resampled to (N, C, *out_size) by ``mode`` (bilinear/bicubic);
    ``scales`` are ``interpolate``'s per-dim scale factors or None (torch then uses in/out)."""
    from ._interp_aa import dense_weights

    out = a
    for axis in (3, 2):  # width first, as torch's separable kernel
        in_size, size, sc = a.shape[axis], out_size[axis - 2], scales[axis - 2]
        if size != in_size or (sc is not None and sc > 0 and sc != 1.0):
            dense = dense_weights(in_size, size, mode, antialias, align_corners, sc)
            out = _pass(out, axis, dense)
    return out


def bilinear_uint8(a: np.ndarray, out_size, scales) -> np.ndarray:
    """Bilinear, align_corners=False (see ``resample_uint8``)."""
    return resample_uint8(a, out_size, scales)
