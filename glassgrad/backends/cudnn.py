"""``glassgrad.backends.cudnn``: cuDNN's flags on a build without cuDNN (``torch.backends.cudnn``).

``benchmark``, ``deterministic``, ``enabled`` and ``allow_tf32`` keep the values a program sets
(torch's defaults False, False, True, True); ``is_available()`` is False and ``version()`` None.
``use_deterministic_algorithms`` is the switch that governs glassgrad's own determinism.
"""

from __future__ import annotations

import contextlib

from . import BoolFlag, install_flags

benchmark_limit = None
fp32_precision = "none"


def is_available() -> bool:
    """False: glassgrad has no cuDNN (``torch.backends.cudnn.is_available``)."""
    return False


def version():
    """None: no cuDNN library (``torch.backends.cudnn.version``)."""
    return None


def is_acceptable(tensor) -> bool:
    """False: no tensor can run on cuDNN here (``torch.backends.cudnn.is_acceptable``)."""
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Set the cuDNN flags inside a ``with`` block and restore them after
    (``torch.backends.cudnn.flags``)."""
    import sys

    module = sys.modules[__name__]
    saved = (module.enabled, module.benchmark, module.deterministic, module.allow_tf32)
    module.enabled, module.benchmark = enabled, benchmark
    module.deterministic, module.allow_tf32 = deterministic, allow_tf32
    try:
        yield
    finally:
        module.enabled, module.benchmark, module.deterministic, module.allow_tf32 = saved


install_flags(
    __name__,
    enabled=BoolFlag(True, "set_enabled_cudnn"),
    benchmark=BoolFlag(False, "set_benchmark_cudnn"),
    deterministic=BoolFlag(False, "set_deterministic_cudnn"),
    # NOTE: torch's setter for this cuDNN flag names cublas in its error; the key phrase is kept
    allow_tf32=BoolFlag(True, "set_allow_tf32_cublas"),
)
