"""``torch.cpu``: the CPU as a device module (what ``glassgrad.get_device_module("cpu")``
returns): one device, always available, nothing to synchronise."""

from __future__ import annotations

__all__ = ["current_device", "device_count", "is_available", "is_initialized", "set_device",
           "synchronize"]


def is_available() -> bool:
    """True: glassgrad always runs on the CPU (``torch.cpu.is_available``)."""
    return True


def is_initialized() -> bool:
    """True: the CPU needs no initialisation (``torch.cpu.is_initialized``)."""
    return True


def device_count() -> int:
    """1 (``torch.cpu.device_count``)."""
    return 1


def current_device() -> str:
    """"cpu" (``torch.cpu.current_device``)."""
    return "cpu"


def set_device(device) -> None:
    """Accepted and ignored, as torch does: there is one CPU device (``torch.cpu.set_device``)."""


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU work is done when its call returns (``torch.cpu.synchronize``)."""
