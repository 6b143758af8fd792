"""``glassgrad.cuda``: PyTorch's ``torch.cuda`` names for code written against GPUs.

glassgrad runs on the CPU (NOTE [Backend]), so ``is_available()`` is False; ``cuda.amp`` maps the
deprecated ``torch.cuda.amp`` classes onto the active device.
"""

from __future__ import annotations

from ..memory import (  # noqa: F401 - live tensor buffers on the active device (the CPU)
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
from . import amp  # noqa: F401


def is_available() -> bool:
    """False: glassgrad has no GPU backend yet (``torch.cuda.is_available``)."""
    return False


def device_count() -> int:
    """0: no GPUs (``torch.cuda.device_count``)."""
    return 0

