"""``torch.nn.modules.upsampling``: ``Upsample``, ``UpsamplingNearest2d`` and
``UpsamplingBilinear2d``, written in ``pooling.py``. Re-exports only."""

from .pooling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
