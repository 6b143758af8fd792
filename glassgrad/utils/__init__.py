"""glassgrad.utils (``torch.utils``): ``data`` holds datasets, samplers and the DataLoader."""

from . import checkpoint, data, dlpack  # noqa: F401
