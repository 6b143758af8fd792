"""``glassgrad.xpu``: ``torch.xpu`` (Intel GPUs) as PyTorch's CPU build answers it.

Queries answer "no device", seeding is queued and what needs a device raises
``AssertionError("Torch not compiled with XPU enabled")``; see ``_absent_device.py``.
"""

from __future__ import annotations

from . import _absent_device
from ._absent_device import (  # noqa: F401 - the answers of a CPU build
    _is_compiled, checked_seed, device_count, is_available, is_bf16_supported, is_initialized,
    not_compiled,
)

_fail = not_compiled("XPU", "xpu")
_queued_seed: list[int] = []


def manual_seed(seed) -> None:
    """Queued, a no-op on the CPU (``torch.xpu.manual_seed``); ValueError if ``int(seed)`` fails."""
    _queued_seed[:] = [checked_seed(seed)]


def manual_seed_all(seed) -> None:
    """Queued, a no-op on the CPU (``torch.xpu.manual_seed_all``)."""
    _queued_seed[:] = [checked_seed(seed)]


def empty_cache() -> None:
    """Nothing cached without an XPU (``torch.xpu.empty_cache``)."""


def memory_allocated(device=None) -> int:
    """0 bytes: no XPU (``torch.xpu.memory_allocated``)."""
    return 0


def synchronize(device=None) -> None:
    """AssertionError on the CPU (``torch.xpu.synchronize``)."""
    _fail("synchronize")


def current_device() -> int:
    """AssertionError on the CPU (``torch.xpu.current_device``)."""
    _fail("current_device")


def set_device(device) -> None:
    """AssertionError on the CPU, for any index (``torch.xpu.set_device``)."""
    _fail("set_device")


def get_device_name(device=None) -> str:
    """AssertionError on the CPU (``torch.xpu.get_device_name``)."""
    _fail("get_device_name")


def get_device_properties(device=None):
    """AssertionError on the CPU (``torch.xpu.get_device_properties``)."""
    _fail("get_device_properties")


def initial_seed() -> int:
    """AssertionError on the CPU (``torch.xpu.initial_seed``)."""
    _fail("initial_seed")


# NOTE: bound after manual_seed, whose parameter torch names `seed`
seed, seed_all = _absent_device.seed, _absent_device.seed_all
