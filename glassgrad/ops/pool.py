"""Pooling primitives: max pooling as a gather at argmax indices (``MaxPoolWithIndices``, its
scatter backward ``MaxPoolBackward``), average pooling (``AvgPool``/``AvgPoolBackward``) and
adaptive average pooling as separable bin-averaging matrices (``AdaptiveAvgPool``).

Layout as in NOTE [Convolution layout] (ops/conv.py): ``(N, C, *spatial)``, padding as
``(lo, hi)`` pairs (ceil_mode only widens ``hi``). Each forward/backward pair is adjoint, so each
one's backward is the other: every order of derivative is available.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .conv import col2im, out_size, pad, windows
from .primitive import Primitive


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" or dtype.itemsize == 2 else np.iinfo(dtype).min


def max_pool_indices(xp, x, kernel, stride, padding, dilation):
    """Flat index into each (n, c) plane of ``x`` of every window's maximum: (N, C, *out) int64.

    Ties go to the first element in row-major window order; a NaN counts as the maximum (with
    several NaNs in one window PyTorch points at the last one, glassgrad at the first)."""
    nd = len(kernel)
    size = x.shape[2:]
    out = out_size(size, kernel, stride, padding, dilation)
    view = windows(xp, pad(xp, x, padding, _lowest(x.dtype)), kernel, stride, dilation, out)
    # NOTE: measured against a loop over taps (with N*C made contiguous): the copy + argmax
    # is as fast for 2x2 and faster for 3x3
    arg = view.reshape(x.shape[:2] + out + (math.prod(kernel),)).argmax(axis=-1)
    taps = xp.unravel_index(arg, kernel) if nd > 1 else (arg,)
    index = 0
    for i in range(nd):
        grid = xp.arange(out[i]).reshape((-1,) + (1,) * (nd - 1 - i))
        pos = grid * stride[i] - padding[i][0] + taps[i] * dilation[i]
        index = index * size[i] + pos
    return xp.asarray(index, dtype=xp.int64)


def adaptive_bins(size: int, out: int):
    """PyTorch's adaptive pooling bins: ``start = floor(i*size/out)``, ``end = ceil((i+1)*size/out)``."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def adaptive_max_pool_indices(xp, x, output_size):
    """Like ``max_pool_indices`` for adaptive bins (which may overlap and differ in length)."""
    nd = len(output_size)
    size = x.shape[2:]
    gather, tap_pos = [], []
    for i, (s, o) in enumerate(zip(size, output_size)):
        start, end = adaptive_bins(s, o)
        width = int((end - start).max()) if o else 1
        # NOTE: short bins repeat their last element: a repeat never changes the max or its
        # first position, and it keeps every bin the same width (one vectorised gather)
        pos = np.minimum(start[:, None] + np.arange(width), end[:, None] - 1)
        tap_pos.append(pos)
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = o, width
        gather.append(xp.asarray(pos.reshape(shape)))
    win = x[(slice(None), slice(None)) + tuple(gather)]  # (N, C, *out, *width)
    widths = win.shape[2 + nd:]
    arg = win.reshape(x.shape[:2] + tuple(output_size) + (math.prod(widths),)).argmax(axis=-1)
    taps = xp.unravel_index(arg, widths) if nd > 1 else (arg,)
    index = 0
    for i in range(nd):
        grid = xp.arange(output_size[i]).reshape((-1,) + (1,) * (nd - 1 - i))
        index = index * size[i] + xp.asarray(tap_pos[i])[grid, taps[i]]
    return xp.asarray(index, dtype=xp.int64)


def padding_only_windows(size, kernel, stride, padding, dilation, out):
    """Windows that see only padding (possible with a dilation or ceil_mode): None if there is
    none, else ``(empty, index)``, a bool mask over ``out`` and PyTorch's index for them (each
    dim's first tap at or past 0, which lies beyond the input: PyTorch's max is -inf there)."""
    nd = len(kernel)
    empty, index = np.zeros(out, bool), np.zeros(out, np.int64)
    for i in range(nd):
        start = np.arange(out[i]) * stride[i] - padding[i][0]
        taps = start[:, None] + np.arange(kernel[i]) * dilation[i]
        shape = (-1,) + (1,) * (nd - 1 - i)
        empty |= (~((taps >= 0) & (taps < size[i])).any(axis=1)).reshape(shape)
        first = start + -(np.minimum(start, 0) // dilation[i]) * dilation[i]
        index = index * size[i] + first.reshape(shape)
    return (empty, index) if empty.any() else None


class MaxPoolWithIndices(Primitive):
    """Max pooling as a gather of ``x`` at precomputed argmax ``indices`` (N, C, *out); windows
    marked ``empty`` (only padding) give ``fill`` (-inf for the max, 0 for a gradient)."""

    node_name = "MaxPool2DWithIndicesBackward0"
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, *, indices, size, unique, empty=None, fill=None):
        n, c = size[:2]
        flat = x.reshape(n, c, math.prod(size[2:]))
        if empty is not None:
            indices = xp.where(empty, 0, indices)
        index = indices.reshape(n, c, math.prod(indices.shape[2:]))
        picked = xp.take_along_axis(flat, index, axis=2).reshape(indices.shape)
        return picked if empty is None else xp.where(empty, x.dtype.type(fill), picked)

    @staticmethod
    def backward(grad, *, indices, size, unique, empty=None, fill=None):
        return (MaxPoolBackward.apply(grad, indices=indices, size=size, unique=unique,
                                      empty=empty),)


class AdaptiveMaxPool(MaxPoolWithIndices):
    """Adaptive max pooling: the same gather, at ``adaptive_max_pool_indices``."""

    node_name = "AdaptiveMaxPool2DBackward0"


class MaxPoolBackward(Primitive):
    """Scatter ``grad_output`` to the argmax positions (adds where windows overlap); ``empty``
    windows (only padding) send nothing."""

    node_name = "MaxPool2DWithIndicesBackwardBackward0"
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, grad_output, *, indices, size, unique, empty=None):
        rows, plane = size[0] * size[1], math.prod(size[2:])
        if empty is not None:
            grad_output = xp.where(empty, grad_output.dtype.type(0), grad_output)
            indices, unique = xp.where(empty, 0, indices), False  # (several may land on 0)
        grad = grad_output.reshape(rows, math.prod(grad_output.shape[2:]))
        index = indices.reshape(grad.shape)
        if unique:  # windows do not overlap: every input position is hit at most once
            out = xp.zeros((rows, plane), dtype=grad.dtype)
            xp.put_along_axis(out, index, grad, axis=1)
        else:
            flat = (index + xp.arange(rows)[:, None] * plane).ravel()
            out = xp.bincount(flat, weights=grad.ravel(), minlength=rows * plane)
            out = out.astype(grad.dtype).reshape(rows, plane)
        return out.reshape(size)

    @staticmethod
    def backward(grad, *, indices, size, unique, empty=None):
        return (MaxPoolWithIndices.apply(grad, indices=indices, size=size, unique=unique,
                                         empty=empty, fill=0),)


def avg_pool_divisor(size, kernel, stride, padding, out, count_include_pad):
    """PyTorch's divisor per output position (N-d, separable); never 0 (empty windows give 0)."""
    divisor = np.ones((), dtype=np.int64)
    for s, k, st, (lo, _), o in zip(size, kernel, stride, padding, out):
        start = np.arange(o) * st - lo
        end = np.minimum(start + k, s + lo)
        count = end - start if count_include_pad else np.minimum(end, s) - np.maximum(start, 0)
        divisor = np.multiply.outer(divisor, np.maximum(count, 1))
    return divisor


def _accumulator(xp, dtype):
    """Sum 16-bit floats in float32, as PyTorch's CPU kernels do; other dtypes in themselves."""
    return xp.dtype(xp.float32) if dtype.itemsize == 2 and dtype.kind != "i" else dtype


class AvgPool(Primitive):
    """Window sums over ``x`` divided by ``divisor`` (a number or an array of shape ``out``)."""

    node_name = "AvgPool2DBackward0"
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py (PyTorch saves the input)

    @staticmethod
    def forward(xp, x, *, kernel, stride, padding, divisor, size):
        out = out_size(x.shape[2:], kernel, stride, padding, (1,) * len(kernel))
        acc = _accumulator(xp, x.dtype)
        view = windows(xp, pad(xp, x, padding), kernel, stride, (1,) * len(kernel), out)
        total = None
        # NOTE: one whole-array add per kernel tap: measured 10-15x faster than view.sum()
        # over the tiny trailing window axes
        for taps in itertools.product(*(range(k) for k in kernel)):
            part = view[(Ellipsis,) + taps]
            total = part.astype(acc) if total is None else xp.add(total, part, out=total,
                                                                casting="unsafe")
        return (total / xp.asarray(divisor, dtype=acc)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(grad, *, kernel, stride, padding, divisor, size):
        return (AvgPoolBackward.apply(grad, kernel=kernel, stride=stride, padding=padding,
                                      divisor=divisor, size=size),)


class AvgPoolBackward(Primitive):
    """Spread ``grad_output / divisor`` over every window (the adjoint of ``AvgPool``)."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(xp, grad_output, *, kernel, stride, padding, divisor, size):
        nd = len(kernel)
        acc = _accumulator(xp, grad_output.dtype)
        grad = (grad_output / xp.asarray(divisor, dtype=acc)).astype(acc, copy=False)
        shape = grad.shape[:2] + tuple(kernel) + grad.shape[2:]
        cols = xp.broadcast_to(grad.reshape(grad.shape[:2] + (1,) * nd + grad.shape[2:]), shape)
        result = col2im(xp, cols, size[2:], kernel, stride, padding, (1,) * nd)
        return result.astype(grad_output.dtype, copy=False)

    @staticmethod
    def backward(grad, *, kernel, stride, padding, divisor, size):
        return (AvgPool.apply(grad, kernel=kernel, stride=stride, padding=padding,
                              divisor=divisor, size=size),)


def adaptive_avg_matrices(size, output_size, np_dtype) -> tuple:
    """One (out, in) bin-averaging matrix per spatial dim: adaptive average pooling is separable."""
    mats = []
    for s, o in zip(size, output_size):
        start, end = adaptive_bins(s, o)
        j = np.arange(s)
        inside = (j >= start[:, None]) & (j < end[:, None])
        mats.append((inside / np.maximum(end - start, 1)[:, None]).astype(np_dtype))
    return tuple(mats)


def _apply_matrices(xp, x, mats):
    """Contract spatial dim i of ``x`` (N, C, *S) with ``mats[i]`` (out_i, S_i)."""
    nd = len(mats)
    for i, m in enumerate(mats):
        axis = 2 + i
        if i == nd - 1:
            x = _bin_matmul(xp, x, xp.asarray(m).T)
        else:
            x = xp.moveaxis(_bin_matmul(xp, xp.moveaxis(x, axis, -1), xp.asarray(m).T), -1, axis)
    return xp.ascontiguousarray(x)


def _bin_matmul(xp, x, m):
    """``x @ m`` for a non-negative bin matrix ``m``, where an inf or NaN reaches only its own bins
    (a plain product spreads it everywhere: inf * 0 is NaN)."""
    out = xp.matmul(x, m)
    if xp.isfinite(out).all():
        return out
    finite = xp.isfinite(x)
    used = (m != 0).astype(x.dtype)
    out = xp.matmul(xp.where(finite, x, 0), m)
    pos, neg = (xp.matmul((x == xp.inf).astype(x.dtype), used) > 0,
                xp.matmul((x == -xp.inf).astype(x.dtype), used) > 0)
    nan = (xp.matmul(xp.isnan(x).astype(x.dtype), used) > 0) | (pos & neg)
    return xp.where(nan, xp.nan, xp.where(pos, xp.inf, xp.where(neg, -xp.inf, out))).astype(
        out.dtype, copy=False)


class AdaptiveAvgPool(Primitive):
    """Adaptive average pooling with PyTorch's exact bins, as one matrix product per dim."""

    node_name = "AdaptiveAvgPool2DBackward0"
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py (PyTorch saves the input)

    @staticmethod
    def forward(xp, x, *, mats):
        if x.dtype != mats[0].dtype:  # 16-bit input: float32 bins (NOTE [16-bit accumulation])
            return _apply_matrices(xp, x.astype(mats[0].dtype), mats).astype(x.dtype)
        return _apply_matrices(xp, x, mats)

    @staticmethod
    def backward(grad, *, mats):
        return (AdaptiveAvgPoolBackward.apply(grad, mats=tuple(m.T for m in mats)),)


class AdaptiveAvgPoolBackward(AdaptiveAvgPool):
    """The adjoint of ``AdaptiveAvgPool``: the same product with transposed matrices."""

    node_name = "AdaptiveAvgPool2DBackwardBackward0"

    @staticmethod
    def backward(grad, *, mats):
        return (AdaptiveAvgPool.apply(grad, mats=tuple(m.T for m in mats)),)
