"""Convolution layers: ``Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d``, ``Fold``, ``Unfold``
(``torch.nn.Conv2d`` ...). The arithmetic is ``nn.functional.conv2d`` and friends."""

from __future__ import annotations

import math

from ... import dtypes
from ..._factories import empty
from .. import functional as F
from .. import init
from .._functional_pool import _ntuple
from ..module import Module
from ..parameter import Parameter

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Fold", "Unfold",
]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """Shared state, checks, init and repr of the convolution layers (``torch.nn.modules.conv``)."""

    _nd = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 output_padding=0, device=None, dtype=None) -> None:
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {{{', '.join(map(repr, _PADDING_MODES))}}}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, nd, "kernel_size")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(
                    f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}"
                )
            # NOTE: torch's _pair keeps a sequence as given, so this sees a stride of any length
            strides = tuple(stride) if isinstance(stride, (tuple, list)) else (stride,)
            if padding == "same" and any(s != 1 for s in strides):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.stride = _ntuple(stride, nd, "stride")
        self.dilation = _ntuple(dilation, nd, "dilation")
        if isinstance(padding, str):
            self.padding = padding
        else:
            self.padding = _ntuple(padding, nd, "padding")
        self.output_padding = _ntuple(output_padding, nd, "output_padding")
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._pad_for_mode()
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        dtype = dtype if dtype is not None else dtypes.get_default_dtype()
        self.weight = Parameter(empty(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _pad_for_mode(self) -> list:
        """F.pad's argument (last dim first) for non-'zeros' padding modes, as PyTorch keeps it."""
        out = []
        for i in reversed(range(self._nd)):
            if self.padding == "valid":
                lo = hi = 0
            elif self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                lo, hi = total // 2, total - total // 2
            else:
                lo = hi = self.padding[i]
            out += [lo, hi]
        return out

    def reset_parameters(self) -> None:
        """PyTorch's default: weight ~ kaiming_uniform(a=sqrt(5)), bias ~ U(+-1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        nd = self._nd
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("padding_mode", "zeros")


class _Conv(_ConvNd):
    _fn = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution layer: (N, C_in, L) -> (N, C_out, L_out) (``torch.nn.Conv1d``); weight
    (C_out, C_in/groups, k). ValueError for channels not divisible by groups or a bad padding."""

    _nd = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution layer: (N, C_in, H, W) -> (N, C_out, H_out, W_out) (``torch.nn.Conv2d``).

    weight (C_out, C_in/groups, kH, kW) ~ kaiming_uniform(a=sqrt(5)); bias (C_out,) ~
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)). ``padding``: int, pair, 'valid' or 'same';
    ``padding_mode``: 'zeros', 'reflect', 'replicate' or 'circular'.

    Example::

        >>> conv = glassgrad.nn.Conv2d(3, 8, 3, padding=1)
        >>> conv(glassgrad.randn(2, 3, 16, 16)).shape
        glassgrad.Size([2, 8, 16, 16])
    """

    _nd = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution layer on (N, C, D, H, W) (``torch.nn.Conv3d``)."""

    _nd = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    transposed = True
    _fn = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}'
            )
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device, dtype)

    def _output_padding(self, input, output_size) -> tuple:
        """``output_padding`` that yields ``output_size`` (PyTorch's rule and ValueError)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        lead = 2 if input.dim() == nd + 2 else 1
        output_size = [int(s) for s in output_size]
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(
                f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or "
                f"{lead + nd} elements (got {len(output_size)})"
            )
        min_sizes = [(input.shape[lead + d] - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_sizes} to {max_sizes} (for an input of {list(input.shape[lead:])})"
                )
        return tuple(s - m for s, m in zip(output_size, min_sizes))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution layer (``torch.nn.ConvTranspose1d``); weight
    (C_in, C_out/groups, k)."""

    _nd = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution layer: (N, C_in, H, W) -> (N, C_out, H_out, W_out) with
    ``H_out = (H-1)*stride - 2*padding + dilation*(kH-1) + output_padding + 1``
    (``torch.nn.ConvTranspose2d``). weight (C_in, C_out/groups, kH, kW), PyTorch's default init;
    ``forward(input, output_size=None)`` picks output_padding to reach ``output_size``."""

    _nd = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution layer (``torch.nn.ConvTranspose3d``)."""

    _nd = 3
    _fn = staticmethod(F.conv_transpose3d)


class Unfold(Module):
    """Extract sliding blocks: (N, C, H, W) -> (N, C*kH*kW, L) (``torch.nn.Unfold``)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Sum sliding blocks back: (N, C*kH*kW, L) -> (N, C, *output_size) (``torch.nn.Fold``)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
