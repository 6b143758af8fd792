"""Pooling and resampling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``,
``AdaptiveAvgPool1d/2d/3d``, ``AdaptiveMaxPool1d/2d``, ``Upsample``, ``UpsamplingNearest2d``
(``torch.nn.MaxPool2d`` ...). The arithmetic is ``nn.functional.max_pool2d`` and friends."""

from __future__ import annotations

from .. import functional as F
from .._functional_pool import _ntuple
from ..module import Module

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
]


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling layer over (N, C, L) (``torch.nn.MaxPool1d``)."""

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling layer: (N, C, H, W) -> (N, C, H_out, W_out) (``torch.nn.MaxPool2d``);
    ``stride`` defaults to ``kernel_size``; ``return_indices`` also returns the argmax indices.

    Example::

        >>> glassgrad.nn.MaxPool2d(2)(glassgrad.randn(1, 3, 8, 8)).shape
        glassgrad.Size([1, 3, 4, 4])
    """

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling layer over (N, C, D, H, W) (``torch.nn.MaxPool3d``)."""

    _fn = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    """1-D average pooling layer over (N, C, L) (``torch.nn.AvgPool1d``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling layer: (N, C, H, W) -> (N, C, H_out, W_out) (``torch.nn.AvgPool2d``);
    ``count_include_pad`` and ``divisor_override`` as in PyTorch."""

    _fn = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling layer over (N, C, D, H, W) (``torch.nn.AvgPool3d``)."""

    _fn = staticmethod(F.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    _fn = None

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Adaptive average pooling layer over (N, C, L) (``torch.nn.AdaptiveAvgPool1d``)."""

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average over PyTorch's adaptive bins to a fixed (N, C, *output_size)
    (``torch.nn.AdaptiveAvgPool2d``); ``AdaptiveAvgPool2d(1)`` is global average pooling."""

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Adaptive average pooling layer over (N, C, D, H, W) (``torch.nn.AdaptiveAvgPool3d``)."""

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling layer over (N, C, L) (``torch.nn.AdaptiveMaxPool1d``)."""

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max over PyTorch's adaptive bins to (N, C, *output_size) (``torch.nn.AdaptiveMaxPool2d``)."""

    _fn = staticmethod(F.adaptive_max_pool2d)


class Upsample(Module):
    """Resize (N, C, *spatial) by ``size`` or ``scale_factor`` (``torch.nn.Upsample``);
    modes as ``nn.functional.interpolate``."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else (
            tuple(float(f) for f in scale_factor) if scale_factor else None)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling (``torch.nn.UpsamplingNearest2d``)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with aligned corners (``torch.nn.UpsamplingBilinear2d``)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _MaxUnpoolNd(Module):
    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        nd = self._nd
        self.kernel_size = _ntuple(kernel_size, nd, "kernel_size")
        self.stride = _ntuple(stride if stride is not None else kernel_size, nd, "stride")
        self.padding = _ntuple(padding, nd, "padding")

    def forward(self, input, indices, output_size=None):
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nd - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Inverse of ``MaxPool1d`` given its indices (``torch.nn.MaxUnpool1d``):
    ``forward(input, indices, output_size=None)``, see ``nn.functional.max_unpool1d``."""

    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Inverse of ``MaxPool2d`` given its indices (``torch.nn.MaxUnpool2d``)."""

    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Inverse of ``MaxPool3d`` given its indices (``torch.nn.MaxUnpool3d``)."""

    _nd = 3


# NOTE: torch.nn.modules.pooling also holds issue 16's pooling layers, written in pooling_extra.py
from .pooling_extra import *  # noqa: E402, F403
from .pooling_extra import __all__ as _extra  # noqa: E402

__all__ += _extra
