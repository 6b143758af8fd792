"""Bilinear and bicubic ``interpolate`` of uint8 images as torch's CPU kernel computes them:
separable passes (width, then height) with fixed-point int16 weights, each pass rounded back to
uint8.

Why not float weights: torch's integer kernel rounds between its two passes, quantises its
weights and, without antialias, folds the taps that fall outside the image into the border taps
(its float kernel instead clamps their indices); floating-point resampling followed by rounding
differs from it by 1 (bilinear) up to ~15 (bicubic) in some pixels.

Per pass (``_compute_index_ranges_int16_weights`` in UpSampleKernel.cpp): the scale is
``area_pixel_compute_scale`` in double (``1 / scale_factor`` when one is given); the float
weights are the antialias kernel's (``_interp_aa.dense_weights``) or, without antialias, the
``interp_size`` taps around ``floorf(source index)`` with out-of-range taps accumulated into the
first/last valid one; ``precision`` is the largest (up to 22) keeping ``round(max weight * 2 **
(precision + 1))`` below ``2 ** 15``; weights are rounded half away from zero; a pass adds ``2 **
(precision - 1)``, shifts right by ``precision`` and clamps to 0..255. A dim whose size does not
change is not resampled (whatever the scale_factor), as in torch.
"""

from __future__ import annotations

import numpy as np


def _filter(mode: str, antialias: bool):
    from ._interp_aa import _cubic, _triangle

    return _triangle if mode == "bilinear" else _cubic(-0.5 if antialias else -0.75)


def _scale(in_size, out_size, align_corners, scale_factor) -> float:
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return in_size / out_size


def _plain_weights(in_size, out_size, mode, align_corners, scale_factor):
    """(dense (out, in) float64 weights, their running maximum) without antialias."""
    taps = 2 if mode == "bilinear" else 4
    filt = _filter(mode, False)
    scale = _scale(in_size, out_size, align_corners, scale_factor)
    support = taps // 2
    dense = np.zeros((out_size, in_size), dtype=np.float64)
    wt_max = 0.0
    for i in range(out_size):
        if align_corners:
            real = scale * i
        else:
            real = scale * (i + 0.5) - 0.5
            if taps == 2 and real < 0:
                real = 0.0
        # NOTE: torch floors through floorf, i.e. after rounding the double to float32
        index = min(int(np.floor(np.float32(real))), in_size - 1)
        lam = min(max(real - index, 0.0), 1.0)
        lo_unbound = index - support + 1
        lo = max(lo_unbound, 0)
        size = min(max(min(index + support + 1, in_size) - lo, 0), taps)
        row = np.zeros(taps)
        slot = 0
        for j in range(taps):
            w = float(filt(np.float64(j + 1 - support) - lam))
            if lo_unbound + j <= 0:
                slot = 0
            elif lo_unbound + j >= in_size - 1:
                slot = size - 1
            row[slot] += w
            wt_max = max(wt_max, row[slot])
            slot += 1
        dense[i, lo:lo + size] = row[:size]
    return dense, wt_max


def _weights(in_size, out_size, mode, antialias, align_corners, scale_factor):
    """(out_size, in_size) int64 fixed-point weights and their precision for one pass."""
    if antialias:
        from ._interp_aa import dense_weights

        dense = dense_weights(in_size, out_size, mode, True, align_corners, scale_factor)
        wt_max = float(dense.max())
    else:
        dense, wt_max = _plain_weights(in_size, out_size, mode, align_corners, scale_factor)
    precision = 0
    while precision < 22 and int(0.5 + wt_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    v = dense * (1 << precision)
    return np.trunc(np.where(v < 0, v - 0.5, v + 0.5)).astype(np.int64), precision


def _pass(a: np.ndarray, axis: int, weights, precision) -> np.ndarray:
    # each output takes a few neighbouring inputs: gather them tap by tap instead of a dense
    # (out, in) product
    nonzero = weights != 0
    lo = np.where(nonzero.any(1), nonzero.argmax(1), 0)
    width = max(int((nonzero.shape[1] - nonzero[:, ::-1].argmax(1) - lo)[nonzero.any(1)].max(
        initial=1)), 1)
    moved = np.moveaxis(a, axis, -1).astype(np.int64)
    rows = np.arange(weights.shape[0])
    acc = np.full(moved.shape[:-1] + (weights.shape[0],), 1 << (precision - 1), dtype=np.int64)
    for k in range(width):
        index = np.minimum(lo + k, weights.shape[1] - 1)
        w = np.where(lo + k < weights.shape[1], weights[rows, index], 0)
        acc += moved[..., index] * w
    return np.moveaxis(np.clip(acc >> precision, 0, 255).astype(np.uint8), -1, axis)


def resample_uint8(a: np.ndarray, out_size, scales, mode="bilinear", antialias=False,
                   align_corners=False) -> np.ndarray:
    """``a`` (N, C, H, W) uint8 resampled to (N, C, *out_size) by ``mode`` (bilinear/bicubic);
    ``scales`` are ``interpolate``'s per-dim scale factors or None (torch then uses in/out)."""
    out = a
    for axis in (3, 2):  # width first, as torch's separable kernel
        in_size, size = a.shape[axis], out_size[axis - 2]
        if size != in_size:
            weights, precision = _weights(in_size, size, mode, antialias, align_corners,
                                          scales[axis - 2])
            out = _pass(out, axis, weights, precision)
    return np.ascontiguousarray(out)
