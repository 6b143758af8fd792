"""``glassgrad.mps``: ``torch.mps`` (Apple GPUs) as PyTorch's build without MPS answers it.

``is_available()`` False and ``manual_seed`` a no-op; what needs the device raises torch's
``RuntimeError("Cannot execute <call>() without MPS backend.")``.
"""

from __future__ import annotations


def _fail(call: str, name: str):
    raise RuntimeError(
        f"Cannot execute {call}() without MPS backend.\nglassgrad: torch.mps.{name}() needs an "
        "Apple GPU and glassgrad computes on the CPU; test torch.backends.mps.is_available() first."
    )


def is_available() -> bool:
    """False: no MPS backend."""
    return False


def device_count() -> int:
    """0: no MPS device (``torch.mps.device_count``)."""
    return 0


def manual_seed(seed) -> None:
    """A no-op without MPS (``torch.mps.manual_seed``)."""


def seed() -> None:
    """RuntimeError without MPS (``torch.mps.seed``)."""
    _fail("getDefaultGenerator", "seed")


def get_rng_state(device="mps"):
    """RuntimeError without MPS (``torch.mps.get_rng_state``)."""
    _fail("getDefaultGenerator", "get_rng_state")


def set_rng_state(new_state, device="mps") -> None:
    """RuntimeError without MPS (``torch.mps.set_rng_state``)."""
    _fail("getDefaultGenerator", "set_rng_state")


def synchronize() -> None:
    """RuntimeError without MPS (``torch.mps.synchronize``)."""
    _fail("deviceSynchronize", "synchronize")


def empty_cache() -> None:
    """RuntimeError without MPS (``torch.mps.empty_cache``)."""
    _fail("emptyCache", "empty_cache")


def current_allocated_memory() -> int:
    """RuntimeError without MPS (``torch.mps.current_allocated_memory``)."""
    _fail("getCurrentAllocatedMemory", "current_allocated_memory")


def driver_allocated_memory() -> int:
    """RuntimeError without MPS (``torch.mps.driver_allocated_memory``)."""
    _fail("getDriverAllocatedMemory", "driver_allocated_memory")


def recommended_max_memory() -> int:
    """RuntimeError without MPS (``torch.mps.recommended_max_memory``)."""
    _fail("getRecommendedMaxMemory", "recommended_max_memory")


def set_per_process_memory_fraction(fraction) -> None:
    """RuntimeError without MPS (``torch.mps.set_per_process_memory_fraction``)."""
    _fail("setMemoryFraction", "set_per_process_memory_fraction")
