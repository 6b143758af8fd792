"""Shared-memory segments under tensors: ``Tensor.share_memory_()`` and ``Tensor.is_shared()``
(``torch.Tensor.share_memory_``), and the segments reductions.py passes between processes.

NOTE [Shared segments]: a shared storage is an ``mmap`` of a file that another process can open:
a ``memfd`` (an anonymous in-memory file, Linux) for the ``file_descriptor`` strategy, whose
descriptor multiprocessing's ``DupFd`` hands to the receiver; a named file in ``/dev/shm`` for
``file_system``, whose name is sent instead. The ``_Segment`` (the mapping) is the
owner of the NumPy buffer (the end of the ``.base`` chain, NOTE [Storage] in _storage.py) and
carries what a pickler needs to send it: its descriptor, or its name. The memory lives as long as
some process maps it or holds a descriptor, so nothing outlives the processes (no named object is
left behind for resource_tracker to warn about, see _named.py for ``file_system``).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
import weakref

import numpy as np

from .. import _storage


if os.name == "posix":
    _PROT_RW, _MAP_SHARED = mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED
    _libc = ctypes.CDLL(None, use_errno=True)
    _libc.mmap.restype = ctypes.c_void_p
    _libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                           ctypes.c_int, ctypes.c_long)
    _libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
else:  # pragma: no cover - Windows: no descriptors to pass; glassgrad still imports
    _libc = None


def _unmap(address: int, nbytes: int, fd: int) -> None:
    _libc.munmap(address, nbytes)
    os.close(fd)


class _Segment:
    """A shared mapping of ``nbytes`` bytes of the file ``fd``, seen by NumPy through its array
    interface; keeps ``fd`` open so it can be sent again (unmapped and closed when collected), and
    ``name`` for a /dev/shm file.

    NOTE: mapped with libc's mmap, not Python's mmap.mmap: that one holds a duplicate of the
    descriptor, two per shared storage where torch holds one (a process receiving many tensors
    would reach its limit of open files twice as soon)."""

    __slots__ = ("__array_interface__", "fd", "name", "nbytes", "__weakref__")

    def __init__(self, fd: int, nbytes: int, name: str | None):
        if _libc is None:  # pragma: no cover
            raise NotImplementedError(
                "glassgrad.multiprocessing: shared-memory tensors need a POSIX system (Linux, "
                "macOS); on Windows pass tensors with .numpy() copies instead")
        address = _libc.mmap(None, nbytes, _PROT_RW, _MAP_SHARED, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            err = ctypes.get_errno()
            raise OSError(err, f"glassgrad.multiprocessing: mmap of {nbytes} shared bytes failed: "
                          f"{os.strerror(err)}")
        self.fd, self.name, self.nbytes = fd, name, nbytes
        self.__array_interface__ = {"data": (address, False), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}
        # NOTE: not at exit: arrays over it may still be read while the interpreter shuts down
        weakref.finalize(self, _unmap, address, nbytes, fd).atexit = False

    def __len__(self) -> int:
        return self.nbytes

    def bytes(self) -> np.ndarray:
        """All its bytes as a writable uint8 array (which keeps the segment alive)."""
        return np.asarray(self)


# (st_dev, st_ino) of each file mapped here -> its segment: a storage received twice, or sent
# back to the process it came from, is the one storage there (one address, one descriptor), as
# torch's shared cache makes it
_mapped: dict = {}


def _forget(key, ref) -> None:
    if _mapped.get(key) is ref:
        del _mapped[key]


def _open_segment(fd: int, nbytes: int, name: str | None = None) -> _Segment:
    """The segment mapping file ``fd`` (taken over: closed when already mapped here)."""
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    ref = _mapped.get(key)
    seg = ref() if ref is not None else None
    if seg is not None and seg.nbytes == nbytes:
        if fd != seg.fd:  # (spawn hands a child one descriptor per file, however often sent)
            os.close(fd)
        return seg
    seg = _Segment(fd, nbytes, name)
    _mapped[key] = weakref.ref(seg, lambda r, key=key: _forget(key, r))
    return seg


def new_segment(nbytes: int) -> _Segment:
    """A fresh zeroed shared segment of ``nbytes`` (> 0) bytes for the current sharing strategy."""
    from . import _strategy

    if _strategy.get_sharing_strategy() == "file_system" and os.path.isdir("/dev/shm"):
        # (without /dev/shm, as on macOS, the segment travels by descriptor whatever the name)
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
    return buf if isinstance(buf, _Segment) else None


def array_in(seg: _Segment, shape, stride, offset, dtype) -> np.ndarray:
    """An array of ``shape``/``stride``/``offset`` (elements) over the bytes of ``seg``."""
    return _storage.view_of(seg.bytes(), shape, stride, offset, dtype)


def moved_copy(arr) -> np.ndarray:
    """A copy of ``arr``'s whole storage in a new segment, seen with ``arr``'s geometry."""
    old = _storage.bytes_of(arr)
    seg = new_segment(old.size)
    seg.bytes()[:] = old
    return array_in(seg, arr.shape, _storage.strides(arr), _storage.storage_offset(arr), arr.dtype)


def is_shared(self) -> bool:
    """True when the storage is in shared memory: moved there by ``share_memory_``, received from
    another process, or mapped from a file (``from_file``) (``torch.Tensor.is_shared``)."""
    from .._tensor_methods_storage import _no_storage

    _no_storage(self, "storage")
    buf = _storage.owner(self._array).base
    return isinstance(buf.obj if isinstance(buf, memoryview) else buf, (mmap.mmap, _Segment))


def share_memory_(self):
    """Move the storage into shared memory that other processes can map, keeping sizes, strides
    and values (``torch.Tensor.share_memory_``); returns self. Processes forked afterwards see it
    and glassgrad.multiprocessing queues send it without copying (NOTE [Shared segments]); a
    no-op when it is already shared or empty.

    A view moves the whole storage, and its base tensor with it, as in torch. RuntimeError when
    other arrays see the storage too (other views, a NumPy array from ``from_numpy``, a tensor
    saved for backward): glassgrad cannot move memory under them; call it on the base tensor
    before making views, or on a clone().

    Example::

        >>> w = glassgrad.zeros(3).share_memory_()
        >>> w.is_shared()
        True
    """
    if is_shared(self) or _storage.storage_bounds(self._array)[1] == 0:
        return self
    if not move_in_place(self):
        raise RuntimeError(
            "share_memory_: glassgrad cannot move this tensor's storage into shared memory while "
            "other arrays see it (views, a NumPy array from from_numpy, a tensor saved for "
            "backward); call it on the base tensor before making views, or on a clone().")
    return self


def move_in_place(t) -> bool:
    """Move ``t``'s private storage into a new segment under ``t`` (and under its base tensor
    when ``t`` is a view): True, or False (nothing moved) when other arrays see the storage."""
    from .._tensor_methods_storage import _sole_user

    if _sole_user(t):  # (before any local name holds the array)
        t._array = moved_copy(t._array)
        return True
    base = t._base
    if base is None or base._base is not None or t._array.base is not base._array \
            or base._array.base is not None:
        return False
    # NOTE: the only references allowed: the slots (t._array; base._array and t._array.base),
    # the locals below, getrefcount's argument. Any other view or saved array adds one.
    arr, root = t._array, base._array
    if sys.getrefcount(arr) > 3 or sys.getrefcount(root) > 4:
        return False
    moved = moved_copy(root)
    base._array = moved
    t._array = array_in(segment_of(moved), arr.shape, _storage.strides(arr),
                        _storage.storage_offset(arr), arr.dtype)
    return True


def attach_methods() -> None:
    """Install ``Tensor.share_memory_`` and ``Tensor.is_shared``."""
    from ..tensor import Tensor

    Tensor.share_memory_ = share_memory_
    Tensor.is_shared = is_shared
