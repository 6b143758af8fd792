"""Pooling layers of issue 16: ``AdaptiveMaxPool3d``, ``FractionalMaxPool2d/3d`` and
``LPPool1d/2d/3d`` (``torch.nn.FractionalMaxPool2d`` ...). The arithmetic is
``nn.functional.fractional_max_pool2d`` and friends."""

from __future__ import annotations

import numbers

from .. import functional as F
from ..module import Module
from .pooling import _AdaptiveMaxPoolNd

__all__ = [
    "AdaptiveMaxPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
]


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max over PyTorch's adaptive bins to (N, C, *output_size) from (N, C, D, H, W) or
    (C, D, H, W) (``torch.nn.AdaptiveMaxPool3d``); ``return_indices`` also gives the int64 flat
    indices (for ``MaxUnpool3d``)."""

    _fn = staticmethod(F.adaptive_max_pool3d)


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(sum of x**p over each window) ** (1/p)`` over (N, C, L) or
    (C, L) (``torch.nn.LPPool1d``); p = inf is max pooling of ``|x|``.

    Example::

        >>> glassgrad.nn.LPPool1d(2, 3, stride=2)(glassgrad.randn(1, 4, 9)).shape
        glassgrad.Size([1, 4, 4])
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (N, C, H, W) or (C, H, W) (``torch.nn.LPPool2d``)."""

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W) (``torch.nn.LPPool3d``)."""

    _fn = staticmethod(F.lp_pool3d)


def _repeat(value, nd: int):
    return (value,) * nd if isinstance(value, numbers.Number) else tuple(value)


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        nd, name = self._nd, type(self).__name__
        self.kernel_size = _repeat(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _repeat(output_size, nd) if output_size is not None else None
        self.output_ratio = _repeat(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling layer over (N, C, H, W) or (C, H, W)
    (``torch.nn.FractionalMaxPool2d``): exactly one of ``output_size`` and ``output_ratio`` (in
    (0, 1)), else ValueError; fresh random window starts each call unless ``_random_samples``
    (N, C, 2) is given (then a buffer, in the state_dict).

    Example::

        >>> glassgrad.nn.FractionalMaxPool2d(3, output_ratio=0.5)(glassgrad.randn(1, 2, 10, 8)).shape
        glassgrad.Size([1, 2, 5, 4])
    """


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling layer over (N, C, T, H, W) or (C, T, H, W), samples (N, C, 3)
    (``torch.nn.FractionalMaxPool3d``); see ``FractionalMaxPool2d``."""

    _nd = 3
