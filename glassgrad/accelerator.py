"""``glassgrad.accelerator``: the device-agnostic accelerator API (``torch.accelerator``).

glassgrad computes on the CPU, and PyTorch's CPU build answers ``is_available()`` False,
``current_accelerator()`` None and ``device_count()`` 0; every call that needs a device raises its
RuntimeError. Each answer asks the device modules (``cuda``, ``mps``, ``xpu``) first, so a GPU
backend that makes one of them available is picked up here without a change.
"""

from __future__ import annotations
from ._user_warning import warn_user


_NONE = "Cannot access accelerator device when none is available."


def _active():
    """The first device module that reports a device, or None (the CPU)."""
    from . import cuda, mps, xpu

    for module in (cuda, mps, xpu):
        if module.is_available():
            return module
    return None


def _require(name: str):
    module = _active()
    if module is None:
        raise RuntimeError(
            f"{_NONE}\nglassgrad: torch.accelerator.{name}() needs a GPU and glassgrad computes on "
            "the CPU; test torch.accelerator.is_available() first."
        )
    return getattr(module, name)


def is_available() -> bool:
    """Whether an accelerator is present: False on the CPU (``torch.accelerator.is_available``)."""
    return _active() is not None


def current_accelerator(check_available: bool = False):
    """The accelerator's ``device``, or None on the CPU (``torch.accelerator.current_accelerator``).

    Example::

        >>> glassgrad.accelerator.current_accelerator() is None
        True
    """
    from .backend import device

    module = _active()
    return None if module is None else device(module.__name__.rsplit(".", 1)[-1])


def device_count() -> int:
    """Number of accelerator devices: 0 on the CPU (``torch.accelerator.device_count``)."""
    module = _active()
    return 0 if module is None else module.device_count()


def current_device_index() -> int:
    """The current device's index; RuntimeError without an accelerator."""
    return _require("current_device")()


def current_device_idx() -> int:
    """Deprecated alias of ``current_device_index`` (FutureWarning, as torch)."""
    warn_user("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /) -> None:
    """Select the current device; RuntimeError without an accelerator."""
    _require("set_device")(device)


def set_device_idx(device, /) -> None:
    """Deprecated alias of ``set_device_index`` (FutureWarning, as torch)."""
    warn_user("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def synchronize(device=None, /) -> None:
    """Wait for the device's queued work; RuntimeError without an accelerator."""
    _require("synchronize")(device)


def current_stream(device=None, /):
    """The device's current stream; RuntimeError without an accelerator."""
    return _require("current_stream")(device)


def set_stream(stream) -> None:
    """Make ``stream`` current; RuntimeError without an accelerator."""
    _require("set_stream")(stream)


def get_device_capability(device=None, /) -> dict:
    """The device's capability record; RuntimeError without an accelerator."""
    return _require("get_device_capability")(device)


def _memory_query(name: str, doc: str, target: str | None = None):
    def query(device_index=None, /):
        return _require(target or name)(device_index)

    query.__name__ = query.__qualname__ = name
    query.__doc__ = f"{doc}; RuntimeError without an accelerator (``torch.accelerator.{name}``)."
    return query


# NOTE: on the CPU these are not glassgrad.memory's counters: torch.accelerator raises there
memory_allocated = _memory_query("memory_allocated", "Bytes held by tensors on the device")
max_memory_allocated = _memory_query("max_memory_allocated", "Peak of memory_allocated")
memory_reserved = _memory_query("memory_reserved", "Bytes reserved by the caching allocator")
max_memory_reserved = _memory_query("max_memory_reserved", "Peak of memory_reserved")
memory_stats = _memory_query("memory_stats", "The allocator's statistics")
reset_peak_memory_stats = _memory_query("reset_peak_memory_stats", "Reset the peak counters")
reset_accumulated_memory_stats = _memory_query(
    "reset_accumulated_memory_stats", "Reset the accumulated counters"
)
get_memory_info = _memory_query("get_memory_info", "(free, total) bytes", "mem_get_info")


def empty_cache() -> None:
    """Release the allocator's cached blocks; RuntimeError without an accelerator."""
    _require("empty_cache")()


def empty_host_cache() -> None:
    """Release cached pinned host memory; RuntimeError without an accelerator."""
    _require("empty_host_cache")()


class device_index:
    """Context manager selecting device ``device`` (``torch.accelerator.device_index``).

    ``device_index(None)`` does nothing; an index without an accelerator raises on entry.
    """

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None:
            set_device_index(self.prev_idx)
        return False
