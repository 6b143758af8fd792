"""The answers of a device module (``cuda``, ``xpu``, ``mps``) on a build without that device.

PyTorch's CPU build keeps every ``torch.cuda`` name: queries answer "no device" (``is_available()``
False, ``device_count()`` 0), seeding is queued for a device that never comes, and what needs a
device raises. glassgrad is that build (NOTE [Backend]); a GPU backend replaces these functions.
"""

from __future__ import annotations


def not_compiled(backend: str, module: str):
    """A function raising PyTorch's ``AssertionError("Torch not compiled with CUDA enabled")``."""

    def fail(name: str):
        raise AssertionError(
            f"Torch not compiled with {backend} enabled\nglassgrad: torch.{module}.{name}() needs "
            f"a {backend} device and glassgrad computes on the CPU (NumPy); test "
            f"torch.{module}.is_available() first, or use device='cpu'."
        )

    return fail


def is_available() -> bool:
    """False: glassgrad has no backend for this device yet (``torch.cuda.is_available``)."""
    return False


def device_count() -> int:
    """0: no such device (``torch.cuda.device_count``)."""
    return 0


def is_initialized() -> bool:
    """False: the device runtime never starts on the CPU (``torch.cuda.is_initialized``)."""
    return False


def _is_compiled() -> bool:
    return False


def seed() -> None:
    """Seed the device from entropy: a no-op without the device (``torch.cuda.seed``)."""


def seed_all() -> None:
    """Seed every device from entropy: a no-op without the device (``torch.cuda.seed_all``)."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: no device (``torch.cuda.is_bf16_supported``)."""
    return False


def checked_seed(seed) -> int:
    """``int(seed)`` as ``torch.cuda.manual_seed`` converts it (ValueError for a bad string)."""
    return int(seed)


def device_index(device, module: str) -> int:
    """The index of ``device`` (int, 'cuda:1', None -> -1), torch's ValueError for a device string
    of another type. NOTE: glassgrad's ``device('cuda')`` is the CPU, so device objects give only
    their index."""
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        name, _, index = device.partition(":")
        if name != module:
            raise ValueError(f"Expected a {module} device, but got: {device}")
        return int(index) if index else -1
    index = getattr(device, "index", None)
    return -1 if index is None else index
