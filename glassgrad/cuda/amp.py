"""``glassgrad.cuda.amp``: the deprecated ``torch.cuda.amp.autocast`` / ``GradScaler`` /
``custom_fwd`` / ``custom_bwd``, so that articles' ``torch.cuda.amp`` lines run unchanged.

Each warns with PyTorch's FutureWarning text and then runs on the active device: the CPU, with
``torch.cuda.amp.autocast``'s default dtype float16 (the float16 + GradScaler recipe they show).
"""

from __future__ import annotations

import functools

from .. import dtypes
from ..amp import autocast as _autocast_cls
from ..amp import grad_scaler as _grad_scaler
from ..amp.autocast import custom_bwd as _custom_bwd
from ..amp.autocast import custom_fwd as _custom_fwd
from .._user_warning import warn_user

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


def _active_device() -> str:
    from . import is_available

    return "cuda" if is_available() else "cpu"


def _deprecated(old: str, new: str) -> None:
    warn_user(
        f"`torch.cuda.amp.{old}(args...)` is deprecated. Please use `{new}` instead.\n"
        f"glassgrad: there is no CUDA device; this runs on '{_active_device()}'.",
        FutureWarning,
        stacklevel=3,
    )


class autocast(_autocast_cls):
    """``torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``:
    deprecated (FutureWarning); an ``autocast`` on the active device (the CPU here)."""

    def __init__(self, enabled: bool = True, dtype: dtypes.dtype = dtypes.float16,
                 cache_enabled: bool = True):
        _deprecated("autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__(_active_device(), dtype=dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """``torch.cuda.amp.GradScaler(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``: deprecated (FutureWarning); a ``GradScaler`` on the
    active device (the CPU here)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _deprecated("GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__(_active_device(), init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated ``torch.cuda.amp.custom_fwd``: ``amp.custom_fwd`` on the active device."""
    _deprecated("custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return functools.partial(_custom_fwd, device_type=_active_device())(
        fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated ``torch.cuda.amp.custom_bwd``: ``amp.custom_bwd`` on the active device."""
    _deprecated("custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return functools.partial(_custom_bwd, device_type=_active_device())(bwd)
