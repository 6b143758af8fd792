"""Pooling and resampling functions (``torch.nn.functional.max_pool2d``, ``avg_pool2d``,
``adaptive_avg_pool2d``, ``interpolate``...): PyTorch's argument checks and output sizes here,
the arithmetic in ``glassgrad/ops/pool.py``. 1-D and 3-D variants share the N-d code."""

from __future__ import annotations

import math

import numpy as np

from ..autograd.node_names import named_as
from ..backend import xp
from ..ops import pool as _pool
from ..ops import primitive
from ..ops.pool_fast import max_pool2d_indices
from ..tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "interpolate",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "upsample",
    "upsample_nearest",
]


def _ntuple(value, n: int, name: str, op: str = "convolution") -> tuple:
    """An int or a sequence of ``n`` ints as a tuple of ``n`` ints."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    out = tuple(int(v) for v in value)
    if len(out) == 1:
        return out * n
    if len(out) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match the "
            f"{op} dimensions, but got {name}={list(out)}"
        )
    return out


def _batched(input, nd: int, op: str):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2) and nd > 1:
        raise RuntimeError(
            f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input\n"
            f"glassgrad: {op} got input of shape {list(input.shape)}; add or remove a dim."
        )
    if input.ndim not in (nd + 1, nd + 2) or input.ndim == nd + 2 and 0 in input.shape[1:] or (
            input.ndim == nd + 1 and 0 in input.shape):
        raise RuntimeError(
            f"{op + ': ' if nd == 1 else ''}Expected {nd + 1}D or {nd + 2}D (batch mode) tensor "
            f"with optional 0 dim batch size for input, but got:{list(input.shape)}"
        )
    return (input, True) if input.ndim == nd + 2 else (input.unsqueeze(0), False)


def _dims(prefix: str, values) -> str:
    """PyTorch's ``dH: 2 dW: 2`` style (T/H/W for the last three dims)."""
    names = "DHW"[3 - len(values):] if len(values) <= 3 else "0123456789"
    return " ".join(f"{prefix}{n}: {v}" for n, v in zip(names, values))


def _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode, nd, op):
    """Checked (kernel, stride, ((lo, hi), ...), dilation, out) of a pooling window, PyTorch's
    output size (ceil_mode widens only the high padding) and errors."""
    kernel = _ntuple(kernel_size, nd, "kernel_size", op)
    stride = kernel if stride is None or stride == [] or stride == () else _ntuple(
        stride, nd, "stride", op)
    pads = _ntuple(padding, nd, "padding", op)
    dilation = _ntuple(dilation, nd, "dilation", op)
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got {_dims('d', stride)}")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got {_dims('k', kernel)}")
    if any(p < 0 for p in pads):
        raise RuntimeError(f"pad must be non-negative, but got pad: {list(pads)} (in {op})")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(
            f"dilation should be greater than zero, but got {_dims('dilation', dilation)}"
        )
    size = x.shape[2:]
    out, padding_pairs = [], []
    for s, k, st, p, d in zip(size, kernel, stride, pads, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}"
            )
        o = (s + 2 * p - d * (k - 1) - 1 + (st - 1 if ceil_mode else 0)) // st + 1
        if ceil_mode and (o - 1) * st >= s + p:
            o -= 1
        out.append(o)
        padding_pairs.append((p, p + max(0, (o - 1) * st + d * (k - 1) + 1 - (s + 2 * p))))
    if any(o <= 0 for o in out):
        c = x.shape[1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (c,) + tuple(size)))}). Calculated output "
            f"size: ({'x'.join(map(str, (c,) + tuple(out)))}). Output size is too small"
        )
    return kernel, stride, tuple(padding_pairs), dilation, tuple(out)


def _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd, op):
    x, batched = _batched(input, nd, op)
    kernel, stride, pads, dilation, out_shape = _pool_geometry(
        x, kernel_size, stride, padding, dilation, ceil_mode, nd, op)
    if nd == 2 and type(x._array) is np.ndarray:  # the tap-loop argmax (ops/pool_fast.py)
        indices = max_pool2d_indices(xp, x._array, kernel, stride, pads, dilation)
    else:
        indices = _pool.max_pool_indices(xp, x._array, kernel, stride, pads, dilation)
    unique = all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))
    # NOTE: a window can see only padding only with a dilation or ceil_mode (pad <= kernel / 2)
    empty = None
    if ceil_mode or any(d > 1 for d in dilation):
        found = _pool.padding_only_windows(x.shape[2:], kernel, stride, pads, dilation,
                                           out_shape)
        if found is not None:
            empty = xp.broadcast_to(found[0], indices.shape)
            indices = xp.where(empty, found[1], indices)
    out = _pool.MaxPoolWithIndices.apply(x, indices=indices, size=x.shape, unique=unique,
                                         empty=empty, fill=_pool._lowest(x._array.dtype))
    return _finish(out, indices, batched, return_indices)


def _finish(out, indices, batched, return_indices):
    if not batched:
        out = out.squeeze(0)
        indices = indices[0]
    if return_indices:
        # NOTE: a copy: the node keeps the array as an attribute (not a saved tensor), so an
        # in-place edit of the returned indices must not reach its backward
        return out, primitive._make(indices.copy())
    return out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L) (``torch.nn.functional.max_pool1d``)."""
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                       1, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out)
    (``torch.nn.functional.max_pool2d``). ``stride`` defaults to ``kernel_size``; padding is
    -inf and at most half the effective kernel; ``return_indices`` also returns the int64 flat
    index of each maximum in its (H*W) plane. Gradients flow to the argmax (first on ties)."""
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                       2, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling over (N, C, D, H, W) (``torch.nn.functional.max_pool3d``)."""
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                       3, "max_pool3d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, nd, op):
    x, batched = _batched(input, nd, op)
    kernel, stride, pads, _, out = _pool_geometry(x, kernel_size, stride, padding, 1, ceil_mode,
                                                  nd, op)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        divisor = divisor_override
    else:
        divisor = _pool.avg_pool_divisor(x.shape[2:], kernel, stride, pads, out,
                                         count_include_pad)
        if (divisor == divisor.flat[0]).all():
            divisor = int(divisor.flat[0])
    result = _pool.AvgPool.apply(x, kernel=kernel, stride=stride, padding=pads, divisor=divisor,
                                 size=x.shape)
    return result if batched else result.squeeze(0)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling over (N, C, L) or (C, L) (``torch.nn.functional.avg_pool1d``)."""
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                       1, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out)
    (``torch.nn.functional.avg_pool2d``). Zero padding counts in the divisor unless
    ``count_include_pad=False``; ``divisor_override`` replaces the divisor (RuntimeError if 0)."""
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, 2, "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) (``torch.nn.functional.avg_pool3d``)."""
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, 3, "avg_pool3d")


def _adaptive_size(x, output_size, nd, op) -> tuple:
    if isinstance(output_size, (int, np.integer)):
        output_size = (int(output_size),) * nd
    sizes = tuple(s if o is None else int(o) for o, s in zip(output_size, x.shape[2:]))
    if len(tuple(output_size)) != nd:
        raise RuntimeError(f"{op}: output_size must be {nd}, but got {len(tuple(output_size))}")
    if any(o < 0 for o in sizes):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 "
                           f"but received {list(sizes)}")
    shape = list(x.shape[:2]) + ([1] if nd == 1 else []) + list(sizes)  # torch pools 1-D as 2-D
    numel = math.prod(shape)
    if numel > (1 << 63) - 1 and "avg" in op:
        raise RuntimeError("numel: integer multiplication overflow")
    if numel * x._array.dtype.itemsize > (1 << 63) - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={shape}")
    return sizes


def _adaptive_input(input, nd: int, op: str):
    if not isinstance(input, Tensor):
        kind = type(input)
        what = kind.__name__ if kind.__module__ == "builtins" else (
            f"{kind.__module__}.{kind.__name__}")
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {what}")
    if input.ndim not in (nd + 1, nd + 2):
        sep = ":" if "max" in op else ""
        raise RuntimeError(
            f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep} {list(input.shape)}")
    return (input, True) if input.ndim == nd + 2 else (input.unsqueeze(0), False)


def _adaptive_avg_poolnd(input, output_size, nd, op):
    x, batched = _adaptive_input(input, nd, op)
    size = tuple(x.shape[2:])
    out = _adaptive_size(x, output_size, nd, op)
    spatial = tuple(range(2, 2 + nd))
    if all(o == 1 for o in out) and x.numel():
        result = x.mean(dim=spatial, keepdim=True)  # global average pooling: one reduction
    elif all(o and s % o == 0 for s, o in zip(size, out)):
        kernel = tuple(s // o for s, o in zip(size, out))  # equal bins: plain average pooling
        result = _pool.AvgPool.apply(x, kernel=kernel, stride=kernel, padding=((0, 0),) * nd,
                                     divisor=math.prod(kernel), size=x.shape)
    else:
        mats = _pool.adaptive_avg_matrices(size, out, _pool._accumulator(np, x._array.dtype))
        result = _pool.AdaptiveAvgPool.apply(x, mats=mats)
    return result if batched else result.squeeze(0)


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """Adaptive average pooling over (N, C, L) (``torch.nn.functional.adaptive_avg_pool1d``)."""
    return _adaptive_avg_poolnd(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average over PyTorch's adaptive bins (``start = floor(i*H/out)``, ``end =
    ceil((i+1)*H/out)``): (N, C, H, W) or (C, H, W) -> (N, C, *output_size)
    (``torch.nn.functional.adaptive_avg_pool2d``). ``output_size`` is an int or a pair whose
    None entries keep the input size."""
    return _adaptive_avg_poolnd(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """Adaptive average pooling over (N, C, D, H, W) (``torch.nn.functional.adaptive_avg_pool3d``)."""
    return _adaptive_avg_poolnd(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_max_poolnd(input, output_size, return_indices, nd, op):
    x, batched = _adaptive_input(input, nd, op)
    size = tuple(x.shape[2:])
    out = _adaptive_size(x, output_size, nd, op)
    indices = _pool.adaptive_max_pool_indices(xp, x._array, out)
    unique = all(o and s % o == 0 for s, o in zip(size, out))
    result = _pool.AdaptiveMaxPool.apply(x, indices=indices, size=x.shape, unique=unique)
    return _finish(result, indices, batched, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive max pooling over (N, C, L) (``torch.nn.functional.adaptive_max_pool1d``)."""
    return _adaptive_max_poolnd(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over PyTorch's adaptive bins: (N, C, H, W) -> (N, C, *output_size)
    (``torch.nn.functional.adaptive_max_pool2d``); optionally also the int64 flat indices."""
    return _adaptive_max_poolnd(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def _nearest_index(in_size: int, out_size: int, scale) -> np.ndarray:
    """PyTorch's nearest source index, in float32 arithmetic as its CPU kernel computes it."""
    if out_size == in_size:
        return np.arange(out_size)
    if out_size == 2 * in_size:
        return np.arange(out_size) >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else (
        np.float32(in_size) / np.float32(out_size))
    src = np.floor(np.arange(out_size, dtype=np.float32) * s).astype(np.int64)
    return np.minimum(src, in_size - 1)


# spatial dims each mode requires (None: any of 1-3)
_MODE_DIMS = {"nearest": None, "nearest-exact": None, "area": None, "linear": 1, "bilinear": 2,
              "bicubic": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False) -> Tensor:
    """Resize (N, C, *spatial) by ``size`` or ``scale_factor`` (``torch.nn.functional
    .interpolate``): modes nearest, nearest-exact, linear (3-D input), bilinear / bicubic (4-D),
    trilinear (5-D), area, with PyTorch's source-index rules (``align_corners``, a given scale
    used unless ``recompute_scale_factor``); antialias=True (bilinear/bicubic, torch's separable
    AA kernels) and uint8 bilinear/bicubic (torch's fixed-point int16 kernels) included; other
    integer input to the weighted modes raises NotImplementedError.
    Nearest with integer factors is a broadcast (fast, exact gradient sums); the other modes are
    weighted gathers (see _functional_interp.py)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | "
                "bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    nd = input.ndim - 2
    # NOTE: PyTorch names the needed dims for the linear family; bicubic gets the general error
    if mode not in _MODE_DIMS or nd < 1 or nd > 3 or (mode == "bicubic" and nd != 2):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})"
        )
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if antialias and not (mode in ("bilinear", "bicubic") and nd == 2):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    need = _MODE_DIMS[mode]
    if need is not None and need != nd:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {need + 2}D input"
        )
    in_size = tuple(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        from ._interp_dtypes import check_size

        out = check_size(size, in_size, mode)
        scales = (None,) * nd
    else:
        scales = tuple(float(s) for s in (
            scale_factor if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * nd))
        if len(scales) != nd:
            raise ValueError(
                f"Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(in_size)} and scale_factor of shape "
                f"{list(scales)}."
            )
        out = tuple(math.floor(s * f) for s, f in zip(in_size, scales))
        if recompute_scale_factor:
            scales = (None,) * nd
    from ._interp_dtypes import check_dtype, check_sizes

    check_sizes(mode, in_size, out)
    check_dtype(input, mode, nd, out, bool(antialias))
    from ._memory_layout import like_input  # NOTE: torch's output takes a channels-last input's

    x = input
    if mode != "nearest":
        from ._functional_interp import resample

        return _named(like_input(resample(x, mode, in_size, out, scales, align_corners,
                                          bool(antialias)), input), input, mode, nd, antialias)
    factors = [o // s if s and o % s == 0 else 0 for s, o in zip(in_size, out)]
    if all(factors) and all(sc is None or sc == f for sc, f in zip(scales, factors)):
        # integer factors: insert a size-f axis after each spatial dim and broadcast into it
        shape = list(x.shape[:2])
        for s in in_size:
            shape += [s, 1]
        full = list(x.shape[:2])
        for s, f in zip(in_size, factors):
            full += [s, f]
        return _named(like_input(x.reshape(shape).expand(*full).reshape(*x.shape[:2], *out),
                                 input), input, mode, nd, antialias)
    for i, (s, o, sc) in enumerate(zip(in_size, out, scales)):
        if s != o:
            index = primitive._make(_nearest_index(s, o, sc))
            x = x.index_select(2 + i, index)
    return _named(like_input(x, input), input, mode, nd, antialias)


_UPSAMPLE = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact",
             "linear": "UpsampleLinear", "bilinear": "UpsampleBilinear",
             "bicubic": "UpsampleBicubic", "trilinear": "UpsampleTrilinear",
             "area": "AdaptiveAvgPool"}


def _named(out, input, mode, nd, antialias):
    # torch's node: one ATen upsample kernel per mode and rank (area is adaptive average pooling)
    aa = "Aa" if antialias else ""
    return named_as(out, f"{'_' if aa else ''}{_UPSAMPLE[mode]}{nd}D{aa}Backward0", input)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    """Deprecated alias of ``interpolate`` (``torch.nn.functional.upsample``)."""
    from ._functional_extra import deprecated_upsample

    deprecated_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None) -> Tensor:
    """Deprecated alias of ``interpolate(mode='nearest')``."""
    from ._functional_extra import deprecated_upsample

    deprecated_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")
