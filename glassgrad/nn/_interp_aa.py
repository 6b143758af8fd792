"""Separable resampling weights of torch's CPU antialias kernels (``_compute_weights_aa`` in
UpSampleKernel.cpp), shared by the float antialias path and the uint8 fixed-point path.

Per output index ``i``: centre ``scale * (i + 0.5 - delta)`` (``delta`` 0.5 only for
align_corners without antialias), support ``interp_size / 2`` widened by ``scale`` when
antialiasing a downscale, weights ``filter((j - centre + 0.5) / max(scale, 1))`` normalised.
"""

from __future__ import annotations

import numpy as np


def _triangle(x):
    return np.clip(1.0 - np.abs(x), 0.0, None)


def _cubic(a):
    def f(x):
        x = np.abs(x)
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1, near, np.where(x < 2, far, 0.0))
    return f


def dense_weights(in_size, out_size, mode, antialias, align_corners, scale_factor):
    """(out_size, in_size) float64 weights of one separable pass."""
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    elif scale_factor is not None and scale_factor > 0:
        scale = 1.0 / scale_factor
    else:
        scale = in_size / out_size
    interp = 2 if mode == "bilinear" else 4
    filt = _triangle if mode == "bilinear" else _cubic(-0.5 if antialias else -0.75)
    wide = antialias and scale >= 1.0
    support = interp * 0.5 * scale if wide else interp * 0.5
    invscale = 1.0 / scale if wide else 1.0
    delta = 0.5 if (align_corners and not antialias) else 0.0
    dense = np.zeros((out_size, in_size), dtype=np.float64)
    for i in range(out_size):
        center = scale * (i + 0.5 - delta)
        lo = max(int(center - support + 0.5 + delta), 0)
        hi = min(int(center + support + 0.5 + delta), in_size)
        j = np.arange(lo, hi)
        w = filt((j - center + 0.5 - delta) * invscale)
        total = w.sum()
        dense[i, lo:hi] = w / total if total != 0 else w
    return dense


def taps(dense):
    """The dense weights as (index, weight) tap pairs, zero-padded to the widest row."""
    out_size, in_size = dense.shape
    nz = [np.nonzero(row)[0] for row in dense]
    width = max((len(r) for r in nz), default=1) or 1
    result = []
    for k in range(width):
        idx = np.array([r[k] if k < len(r) else 0 for r in nz], dtype=np.int64)
        w = np.array([dense[i, r[k]] if k < len(r) else 0.0 for i, r in enumerate(nz)])
        result.append((idx, w))
    return result
