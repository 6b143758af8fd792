"""``torch.utils.dlpack``: DLPack capsules in and out (see glassgrad/_interchange.py)."""

from .._interchange import DLDeviceType, from_dlpack, to_dlpack  # noqa: F401
