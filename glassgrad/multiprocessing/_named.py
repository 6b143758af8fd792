"""``file_system`` sharing: segments that are files in /dev/shm, sent by name (NOTE [Shared
segments] in _segment.py).

Each segment owns one name, registered with multiprocessing's resource_tracker (one tracker serves
a process and every child it forks or spawns) and unlinked when the segment is collected. Sending
links a fresh name to the same file and registers it; the receiver adopts that name as its own.
So every name is unlinked by exactly one process, and only a tensor sent and never received (or a
killed process) leaves a name for the tracker to remove, as torch's ``file_system`` strategy can
leak in that case.
"""

from __future__ import annotations

import os
import secrets
import weakref
from multiprocessing import resource_tracker

_DIR = "/dev/shm"
_KIND = "shared_memory"  # the tracker's kind for POSIX shared memory names (it shm_unlinks them)


def _fresh_name() -> str:
    return f"/glassgrad_{os.getpid()}_{secrets.token_hex(6)}"


def _own(seg, name: str) -> None:
    seg.name = name
    weakref.finalize(seg, _release, name)


def _release(name: str) -> None:
    try:
        os.unlink(_DIR + name)
    except FileNotFoundError:
        pass
    resource_tracker.unregister(name, _KIND)


def new_named_segment(nbytes: int):
    """A fresh zeroed segment of ``nbytes`` bytes in a new /dev/shm file this process owns."""
    from ._segment import _open_segment

    name = _fresh_name()
    fd = os.open(_DIR + name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    resource_tracker.register(name, _KIND)
    os.ftruncate(fd, nbytes)
    seg = _open_segment(fd, nbytes)
    _own(seg, name)
    return seg


def send_name(seg) -> str:
    """A new name for the file of the named segment ``seg``, for one receiver to ``adopt``."""
    name = _fresh_name()
    os.link(_DIR + seg.name, _DIR + name)
    resource_tracker.register(name, _KIND)
    return name


def adopt(name: str, nbytes: int):
    """The segment of a received name, which this process now owns."""
    from ._segment import _open_segment

    fd = os.open(_DIR + name, os.O_RDWR)
    seg = _open_segment(fd, nbytes)
    _own(seg, name)
    return seg
