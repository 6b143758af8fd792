"""``torch.cuda.memory`` names on glassgrad's one device, the CPU: the counters of
``glassgrad.memory`` and the allocation history of ``_memory_timeline`` (NOTE [Memory timeline]:
``_record_memory_history`` / ``_snapshot`` / ``_dump_snapshot`` give PyTorch's snapshot dict, one
segment per live NumPy buffer)."""

from .. import memory as _memory
from .._memory_timeline import _dump_snapshot, _record_memory_history, _snapshot  # noqa: F401

# the counters torch.cuda.memory defines (and torch.cuda re-exports), glassgrad.memory's own
_COUNTERS = ("empty_cache", "max_memory_allocated", "max_memory_reserved", "memory_allocated",
             "memory_reserved", "memory_stats", "memory_summary", "reset_max_memory_allocated",
             "reset_peak_memory_stats")
globals().update({name: getattr(_memory, name) for name in _COUNTERS})
