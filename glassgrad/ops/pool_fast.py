"""2-D max-pooling argmax as a loop over the window's taps: the fast path of ``max_pool2d``.

``ops/pool.py``'s ``max_pool_indices`` copies every window into a contiguous row to ``argmax`` it;
for 2-D pooling that copy, the argmax over short rows and the index arithmetic took ~70% of a
small CNN's pooling time. Here each tap of the windows is one strided view of the input: the
running maximum and the winning tap are updated tap by tap (a few kernels on arrays of the output's
size), and the flat index is looked up from the tap at the end. Same indices, ties and NaNs as
``max_pool_indices`` (first tap wins a tie; the first NaN counts as the maximum).
"""

from __future__ import annotations

import numpy as np

from .conv import out_size, pad, windows
from .pool import _lowest


def max_pool2d_indices(xp, x, kernel, stride, padding, dilation):
    """Flat index into each (n, c) plane of ``x`` (N, C, H, W) of every window's maximum:
    (N, C, H_out, W_out) int64, as ``ops.pool.max_pool_indices`` for two spatial dims."""
    width = x.shape[3]
    out = out_size(x.shape[2:], kernel, stride, padding, dilation)
    view = windows(xp, pad(xp, x, padding, _lowest(x.dtype)), kernel, stride, dilation, out)
    taps = kernel[0] * kernel[1]
    best = view[..., 0, 0].copy()
    winner = xp.zeros(best.shape, dtype=np.int8 if taps < 128 else np.int64)
    nan = x.dtype.kind not in "biu" and bool(xp.isnan(x).any())
    seen_nan = xp.isnan(best) if nan else None
    offsets = np.empty(taps, dtype=np.int64)  # tap -> flat offset from the window's corner
    t = 0
    for ti in range(kernel[0]):
        for tj in range(kernel[1]):
            offsets[t] = ti * dilation[0] * width + tj * dilation[1]
            if t:
                v = view[..., ti, tj]
                wins = v > best
                if nan:  # a NaN beats everything but an earlier NaN
                    v_nan = xp.isnan(v)
                    wins |= v_nan & ~seen_nan
                    seen_nan |= v_nan
                    xp.copyto(best, v, where=wins)
                else:
                    xp.maximum(best, v, out=best)
                winner -= wins * winner  # 0 where this tap wins, then add the tap
                winner += wins * winner.dtype.type(t)
            t += 1
    rows = xp.arange(out[0]) * stride[0] - padding[0][0]
    cols = xp.arange(out[1]) * stride[1] - padding[1][0]
    return offsets.take(winner) + (rows[:, None] * width + cols[None, :])
