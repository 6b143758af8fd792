"""Automatic mixed precision (``torch.amp``): ``autocast`` regions and ``GradScaler``.

See NOTE [Autocast hook] in autocast.py and NOTE [Loss scaling] in grad_scaler.py.
"""

from .autocast import (  # noqa: F401
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)
from .grad_scaler import GradScaler, OptState, ScalerStep  # noqa: F401

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
