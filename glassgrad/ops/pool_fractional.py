"""Fractional max pooling (Graham, 2014): PyTorch's pseudo-random window starts and the argmax
inside each window. The values are a gather at those indices, so the primitives are the max-pool
pair of ``ops/pool.py`` (gather forward, scatter-add backward, each the other's derivative) under
PyTorch's node names."""

from __future__ import annotations

import math

import numpy as np

from .pool import MaxPoolWithIndices


class FractionalMaxPool2D(MaxPoolWithIndices):
    """``fractional_max_pool2d``'s gather (its scatter backward adds where windows overlap)."""

    node_name = "FractionalMaxPool2DBackward0"


class FractionalMaxPool3D(MaxPoolWithIndices):
    """``fractional_max_pool3d``'s gather."""

    node_name = "FractionalMaxPool3DBackward0"


def window_starts(samples, in_size: int, out_size: int, kernel: int):
    """PyTorch's interval rule for one spatial dim: (N, C) samples u in [0, 1) -> (N, C, out)
    starts ``floor((i + u) * alpha) - floor(u * alpha)`` with ``alpha = (in - k) / (out - 1)``,
    the last window ending at the input's end. Evaluated in the samples' own float dtype, as
    PyTorch's kernel does, so the rounding (and so the windows) agree."""
    ft = samples.dtype.type
    starts = np.empty(samples.shape + (out_size,), dtype=np.int64)
    if out_size > 1:
        alpha = ft(in_size - kernel) / ft(out_size - 1)
        i = np.arange(out_size - 1).astype(samples.dtype)
        u = samples[..., None]
        starts[..., :-1] = (((i + u) * alpha).astype(np.int64)
                            - (u * alpha).astype(np.int64))
    if out_size > 0:
        starts[..., -1] = in_size - kernel
    return starts


def fractional_max_pool_indices(xp, x, kernel, output_size, samples):
    """Flat index into each (n, c) plane of ``x`` (N, C, *S) of the maximum of every window
    (N, C, *output_size) int64. ``samples`` (N', C, nd) float, N' >= N: sample ``nd - 1 - i``
    drives spatial dim i in 2-D (PyTorch reads the width's first), sample i in 3-D. Ties go to
    the first element in row-major window order, a NaN wins, and of several NaNs the last, as in
    PyTorch's loop."""
    n, c = x.shape[:2]
    size = x.shape[2:]
    nd = len(kernel)
    samples = np.asarray(samples)[:n]
    order = range(nd - 1, -1, -1) if nd == 2 else range(nd)
    starts = [window_starts(samples[..., j], s, o, k)
              for j, s, o, k in zip(order, size, output_size, kernel)]
    gather = [xp.arange(n).reshape((n,) + (1,) * (1 + 2 * nd)),
              xp.arange(c).reshape((1, c) + (1,) * (2 * nd))]
    for i, (start, k) in enumerate(zip(starts, kernel)):
        pos = start[..., None] + np.arange(k)  # (N, C, out_i, k_i)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + i], shape[2 + nd + i] = pos.shape[2], k
        gather.append(xp.asarray(pos.reshape(shape)))
    win = x[tuple(gather)]  # (N, C, *out, *kernel)
    flat = win.reshape(win.shape[:2 + nd] + (math.prod(kernel),))
    arg = flat.argmax(axis=-1)
    nan = xp.isnan(flat) if flat.dtype.kind == "f" else None
    if nan is not None and nan.any():
        last = flat.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1)
        arg = xp.where(nan.any(axis=-1), last, arg)
    taps = xp.unravel_index(arg, tuple(kernel))
    index = 0
    for i in range(nd):
        grid = xp.asarray(starts[i]).reshape(
            (n, c) + tuple(starts[i].shape[2] if j == i else 1 for j in range(nd)))
        index = index * size[i] + grid + taps[i]
    return xp.asarray(index, dtype=xp.int64)
