"""Convolution functions (``torch.nn.functional.conv2d``, ``conv_transpose2d``, ``unfold``...).

Argument parsing and PyTorch's checks live here; the arithmetic is in ``glassgrad/ops/conv.py``
(see NOTE [Convolution layout] there). Pooling and resampling live in ``_functional_pool.py``
and are re-exported here, so ``nn.functional`` needs one star import.
"""

from __future__ import annotations

from .. import dtypes
from ..amp.autocast import autocast_args
from ..amp.autocast import state as _autocast
from ..autograd.node_names import with_absent_input
from ..ops import conv as _conv
from ..tensor import Tensor
from . import _functional_pool
from ._functional_pool import *  # nn.functional star-imports this module: re-export pooling
from ._functional_pool import _ntuple

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "unfold",
]
__all__ += _functional_pool.__all__


def _batched(input, nd: int, op: str):
    """(input with a batch dim, whether it had one); RuntimeError for the wrong number of dims."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got input "
            f"of size: {list(input.shape)}"
        )
    return (input, True) if input.ndim == nd + 2 else (input.unsqueeze(0), False)


def _type(t) -> str:
    return dtypes.type_name(t.dtype)


def _check_dtypes(x, weight, bias, op: str) -> None:
    if weight.dtype != x.dtype:
        raise RuntimeError(
            f"Input type ({_type(x)}) and weight type ({_type(weight)}) should be the same\n"
            f"glassgrad: {op} got input {list(x.shape)} {x.dtype} and weight "
            f"{list(weight.shape)} {weight.dtype}; convert one, e.g. input.to(weight.dtype)."
        )
    if bias is not None and bias.dtype != x.dtype:
        raise RuntimeError(
            f"Input type ({_scalar_name(x)}) and bias type ({_scalar_name(bias)}) should be the "
            "same\n"
            f"glassgrad: {op} got bias {list(bias.shape)} {bias.dtype}; convert it to {x.dtype}."
        )


def _scalar_name(t) -> str:
    """PyTorch's C++ scalar type name (``float``, ``double``, ``Half``...) used in its messages."""
    return _type(t).replace("torch.", "").replace("Tensor", "").replace("Float", "float").replace(
        "Double", "double").replace("Long", "long").replace("Int", "int")


def _check_positive(values, name: str) -> None:
    if any(v <= 0 for v in values):
        raise RuntimeError(f"non-positive {name} is not supported")


def _conv_padding(padding, kernel, stride, dilation, nd: int) -> tuple:
    """``padding`` (int, tuple, 'same', 'valid') as ((lo, hi), ...) per spatial dim."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        # NOTE: an even kernel pads one more on the high side, as PyTorch does
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    pads = _ntuple(padding, nd, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pads)


def _conv_args(input, weight, bias, stride, padding, dilation, groups, nd, op, transposed):
    x, batched = _batched(input, nd, op)
    if not isinstance(weight, Tensor):
        raise TypeError(f"{op}(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    if weight.ndim != nd + 2:
        raise RuntimeError(
            f"expected stride to be a single integer value or a list of {weight.ndim - 2} values "
            f"to match the convolution dimensions, but got stride={list(_ntuple(stride, nd, ''))}"
            f"\nglassgrad: {op} needs a {nd + 2}-D weight (out_channels, in_channels / groups, "
            f"*kernel_size); got weight of shape {list(weight.shape)}."
        )
    kernel = tuple(weight.shape[2:])
    stride = _ntuple(stride, nd, "stride")
    dilation = _ntuple(dilation, nd, "dilation")
    _check_positive(stride, "stride")
    _check_positive(dilation, "dilation")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    pads = _conv_padding(padding, kernel, stride, dilation, nd)
    shape = list(weight.shape)
    if transposed:
        if x.shape[1] != shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {shape}, expected input{list(x.shape)} to "
                f"have {shape[0]} channels, but got {x.shape[1]} channels instead"
            )
        out_channels = shape[1] * groups
    else:
        if shape[0] < groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
                f"but got weight of size {shape} instead"
            )
        if shape[0] % groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
                f"0, but got weight of size [{shape}] instead"
            )
        if x.shape[1] != shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {shape}, expected input{list(x.shape)} to "
                f"have {shape[1] * groups} channels, but got {x.shape[1]} channels instead"
            )
        out_channels = shape[0]
    if transposed and x.shape[1] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected input channels {x.shape[1]} to be divisible by "
            f"{groups}\nglassgrad: {op} weight {shape}."
        )
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"Given weight of size {shape}, expected bias to be 1-dimensional with {out_channels} "
            f"elements, but got bias of size {list(bias.shape)} instead"
        )
    _check_dtypes(x, weight, bias, op)
    return x, batched, kernel, stride, pads, dilation


def _convnd(input, weight, bias, stride, padding, dilation, groups, nd, op):
    if _autocast.on:
        input, weight, bias = autocast_args(op, input, weight, bias)
    x, batched, kernel, stride, pads, dilation = _conv_args(
        input, weight, bias, stride, padding, dilation, groups, nd, op, transposed=False)
    padded = [s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads)]
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(p < e for p, e in zip(padded, extent)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
            f"size: ({' x '.join(map(str, extent))}). Kernel size can't be greater than actual "
            f"input size\nglassgrad: {op} of input {list(input.shape)} with weight "
            f"{list(weight.shape)}, padding {padding} and dilation {list(dilation)}; pad the "
            "input or use a smaller kernel."
        )
    args = (x, weight) if bias is None else (x, weight, bias)
    out = _conv.Convolution.apply(*args, stride=stride, padding=pads, dilation=dilation,
                                  groups=groups)
    if bias is None:  # torch's node keeps the absent bias's edge
        out = with_absent_input(out, x._array.dtype)
    return out if batched else out.squeeze(0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-D convolution: (N, C_in, L) * (C_out, C_in/groups, k) -> (N, C_out, L_out)
    (``torch.nn.functional.conv1d``). ``padding`` is an int, a 1-tuple, 'valid' or 'same'; the
    batch dim is optional. RuntimeError for wrong dims, channels, dtypes or a kernel too large."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-D convolution: (N, C_in, H, W) * (C_out, C_in/groups, kH, kW) -> (N, C_out, H_out, W_out)
    (``torch.nn.functional.conv2d``), floating or integer dtypes (input, weight and bias alike).

    ``stride``/``dilation``: int or pair; ``padding``: int, pair, 'valid' or 'same' (stride 1).
    RuntimeError for wrong dims, channel or groups mismatch, mixed dtypes or a kernel larger
    than the padded input.

    Example::

        >>> x = glassgrad.randn(2, 3, 8, 8); w = glassgrad.randn(4, 3, 3, 3)
        >>> glassgrad.nn.functional.conv2d(x, w, padding=1).shape
        glassgrad.Size([2, 4, 8, 8])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-D convolution on (N, C, D, H, W) (``torch.nn.functional.conv3d``); as ``conv2d``."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation,
                      nd, op):
    if _autocast.on:
        input, weight, bias = autocast_args(op, input, weight, bias)
    if isinstance(padding, str):
        raise TypeError(f"{op}(): argument 'padding' must be tuple of ints, not str")
    x, batched, kernel, stride, pads, dilation = _conv_args(
        input, weight, bias, stride, padding, dilation, groups, nd, op, transposed=True)
    output_padding = _ntuple(output_padding, nd, "output_padding")
    if any(op_ >= s and op_ >= d for op_, s, d in zip(output_padding, stride, dilation)):
        names = ("depth", "height", "width")[3 - nd:] if nd <= 3 else map(str, range(nd))
        names = list(names)
        detail = " ".join(
            [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
            + [f"stride_{n}: {v}" for n, v in zip(names, stride)]
            + [f"dilation_{n}: {v}" for n, v in zip(names, dilation)])
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got {detail}")
    size = tuple((s - 1) * st - lo - hi + d * (k - 1) + o + 1 for s, st, (lo, hi), d, k, o in zip(
        x.shape[2:], stride, pads, dilation, kernel, output_padding))
    if any(s <= 0 for s in size):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated "
            f"output size per channel: ({' x '.join(map(str, size))}). Output size is too small"
        )
    args = (x, weight) if bias is None else (x, weight, bias)
    out = _conv.ConvolutionTranspose.apply(*args, output_size=size, stride=stride, padding=pads,
                                           dilation=dilation, groups=groups)
    if bias is None:
        out = with_absent_input(out, x._array.dtype)
    return out if batched else out.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """1-D transposed convolution: (N, C_in, L) * (C_in, C_out/groups, k) -> (N, C_out, L_out)
    (``torch.nn.functional.conv_transpose1d``)."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """2-D transposed convolution ("deconvolution"): (N, C_in, H, W) * (C_in, C_out/groups, kH, kW)
    -> (N, C_out, H_out, W_out) with ``H_out = (H-1)*stride - 2*padding + dilation*(kH-1) +
    output_padding + 1`` (``torch.nn.functional.conv_transpose2d``). RuntimeError for a channel
    mismatch or ``output_padding`` not smaller than stride or dilation."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """3-D transposed convolution (``torch.nn.functional.conv_transpose3d``)."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 3, "conv_transpose3d")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding blocks as columns: (N, C, H, W) -> (N, C*kH*kW, L) (``torch.nn.functional.unfold``,
    PyTorch's im2col); the batch dim is optional. RuntimeError for non-3-D/4-D input."""
    if input.ndim not in (3, 4):
        raise RuntimeError(
            "Input Error: Only 3D or 4D input Tensors are supported (got "
            f"{input.ndim}D)"
        )
    x, batched = (input, True) if input.ndim == 4 else (input.unsqueeze(0), False)
    kernel = _ntuple(kernel_size, 2, "kernel_size", "unfold")
    dilation = _ntuple(dilation, 2, "dilation", "unfold")
    stride = _ntuple(stride, 2, "stride", "unfold")
    pads = tuple((p, p) for p in _ntuple(padding, 2, "padding", "unfold"))
    out = _conv.out_size(x.shape[2:], kernel, stride, pads, dilation)
    if any(o <= 0 for o in out):
        raise RuntimeError(
            f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size={kernel}, "
            f"dilation={dilation}, padding={padding}, calculated shape of the array of sliding "
            f"blocks as ({out[0]}, {out[1]}), but its components must be at least one."
        )
    result = _conv.Im2Col.apply(x, kernel=kernel, stride=stride, padding=pads, dilation=dilation,
                                size=tuple(x.shape[2:]))
    return result if batched else result.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns back into an image: (N, C*kH*kW, L) -> (N, C, *output_size), adding overlaps
    (``torch.nn.functional.fold``, PyTorch's col2im). RuntimeError when L or C*kH*kW disagree."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got "
            f"{input.ndim}D)"
        )
    x, batched = (input, True) if input.ndim == 3 else (input.unsqueeze(0), False)
    size = _ntuple(output_size, 2, "output_size", "fold")
    kernel = _ntuple(kernel_size, 2, "kernel_size", "fold")
    dilation = _ntuple(dilation, 2, "dilation", "fold")
    stride = _ntuple(stride, 2, "stride", "fold")
    pads = tuple((p, p) for p in _ntuple(padding, 2, "padding", "fold"))
    blocks = kernel[0] * kernel[1]
    out = _conv.out_size(size, kernel, stride, pads, dilation)
    if x.shape[1] % blocks:
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={x.shape[1]} and kernel_size={kernel}"
        )
    if x.shape[2] != out[0] * out[1]:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, stride={stride}, expected size of input's dimension 2 to match "
            f"the calculated number of sliding blocks {out[0]} * {out[1]} = {out[0] * out[1]}, "
            f"but got input.size(2)={x.shape[2]}."
        )
    if out[0] < 1 or out[1] < 1:  # (a product of two negative counts can match above)
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={tuple(p for p, _ in pads)}, stride={stride}, calculated shape of the array "
            f"of sliding blocks as ({out[0]}, {out[1]}), which is too small (non-positive)")
    result = _conv.Col2Im.apply(x, size=size, kernel=kernel, stride=stride, padding=pads,
                                dilation=dilation)
    return result if batched else result.squeeze(0)
