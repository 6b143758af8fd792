"""The interpolating modes of ``interpolate`` (``linear``/``bilinear``/``trilinear``,
``bicubic``, ``nearest-exact``, ``area``): each spatial dim resampled in turn (separable), as
gathers (``index_select``) of the source rows weighted by constant coefficients, so gradients
of every order come from the gather and the product. The source positions follow PyTorch's CPU
kernels (``area_pixel_compute_source_index``), computed in the input's arithmetic precision
(float32 for float32 and 16-bit inputs, float64 for float64)."""

from __future__ import annotations

import numpy as np

from ..ops import primitive

_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) bicubic kernel constant


def _scale(in_size: int, out_size: int, align_corners: bool, scale, ft):
    """Source step per output step (PyTorch's ``area_pixel_compute_scale``)."""
    if align_corners:
        return ft(in_size - 1) / ft(out_size - 1) if out_size > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)  # NOTE: PyTorch divides in double, then rounds
    return ft(in_size) / ft(out_size)


def _source(in_size, out_size, align_corners, scale, ft, cubic=False):
    """Real-valued source positions of each output index."""
    s = _scale(in_size, out_size, align_corners, scale, ft)
    dst = np.arange(out_size, dtype=ft)
    if align_corners:
        return s * dst
    src = s * (dst + ft(0.5)) - ft(0.5)
    return src if cubic else np.maximum(src, ft(0))


def _linear_taps(in_size, out_size, align_corners, scale, ft):
    src = _source(in_size, out_size, align_corners, scale, ft)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    lam = np.clip(src - i0.astype(ft), ft(0), ft(1))
    i1 = np.where(i0 < in_size - 1, i0 + 1, i0)
    return [(i0, ft(1) - lam), (i1, lam)]


def _cubic_taps(in_size, out_size, align_corners, scale, ft):
    src = _source(in_size, out_size, align_corners, scale, ft, cubic=True)
    base = np.floor(src)
    t = (src - base).astype(ft)
    base = base.astype(np.int64)
    a = ft(_CUBIC_A)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    return [(np.clip(base + k - 1, 0, in_size - 1), w.astype(ft)) for k, w in enumerate(weights)]


def _nearest_exact_index(in_size, out_size, scale, ft):
    s = _scale(in_size, out_size, False, scale, ft)
    src = np.floor((np.arange(out_size, dtype=ft) + ft(0.5)) * s).astype(np.int64)
    return np.minimum(src, in_size - 1)


def _weighted_gather(x, dim: int, taps, dtype):
    """sum_k x.index_select(dim, index_k) * weight_k, the weights broadcast along ``dim``."""
    shape = [1] * x.ndim
    shape[dim] = -1
    out = None
    for index, weight in taps:
        w = primitive._make(weight.astype(dtype).reshape(shape))
        term = x.index_select(dim, primitive._make(index)) * w
        out = term if out is None else out + term
    return out


def _first_row_bug(in_size, out_size) -> bool:
    # NOTE: torch 2.13's generic separable kernel (float antialias; uint8 with more than 4
    # channels) gets the vertical pass wrong when the output width is 1: its TensorIterator
    # merges height into the inner loop, which reads the first row's source index for every
    # row, so each output row repeats row 0. glassgrad refuses rather than copy that.
    return len(in_size) == 2 and out_size[1] == 1 and in_size[0] != out_size[0]


def _refuse_first_row_bug(mode, in_size, out_size, antialias):
    raise NotImplementedError(
        f"glassgrad: interpolate(mode={mode!r}, antialias={antialias}) from {tuple(in_size)} to "
        f"{tuple(out_size)} is not implemented: with an output width of 1 and the height resized, "
        "torch 2.13's CPU kernel repeats the first output row in every row; glassgrad refuses "
        "rather than give other numbers")


def resample(x, mode: str, in_size, out_size, scales, align_corners: bool, antialias=False):
    """``x`` (N, C, *in_size) resampled to (N, C, *out_size) by ``mode`` (one of the modes
    above; the argument checks are ``interpolate``'s)."""
    if mode == "area":
        from . import _functional_pool as _fp

        pool = (_fp.adaptive_avg_pool1d, _fp.adaptive_avg_pool2d, _fp.adaptive_avg_pool3d)
        return pool[len(in_size) - 1](x, out_size)
    dtype = x._array.dtype
    ft = np.float64 if dtype == np.float64 else np.float32
    if dtype == np.uint8 and len(in_size) == 2 and mode in ("bilinear", "bicubic"):
        if x.shape[1] > 4 and _first_row_bug(in_size, out_size):
            _refuse_first_row_bug(mode, in_size, out_size, antialias)
        from ._interp_uint8 import resample_uint8  # NOTE: its module docstring says why

        return primitive._make(resample_uint8(x._array, out_size, scales, mode, antialias,
                                              align_corners))
    if antialias and dtype.kind == "f":
        if _first_row_bug(in_size, out_size):
            _refuse_first_row_bug(mode, in_size, out_size, antialias)
        from ._interp_aa import dense_weights, taps

        for i, (s, o, sc) in enumerate(zip(in_size, out_size, scales)):
            if s != o:  # NOTE: torch skips a dim whose size stays, whatever its scale_factor
                dense = dense_weights(s, o, mode, True, align_corners, sc)
                x = _weighted_gather(x, 2 + i, taps(dense), dtype)
        return x
    for i, (s, o, sc) in enumerate(zip(in_size, out_size, scales)):
        dim = 2 + i
        if mode == "nearest-exact":
            if s != o:
                x = x.index_select(dim, primitive._make(_nearest_exact_index(s, o, sc, ft)))
            continue
        taps = (_cubic_taps if mode == "bicubic" else _linear_taps)(s, o, align_corners, sc, ft)
        x = _weighted_gather(x, dim, taps, dtype)
    return x

