"""Normalisation layers: ``BatchNorm1d/2d/3d``, ``LayerNorm``, ``GroupNorm``, ``RMSNorm``,
``InstanceNorm1d/2d/3d`` (``torch.nn.BatchNorm2d`` ...)."""

from __future__ import annotations

import numbers

from ... import dtypes
from ..._factories import empty, ones, tensor, zeros
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..._user_warning import warn_user


def _dtype(dtype):
    return dtype if dtype is not None else dtypes.get_default_dtype()


class _NormBase(Module):
    """Affine parameters and running statistics shared by batch and instance norm."""

    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        dt = _dtype(dtype)
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dt))
            if bias:
                self.bias = Parameter(empty(num_features, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dt))
            self.register_buffer("running_var", ones(num_features, dtype=dt))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=dtypes.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            # NOTE: checkpoints from before num_batches_tracked existed, as PyTorch accepts them
            state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                               else tensor(0, dtype=dtypes.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_running else None,
            self.running_var if use_running else None,
            self.weight, self.bias, bn_training, factor, self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over ``(N, C)`` or ``(N, C, L)`` (``torch.nn.BatchNorm1d``): batch
    statistics in training (running stats updated with ``momentum``, None = cumulative average,
    unbiased variance), running statistics in eval."""

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over ``(N, C, H, W)`` (``torch.nn.BatchNorm2d``)."""

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over ``(N, C, D, H, W)`` (``torch.nn.BatchNorm3d``)."""

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    """Instance norm layers: per-sample statistics; with ``track_running_stats`` the running
    statistics are updated in training and used in eval (``torch.nn.modules.instancenorm``)."""

    _batched_ndim = 3

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def _get_no_batch_dim(self) -> int:
        return self._batched_ndim - 1

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (self._batched_ndim - 1, self._batched_ndim):
            raise ValueError(
                f"expected {self._batched_ndim - 1}D or {self._batched_ndim}D input (got "
                f"{input.dim()}D input)"
            )

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warn_user(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False", stacklevel=2)
        unbatched = input.dim() == self._batched_ndim - 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        keys = [prefix + name for name in ("running_mean", "running_var")]
        found = [k for k in keys if k in state_dict]
        if local_metadata.get("version", None) is None and not self.track_running_stats and found:
            # NOTE: checkpoints from before 0.4 saved running stats nobody tracked; torch
            # reports them and drops them
            name = type(self).__name__
            names = " and ".join(f'"{k}"' for k in found)
            error_msgs.append(
                f"Unexpected running stats buffer(s) {names} for {name} with "
                "track_running_stats=False. If state_dict is a checkpoint saved before 0.4.0, "
                f"this may be expected because {name} does not track running stats by default "
                "since 0.4.0. Please remove these keys from state_dict. If the running stats are "
                f"actually needed, instead set track_running_stats=True in {name} to enable "
                f"them. See the documentation of {name} for details.")
            for k in found:
                state_dict.pop(k)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class InstanceNorm1d(_InstanceNorm):
    """Normalise each channel of each sample of ``(N, C, L)`` or ``(C, L)``
    (``torch.nn.InstanceNorm1d``); ``affine`` adds per-channel weight and bias,
    ``track_running_stats`` running statistics (updated in training, used in eval)."""


class InstanceNorm2d(_InstanceNorm):
    """Normalise each channel of each sample of ``(N, C, H, W)`` (``torch.nn.InstanceNorm2d``)."""

    _batched_ndim = 4


class InstanceNorm3d(_InstanceNorm):
    """Normalise each channel of each sample of ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    (``torch.nn.InstanceNorm3d``)."""

    _batched_ndim = 5


def _shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims with elementwise affine
    (``torch.nn.LayerNorm``); weight ones, bias zeros."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        dt = _dtype(dtype)
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=dt))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / rms(x) * weight`` over the trailing dims (``torch.nn.RMSNorm``)."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=_dtype(dtype)))
        else:
            self.register_parameter("weight", None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Normalise ``(N, C, *)`` over channel groups, per-channel affine (``torch.nn.GroupNorm``)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        dt = _dtype(dtype)
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dt))
            if bias:
                self.bias = Parameter(zeros(num_channels, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


# NOTE: torch.nn.modules.normalization also holds the LRN layers, written in lrn.py
from .lrn import CrossMapLRN2d, LocalResponseNorm  # noqa: E402, F401
