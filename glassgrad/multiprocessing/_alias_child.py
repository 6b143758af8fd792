"""Children started with ``spawn``/``forkserver`` keep ``torch`` aliased to glassgrad when their
parent has it aliased (``python -m glassgrad.alias script.py``, glassgrad/alias.py).

A spawned child is a fresh interpreter: before it unpickles its Process object it re-runs the
parent's main script as ``__mp_main__``, whose ``import torch`` would find the real torch. The
child unpickles the parent's preparation data before anything else, so the hook adds one entry
to it whose unpickling installs the alias (``exec`` of a short import, so it needs nothing of
glassgrad to be importable by name first). multiprocessing ignores keys it does not know.
"""

from __future__ import annotations

import os
import sys
from multiprocessing import spawn as _mp_spawn

_KEY = "glassgrad_alias"
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _InstallAlias:
    def __reduce__(self):
        code = (f"import sys\nif {_ROOT!r} not in sys.path: sys.path.insert(0, {_ROOT!r})\n"
                "import glassgrad.alias\nglassgrad.alias.install()\n")
        return (exec, (code, {}))


def _preparation_data(name, _original=_mp_spawn.get_preparation_data):
    data = _original(name)
    alias = sys.modules.get("glassgrad.alias")
    if alias is not None and alias.is_installed():
        data[_KEY] = _InstallAlias()
    return data


def install() -> None:
    """Wrap ``multiprocessing.spawn.get_preparation_data`` (idempotent)."""
    if getattr(_mp_spawn.get_preparation_data, "__name__", "") != "_preparation_data":
        _mp_spawn.get_preparation_data = _preparation_data
