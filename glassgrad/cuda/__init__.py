"""``glassgrad.cuda``: PyTorch's ``torch.cuda`` names for code written against GPUs.

glassgrad runs on the CPU (NOTE [Backend]), so ``is_available()`` is False; ``cuda.amp`` maps the
deprecated ``torch.cuda.amp`` classes onto the active device.
"""

from __future__ import annotations

from ..memory import (  # noqa: F401 - live tensor buffers on the active device (the CPU)
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
from . import amp  # noqa: F401

from ._runtime import (  # noqa: F401
    Event, Stream, StreamContext, _is_compiled, current_device, current_stream, default_stream,
    device, device_count, device_of, get_arch_list, get_device_capability, get_device_name,
    get_device_properties, get_gencode_flags, get_rng_state, get_rng_state_all, init,
    initial_seed, ipc_collect, is_available, is_bf16_supported, is_initialized,
    is_tf32_supported, manual_seed, manual_seed_all, mem_get_info, seed, seed_all, set_device,
    set_rng_state, set_rng_state_all, stream, synchronize,
)
from .._legacy import CUDA_TYPES as _CUDA_TYPES

# torch.cuda.FloatTensor and the others exist on a CPU-only build; calling one raises TypeError
globals().update(_CUDA_TYPES)

# issue 19, lane gboxr: torch.cuda.memory._record_memory_history and friends (CPU history)
from . import memory  # noqa: E402,F401
