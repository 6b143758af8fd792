"""``torch.nn.modules.instancenorm``: the instance-norm classes, written in
``normalization.py``. Re-exports only."""

from .normalization import InstanceNorm1d, InstanceNorm2d, _InstanceNorm  # noqa: F401
