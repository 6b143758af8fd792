"""Python's ``multiprocessing`` with glassgrad tensors shared through memory
(``torch.multiprocessing``).

Every name of ``multiprocessing`` is here (``Process``, ``Pool``, ``Queue``, ``SimpleQueue``,
``Pipe``, ``get_context``, ``set_start_method``...), the very same objects, as in torch; importing
glassgrad registers reducers (reductions.py) so that any multiprocessing channel sends tensors as
handles to shared memory: the receiving process sees the same storage, and in-place updates in
either are seen by the other (Hogwild training). Added: ``spawn``/``start_processes`` and
``ProcessContext`` (spawn.py), the sharing strategies (``get_sharing_strategy``,
``set_sharing_strategy``, ``get_all_sharing_strategies``), and ``Tensor.share_memory_`` /
``is_shared`` and the storages' ``share_memory_`` / ``is_shared`` / ``_new_shared`` over shared
segments (_segment.py, _storage_shared.py).

Example::

    >>> import glassgrad.multiprocessing as mp
    >>> model.share_memory()            # parameters in shared memory before the workers start
    >>> ps = [mp.Process(target=train, args=(model,)) for _ in range(2)]
"""

import multiprocessing
from multiprocessing import *  # noqa: F403 - torch re-exports the whole module the same way

from ._strategy import (  # noqa: F401
    get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy,
)
from .reductions import init_reductions
from .spawn import (  # noqa: F401
    ENV_VAR_PARALLEL_START, ProcessContext, ProcessExitedException,
    ProcessRaisedException, SpawnContext, spawn, start_processes,
)
from . import _alias_child, _segment, _storage_shared

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

_segment.attach_methods()
_storage_shared.attach_methods()
init_reductions()
_alias_child.install()
