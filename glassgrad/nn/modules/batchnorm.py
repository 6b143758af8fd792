"""``torch.nn.modules.batchnorm``: the batch-norm classes, written in ``normalization.py``.
Re-exports only."""

from .normalization import (  # noqa: F401
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    _BatchNorm,
    _NormBase,
)
