"""Memory formats (``torch.memory_format``): the order in which a dense tensor's dims lie in memory.

``x.contiguous(memory_format=glassgrad.channels_last)`` copies a 4-D tensor so that its channels
are innermost (strides ``(C*H*W, 1, W*C, C)``), as torch does; ``is_contiguous(memory_format=)``
tests for that layout. """

from __future__ import annotations

from ._layout import _Named

__all__ = ["channels_last", "channels_last_3d", "contiguous_format", "legacy_contiguous_format",
           "memory_format", "preserve_format"]


class memory_format(_Named):  # noqa: N801 - torch.memory_format's name
    """A memory layout of dense tensors (``torch.memory_format``); compare by identity."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
legacy_contiguous_format = contiguous_format  # torch: the same object
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# dims from outermost to innermost in memory, for the formats that fix one order
_ORDER = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def order_of(fmt, ndim: int, op: str = "contiguous"):
    """The physical dim order a format asks for on an ``ndim`` tensor (None: C order); raises
    torch's RuntimeError when the format needs another rank."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return None
    if fmt not in _ORDER:
        raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")
    rank, order = _ORDER[fmt]
    if ndim != rank:
        name = "channels_last" if rank == 4 else "channels_last_3d"
        raise RuntimeError(f"required rank {rank} tensor to use {name} format\nglassgrad: this "
                           f"tensor has {ndim} dims.")
    return order


def dense_in_order(shape, strides, order) -> bool:
    """True when the tensor is densely packed with dims in ``order`` (outermost first); size-1
    dims may have any stride, as in torch's contiguity checks."""
    if 0 in shape:
        return True
    expected = 1
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True
