"""How CPU tensors are shared between processes (``torch.multiprocessing.set_sharing_strategy``):
``file_descriptor`` (the default on Linux) sends a descriptor of the segment, ``file_system`` a
name in /dev/shm (no descriptor per tensor held open while it travels; NOTE [Shared segments])."""

from __future__ import annotations

import sys

if sys.platform in ("darwin", "win32"):  # as torch: no descriptor passing there
    _ALL = {"file_system"}
    _current = "file_system"
else:
    _ALL = {"file_descriptor", "file_system"}
    _current = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose how CPU tensors are shared: one of ``get_all_sharing_strategies()``
    (``torch.multiprocessing.set_sharing_strategy``). AssertionError for another name, as torch."""
    global _current
    if new_strategy not in _ALL:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_ALL}")
    _current = new_strategy


def get_sharing_strategy() -> str:
    """The current strategy (``torch.multiprocessing.get_sharing_strategy``)."""
    return _current


def get_all_sharing_strategies() -> set:
    """The strategies this system supports (``torch.multiprocessing.get_all_sharing_strategies``):
    ``{'file_descriptor', 'file_system'}`` on Linux."""
    return _ALL
