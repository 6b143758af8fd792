"""Children started with ``spawn``/``forkserver`` keep ``torch`` aliased to glassgrad when their
parent has it aliased (``python -m glassgrad.alias script.py``, glassgrad/alias.py).
A fork server started under the alias preloads glassgrad, not the main script (see below).

A spawned child is a fresh interpreter: before it unpickles its Process object it re-runs the
parent's main script as ``__mp_main__``, whose ``import torch`` would find the real torch. The
child unpickles the parent's preparation data before anything else, so the hook adds one entry
to it whose unpickling installs the alias (``exec`` of a short import, so it needs nothing of
glassgrad to be importable by name first). multiprocessing ignores keys it does not know.
"""

from __future__ import annotations

import os
import sys
from multiprocessing import forkserver as _mp_forkserver
from multiprocessing import spawn as _mp_spawn

_KEY = "glassgrad_alias"
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _InstallAlias:
    def __reduce__(self):
        code = (f"import sys\nif {_ROOT!r} not in sys.path: sys.path.insert(0, {_ROOT!r})\n"
                "import glassgrad.alias\nglassgrad.alias.install()\n")
        return (exec, (code, {}))


def _aliased() -> bool:
    alias = sys.modules.get("glassgrad.alias")
    return alias is not None and alias.is_installed()


def _preparation_data(name, _original=_mp_spawn.get_preparation_data):
    data = _original(name)
    if _aliased():
        data[_KEY] = _InstallAlias()
    return data


def _ensure_running(self, _original=_mp_forkserver.ForkServer.ensure_running):
    if _aliased() and "__main__" in self._preload_modules:
        # NOTE: the fork server imports its preloads before any child's preparation data
        # arrives, so a preloaded main script would import the real torch into every child
        # (where CPython hands the server the script's path: 3.11 passes none, its key being
        # init_main_from_path); preload glassgrad instead, which also spares each child the
        # import, and each child runs the main script itself, aliased
        self._preload_modules = [m for m in self._preload_modules if m != "__main__"] \
            + ["glassgrad"]
    return _original(self)


def install() -> None:
    """Wrap ``multiprocessing.spawn.get_preparation_data`` and the fork server's start
    (idempotent)."""
    if getattr(_mp_spawn.get_preparation_data, "__name__", "") != "_preparation_data":
        _mp_spawn.get_preparation_data = _preparation_data
    if _mp_forkserver.ForkServer.ensure_running.__name__ != "_ensure_running":
        _mp_forkserver.ForkServer.ensure_running = _ensure_running
