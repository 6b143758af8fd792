"""``torch.cuda``'s device, seed and stream functions as PyTorch's CPU build answers them.

Seeding is accepted and queued (torch runs it when CUDA initialises, which never happens on the
CPU), so ``torch.cuda.manual_seed_all(seed)`` lines run; queries that need a device raise torch's
``AssertionError("Torch not compiled with CUDA enabled")`` with glassgrad's explanation.
"""

from __future__ import annotations

from .. import _absent_device
from .._absent_device import (  # noqa: F401 - the answers of a CPU build
    _is_compiled, checked_seed, device_count, device_index, is_available, is_bf16_supported,
    is_initialized, not_compiled,
)

_fail = not_compiled("CUDA", "cuda")
_queued_seed: list[int] = []  # the last seed asked for, for a GPU backend to apply when it starts


def init() -> None:
    """Initialise CUDA: AssertionError on the CPU (``torch.cuda.init``)."""
    _fail("init")


def manual_seed(seed) -> None:
    """Seed the current GPU's generator: queued, a no-op on the CPU (``torch.cuda.manual_seed``).

    The CPU generator is ``glassgrad.manual_seed``; ``ValueError`` if ``int(seed)`` fails.
    """
    _queued_seed[:] = [checked_seed(seed)]


def manual_seed_all(seed) -> None:
    """Seed every GPU's generator: queued, a no-op on the CPU (``torch.cuda.manual_seed_all``)."""
    _queued_seed[:] = [checked_seed(seed)]


def initial_seed() -> int:
    """The current GPU's seed: AssertionError on the CPU (``torch.cuda.initial_seed``)."""
    _fail("initial_seed")


def get_rng_state(device="cuda"):
    """A GPU generator's state: AssertionError on the CPU (``torch.cuda.get_rng_state``)."""
    _fail("get_rng_state")


def get_rng_state_all() -> list:
    """Every GPU's generator state: ``[]`` with no GPU (``torch.cuda.get_rng_state_all``)."""
    return []


def set_rng_state(new_state, device="cuda") -> None:
    """Set a GPU generator's state: queued, a no-op on the CPU (``torch.cuda.set_rng_state``)."""


def set_rng_state_all(new_states) -> None:
    """Set every GPU's generator state: a no-op with no GPU (``torch.cuda.set_rng_state_all``)."""


def synchronize(device=None) -> None:
    """Wait for a GPU's kernels: AssertionError on the CPU (``torch.cuda.synchronize``)."""
    _fail("synchronize")


def current_device() -> int:
    """The current GPU's index: AssertionError on the CPU (``torch.cuda.current_device``)."""
    _fail("current_device")


def set_device(device) -> None:
    """Select a GPU. A negative index does nothing, as in torch; an index >= 0 raises
    AssertionError (torch's CPU build leaks an AttributeError there); another device type raises
    ValueError "Expected a cuda device" (``torch.cuda.set_device``)."""
    if device_index(device, "cuda") >= 0:
        _fail("set_device")


def get_device_name(device=None) -> str:
    """A GPU's name: AssertionError on the CPU (``torch.cuda.get_device_name``)."""
    _fail("get_device_name")


def get_device_properties(device=None):
    """A GPU's properties: AssertionError on the CPU (``torch.cuda.get_device_properties``)."""
    _fail("get_device_properties")


def get_device_capability(device=None) -> tuple:
    """A GPU's compute capability: AssertionError on the CPU."""
    _fail("get_device_capability")


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of a GPU: AssertionError on the CPU (``torch.cuda.mem_get_info``)."""
    _fail("mem_get_info")


def current_stream(device=None):
    """The GPU's current stream: AssertionError on the CPU (``torch.cuda.current_stream``)."""
    _fail("current_stream")


def default_stream(device=None):
    """The GPU's default stream: AssertionError on the CPU (``torch.cuda.default_stream``)."""
    _fail("default_stream")


def ipc_collect() -> None:
    """Free memory shared between processes: AssertionError on the CPU."""
    _fail("ipc_collect")


def is_tf32_supported() -> bool:
    """False: no GPU (``torch.cuda.is_tf32_supported``)."""
    return False


def get_arch_list() -> list:
    """``[]``: no CUDA architectures compiled in (``torch.cuda.get_arch_list``)."""
    return []


def get_gencode_flags() -> str:
    """``''``: no CUDA architectures compiled in (``torch.cuda.get_gencode_flags``)."""
    return ""


class device:
    """Context manager selecting a GPU (``torch.cuda.device``): a negative index does nothing;
    entering with an index >= 0 raises torch's "PyTorch was compiled without CUDA support"."""

    def __init__(self, device):
        self.idx = device_index(device, "cuda")
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            raise RuntimeError(
                "PyTorch was compiled without CUDA support\nglassgrad: computes on the CPU; "
                "torch.cuda.device(i) needs a GPU."
            )

    def __exit__(self, *exc):
        return False


class device_of(device):
    """``device`` of a tensor's GPU: the CPU tensors of glassgrad select nothing."""

    def __init__(self, obj):
        super().__init__(-1)


class StreamContext:
    """Context manager making a stream current (``torch.cuda.StreamContext``); ``None`` (what
    CPU code passes) does nothing."""

    def __init__(self, stream):
        self.stream = stream
        if stream is not None:
            _fail("StreamContext")

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def stream(stream) -> StreamContext:
    """``StreamContext(stream)`` (``torch.cuda.stream``)."""
    return StreamContext(stream)


class Stream:
    """A CUDA stream (``torch.cuda.Stream``): RuntimeError without CUDA, as in torch."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError(
            "torch.cuda.Stream requires CUDA support\nglassgrad: computes on the CPU, where work "
            "runs in program order and needs no stream."
        )


class Event:
    """A CUDA event (``torch.cuda.Event``): RuntimeError without CUDA, as in torch; time CPU code
    with ``time.perf_counter()``."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError(
            "Tried to instantiate dummy base class Event\nglassgrad: CUDA events need a GPU; time "
            "CPU code with time.perf_counter()."
        )


# NOTE: bound after manual_seed, whose parameter torch names `seed`
seed, seed_all = _absent_device.seed, _absent_device.seed_all
