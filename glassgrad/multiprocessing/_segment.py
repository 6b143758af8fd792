"""Shared-memory segments under tensors: ``Tensor.share_memory_()`` and ``Tensor.is_shared()``
(``torch.Tensor.share_memory_``), and the segments reductions.py passes between processes.

NOTE [Shared segments]: a shared storage is an ``mmap`` of a file that another process can open:
a ``memfd`` (an anonymous in-memory file, Linux) for the ``file_descriptor`` strategy, whose
descriptor multiprocessing's ``DupFd`` hands to the receiver; a named file in ``/dev/shm`` for
``file_system``, whose name is sent instead. The ``_Segment`` (an ``mmap.mmap`` subclass) is the
owner of the NumPy buffer (the end of the ``.base`` chain, NOTE [Storage] in _storage.py) and
carries what a pickler needs to send it: its descriptor, or its name. The memory lives as long as
some process maps it or holds a descriptor, so nothing outlives the processes (no named object is
left behind for resource_tracker to warn about, see _named.py for ``file_system``).
"""

from __future__ import annotations

import mmap
import os
import weakref

import numpy as np

from .. import _storage


class _Segment(mmap.mmap):
    """A shared mapping of ``nbytes`` bytes of the file ``fd``; keeps ``fd`` open (closed when the
    segment is collected) so it can be sent again, and ``name`` for a ``/dev/shm`` file."""

    fd: int
    name: str | None


def _open_segment(fd: int, nbytes: int, name: str | None = None) -> _Segment:
    seg = _Segment(fd, nbytes)  # (mmap keeps its own duplicate of fd)
    seg.fd, seg.name = fd, name
    weakref.finalize(seg, os.close, fd)
    return seg


def new_segment(nbytes: int) -> _Segment:
    """A fresh zeroed shared segment of ``nbytes`` (> 0) bytes for the current sharing strategy."""
    from . import _strategy

    if _strategy.get_sharing_strategy() == "file_system":
        from . import _named

        return _named.new_named_segment(nbytes)
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("glassgrad_shared", os.MFD_CLOEXEC)
    else:  # pragma: no cover - no memfd (macOS): an unlinked temporary file gives a descriptor
        import tempfile

        fd, path = tempfile.mkstemp(prefix="glassgrad_shared_")
        os.unlink(path)
    os.ftruncate(fd, nbytes)
    return _open_segment(fd, nbytes)


def attach(fd: int, nbytes: int, name: str | None = None) -> _Segment:
    """The segment of a received descriptor (which it takes over)."""
    return _open_segment(fd, nbytes, name)


def segment_of(arr) -> _Segment | None:
    """The segment under ``arr``, or None when its storage is ordinary (private) memory."""
    buf = _storage.owner(arr).base
    buf = buf.obj if isinstance(buf, memoryview) else buf
    return buf if isinstance(buf, _Segment) else None


def array_in(seg: _Segment, shape, stride, offset, dtype) -> np.ndarray:
    """An array of ``shape``/``stride``/``offset`` (elements) over the bytes of ``seg``."""
    return _storage.view_of(np.frombuffer(seg, np.uint8), shape, stride, offset, dtype)


def moved_copy(arr) -> np.ndarray:
    """A copy of ``arr``'s whole storage in a new segment, seen with ``arr``'s geometry."""
    old = _storage.bytes_of(arr)
    seg = new_segment(old.size)
    np.frombuffer(seg, np.uint8)[:] = old
    return array_in(seg, arr.shape, _storage.strides(arr), _storage.storage_offset(arr), arr.dtype)


def is_shared(self) -> bool:
    """True when the storage is in shared memory: moved there by ``share_memory_``, received from
    another process, or mapped from a file (``from_file``) (``torch.Tensor.is_shared``)."""
    from .._tensor_methods_storage import _no_storage

    _no_storage(self, "storage")
    buf = _storage.owner(self._array).base
    return isinstance(buf.obj if isinstance(buf, memoryview) else buf, mmap.mmap)


def share_memory_(self):
    """Move the storage into shared memory that other processes can map, keeping sizes, strides
    and values (``torch.Tensor.share_memory_``); returns self. Processes forked afterwards see it
    and glassgrad.multiprocessing queues send it without copying (NOTE [Shared segments]); a
    no-op when it is already shared or empty.

    RuntimeError when other arrays see the storage (views, a NumPy array from ``from_numpy``):
    glassgrad cannot move memory under them; call it on the base tensor before making views.

    Example::

        >>> w = glassgrad.zeros(3).share_memory_()
        >>> w.is_shared()
        True
    """
    from .._tensor_methods_storage import _sole_user

    if is_shared(self) or _storage.storage_bounds(self._array)[1] == 0:
        return self
    if not _sole_user(self):  # (before any local name holds the array)
        raise RuntimeError(
            "share_memory_: glassgrad cannot move this tensor's storage into shared memory while "
            "other arrays see it (a base or views, a NumPy array from from_numpy); call it on the "
            "base tensor before making views, or on a clone().")
    self._array = moved_copy(self._array)
    return self


def attach_methods() -> None:
    """Install ``Tensor.share_memory_`` and ``Tensor.is_shared``."""
    from ..tensor import Tensor

    Tensor.share_memory_ = share_memory_
    Tensor.is_shared = is_shared
