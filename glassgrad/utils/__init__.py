"""glassgrad.utils (``torch.utils``): ``data`` holds datasets, samplers and the DataLoader."""

from . import data  # noqa: F401
from . import checkpoint  # noqa: E402,F401
