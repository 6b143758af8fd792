"""``torch.version`` of a CPU-only build, for programs that print or test it
(``if torch.version.cuda: ...``): no CUDA, HIP, ROCm or XPU; ``__version__`` is glassgrad's."""

from __future__ import annotations

__all__ = ["__version__", "cuda", "debug", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
cuda = None
hip = None
rocm = None
xpu = None
debug = False
