"""``torch.nn.modules.instancenorm``: the instance-norm classes, written in
``normalization.py``. Re-exports only."""

from .normalization import (  # noqa: F401
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _InstanceNorm,
)
