"""Storages in shared memory: ``UntypedStorage``/``TypedStorage`` ``.is_shared()``,
``.share_memory_()`` and ``._new_shared(size)`` (torch's storage methods of the same names;
NOTE [Shared segments] in _segment.py)."""

from __future__ import annotations

import sys

import numpy as np

from .. import _storage
from . import _segment


def _flat(storage) -> np.ndarray:
    return storage._elems if isinstance(storage, _storage.TypedStorage) else storage._bytes


def is_shared(self) -> bool:
    """True when the storage's bytes are in shared memory (``torch.UntypedStorage.is_shared``)."""
    arr = _flat(self)
    return arr.size > 0 and _segment.segment_of(arr) is not None


def share_memory_(self):
    """Move the storage into shared memory (``torch.UntypedStorage.share_memory_``); self. A
    storage glassgrad allocated on its own (``UntypedStorage(n)``) moves; the storage of a tensor
    is a window over the tensor's memory, which only ``Tensor.share_memory_()`` can move:
    RuntimeError then, naming that way out."""
    arr = _flat(self)
    if arr.size == 0 or _segment.segment_of(arr) is not None:
        return self
    # NOTE: 3 references: the slot, `arr`, getrefcount's argument; a window has a base
    if arr.base is not None or sys.getrefcount(arr) > 3:
        raise RuntimeError(
            "share_memory_: glassgrad cannot move this storage into shared memory: it is a view "
            "of a tensor's memory (or other arrays see it). Call share_memory_() on the tensor "
            "before taking its storage.")
    moved = _segment.moved_copy(arr)
    if isinstance(self, _storage.TypedStorage):
        self._elems = moved
    else:
        self._bytes = moved
    return self


@classmethod
def _new_shared(cls, size, *, device=None):
    """A new zeroed storage of ``size`` elements (bytes for UntypedStorage) in shared memory
    (torch's ``Storage._new_shared``, which DataLoader workers use to collate into)."""
    return share_memory_(cls(int(size)))


def attach_methods() -> None:
    """Install the methods on both storage classes."""
    for cls in (_storage.UntypedStorage, _storage.TypedStorage):
        cls.is_shared = is_shared
        cls.share_memory_ = share_memory_
        cls._new_shared = _new_shared
