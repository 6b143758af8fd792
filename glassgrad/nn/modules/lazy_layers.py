"""The lazy layers: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d``, ``LazyInstanceNorm1d/2d/3d`` (``torch.nn.LazyLinear`` ...).

Each is built as its eager layer with zero input features, then given placeholders; the first
forward infers ``in_features`` / ``in_channels`` / ``num_features`` from the input, materializes
the parameters, runs the eager layer's ``reset_parameters`` and turns the object into the eager
class (see ``lazy.py``).
"""

from __future__ import annotations

from ..._factories import tensor
from ...autograd.grad_mode import no_grad
from ... import dtypes
from ..parameter import UninitializedBuffer, UninitializedParameter
from .conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from .instancenorm import InstanceNorm3d
from .lazy import LazyModuleMixin
from .linear import Linear
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    _InstanceNorm,
    _NormBase,
)

__all__ = [
    "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
    "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dimension of the first input
    (``torch.nn.LazyLinear``); ``LazyLinear(out_features, bias=True, device=None, dtype=None)``
    becomes a ``Linear`` after the first call."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # loaded from a checkpoint before the first call
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                    f"in_features from self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: ``in_channels`` from the first input's channel dim."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        with no_grad():
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        unbatched = self._nd + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def _placeholders(self, out_channels: int, bias: bool, dtype) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)


def _lazy_conv(eager):
    """The lazy counterpart of convolution class ``eager``: its signature without
    ``in_channels``."""

    # NOTE: super(_LazyConvXdMixin, ...) is LazyModuleMixin.__init__, which registers the hooks
    # and then builds the eager layer with zero channels
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super(_LazyConvXdMixin, self).__init__(0, 0, kernel_size, stride, padding, dilation,
                                               groups, False, padding_mode, device, dtype)
        self._placeholders(out_channels, bias, dtype)

    def __init_transposed__(self, out_channels: int, kernel_size, stride=1, padding=0,
                            output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                            padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super(_LazyConvXdMixin, self).__init__(0, 0, kernel_size, stride, padding,
                                               output_padding, groups, False, dilation,
                                               padding_mode, device, dtype)
        self._placeholders(out_channels, bias, dtype)

    name = "Lazy" + eager.__name__
    doc = (f"``{eager.__name__}`` whose ``in_channels`` is the channel dimension of the first "
           f"input (``torch.nn.{name}``); it becomes a ``{eager.__name__}`` after the first call.")
    return type(name, (_LazyConvXdMixin, eager), {
        "__init__": __init_transposed__ if eager.transposed else __init__,
        "cls_to_become": eager, "__doc__": doc, "__module__": __name__, "__qualname__": name,
    })


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d)


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """What the lazy norms share: ``num_features`` from the first input's dim 1."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=dtypes.int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        # NOTE: dim 1 even for an unbatched InstanceNorm input, as PyTorch reads it
        self.num_features = input.shape[1]
        with no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(eager):
    """The lazy counterpart of norm class ``eager`` (``eager``'s input checks and forward)."""
    name = "Lazy" + eager.__name__
    doc = (f"``{eager.__name__}`` whose ``num_features`` is dim 1 of the first input "
           f"(``torch.nn.{name}``); it becomes a ``{eager.__name__}`` after the first call.")
    attrs = {"cls_to_become": eager, "__doc__": doc, "__module__": __name__, "__qualname__": name}
    if issubclass(eager, _InstanceNorm):
        attrs["__init__"] = _instance_norm_init
    return type(name, (_LazyNormBase, eager), attrs)


def _instance_norm_init(self, eps: float = 1e-5, momentum: float | None = 0.1,
                        affine: bool = True, track_running_stats: bool = True, device=None,
                        dtype=None, *, bias: bool = True) -> None:
    if track_running_stats:
        # NOTE: the eager InstanceNorm's own check: its refusal of running statistics (while
        # glassgrad lacks them) must reach the lazy form too, not become silent eval numbers
        self.cls_to_become(1, track_running_stats=True)
    _LazyNormBase.__init__(self, eps, momentum, affine, track_running_stats, device, dtype,
                           bias=bias)


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
