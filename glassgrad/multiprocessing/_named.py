"""``file_system`` sharing: segments that are files in /dev/shm, sent by name (NOTE [Shared
segments] in _segment.py).

Each segment made here owns one name, unlinked by the process that owns it when the segment is
collected or the process exits. Sending links a fresh transit name to the same file; the receiver
opens it and unlinks it at once, keeping the file by its descriptor (a segment it sends on travels
by descriptor), and the sender unlinks at exit any transit name nobody took (a receiver must take
it while the sender lives, as with descriptors). So a receiver that is killed leaves nothing in
/dev/shm (torch's shm manager cleans up after it too); only a process killed while it owns names
or has names in flight leaves files behind, as torch's ``file_system`` strategy can. multiprocessing's resource_tracker is not used: a finalizer
calling it during garbage collection re-enters it, and a process forked while another thread held
its lock would deadlock in it.
"""

from __future__ import annotations

import os
import secrets
import weakref
from multiprocessing import util as _mp_util

_DIR = "/dev/shm/"
_names: set = set()  # the names this process owns or has in transit
_names_pid = None  # the process _names belongs to (a forked child starts its own)


def _fresh_name() -> str:
    return f"glassgrad_{os.getpid()}_{secrets.token_hex(6)}"


def _track(name: str) -> None:
    global _names_pid
    if _names_pid != os.getpid():
        # NOTE: multiprocessing's exit function, not atexit: it also runs in forked children,
        # which end with os._exit
        _names_pid = os.getpid()
        _names.clear()  # inherited from the parent: its names, not ours
        _mp_util.Finalize(None, _unlink_all, exitpriority=0)
    _names.add(name)


def _unlink(name: str, pid: int) -> None:
    # NOTE: a forked child inherits the parent's segments; only their owner removes the name
    if os.getpid() == pid:
        _names.discard(name)
        try:
            os.unlink(_DIR + name)
        except FileNotFoundError:
            pass


def _unlink_all() -> None:
    for name in list(_names):
        _unlink(name, os.getpid())


def _own(seg, name: str) -> None:
    seg.name = name
    _track(name)
    weakref.finalize(seg, _unlink, name, os.getpid())


def new_named_segment(nbytes: int):
    """A fresh zeroed segment of ``nbytes`` bytes in a new /dev/shm file this process owns."""
    from ._segment import _open_segment

    name = _fresh_name()
    fd = os.open(_DIR + name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.ftruncate(fd, nbytes)
    seg = _open_segment(fd, nbytes)
    _own(seg, name)
    return seg


def send_name(seg) -> str | None:
    """A new transit name for the file of the named segment ``seg`` (for one receiver to
    ``adopt``), or None when its own name is gone."""
    name = _fresh_name()
    try:
        os.link(_DIR + seg.name, _DIR + name)
    except FileNotFoundError:
        return None
    if len(_names) > 4096:  # forget the transit names receivers have taken
        _names.intersection_update([n for n in list(_names) if os.path.exists(_DIR + n)])
    _track(name)
    return name


def adopt(name: str, nbytes: int):
    """The segment of a received transit name, which is unlinked once the file is open."""
    from ._segment import _open_segment

    fd = os.open(_DIR + name, os.O_RDWR)
    # NOTE: not renamed to a name of this process: a receiver killed before it exits normally
    # (a DataLoader worker, a Hogwild trainer) would leave that name in /dev/shm for good
    os.unlink(_DIR + name)
    return _open_segment(fd, nbytes)

