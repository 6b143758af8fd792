"""``torch.nn.modules.upsampling``: ``Upsample`` and ``UpsamplingNearest2d``, written in
``pooling.py``. Re-exports only."""

from .pooling import Upsample, UpsamplingNearest2d  # noqa: F401
