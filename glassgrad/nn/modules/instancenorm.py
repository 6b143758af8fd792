"""``torch.nn.modules.instancenorm``: the instance-norm classes (1-D and 2-D written in
``normalization.py``) and ``InstanceNorm3d``."""

from .normalization import InstanceNorm1d, InstanceNorm2d, _InstanceNorm  # noqa: F401

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class InstanceNorm3d(_InstanceNorm):
    """Normalise each channel of each sample of ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    (``torch.nn.InstanceNorm3d``); ValueError "expected 4D or 5D input" otherwise."""

    _batched_ndim = 5
