"""What runs inside a ``DataLoader`` worker process (``torch.utils.data._utils.worker``).

NOTE [Worker processes]: with ``num_workers=N > 0`` each pass (or, with ``persistent_workers``,
the loader's lifetime) starts N processes. The main process keeps the sampler: it sends each
batch's indices to worker ``k % N`` for batch k (torch's round-robin) and reassembles the results
in batch order. Worker i seeds as torch's worker i does: ``base_seed + i`` for Python's
``random`` and glassgrad's default generator (``base_seed`` is one ``random_`` draw from the
loader's ``generator``, or the default one, when the pass starts), and NumPy's global stream from
torch's ``_generate_state(base_seed, i)`` mix. A failure in a worker travels back as text and is
raised again in the main process with the worker's id and original traceback.

NOTE [Batches through shared memory]: a worker pickles each batch itself with multiprocessing's
``ForkingPickler``, where ``glassgrad.multiprocessing.reductions`` sends every tensor as a handle
to a shared-memory segment (a file descriptor, or a /dev/shm name under the ``file_system``
sharing strategy), so only a small pickle goes through the result queue and the main process's
tensors map the worker's bytes; pickling in the worker, not in the queue's feeder thread, makes
an unpicklable batch (a non-leaf tensor that requires grad) an error of that batch. The worker
must stay alive until the main process has unpickled what it sent, as in torch.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import random
import sys
import traceback
import warnings
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ._fetch import create_fetcher

# how often a waiting worker checks that the main process is still alive, and how often the main
# process checks that its workers are (torch's MP_STATUS_CHECK_INTERVAL is 5 s: shorter here so a
# dead worker is reported quickly; a get() returns as soon as data arrives either way)
STATUS_CHECK_INTERVAL = 0.5


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker (``torch.utils.data.WorkerInfo``).

    ``id`` (0 .. num_workers - 1), ``num_workers``, ``seed`` (``base_seed + id``, what the
    worker's generators were seeded with), ``dataset`` (this process's copy of the dataset),
    ``rng`` (None: glassgrad has no thread workers) and ``worker_method``
    (``"multiprocessing"``). Frozen: assigning raises ``dataclasses.FrozenInstanceError``.
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object | None = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo`` inside a ``DataLoader`` worker process, None in the main
    process (``torch.utils.data.get_worker_info``). See NOTE [Worker processes].

    Example: split an ``IterableDataset`` so that each worker yields its own share::

        >>> info = get_worker_info()
        >>> start = 0 if info is None else info.id
    """
    return _worker_info


@dataclasses.dataclass(frozen=True)
class IterableDatasetStopIteration:
    """A worker's answer once its replica of an IterableDataset is exhausted."""

    worker_id: int


@dataclasses.dataclass(frozen=True)
class ResumeIteration:
    """Sent to persistent workers when a new pass starts; echoed back once they are reset."""


class KeyErrorMessage(str):
    """A KeyError's message printed as is (KeyError shows the repr of its argument)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception caught in a worker, as its type and formatted traceback (the traceback
    itself cannot cross a process boundary; ``torch._utils.ExceptionWrapper``)."""

    def __init__(self, where: str) -> None:
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self):
        """Raise the exception again: same type, message ``Caught X <where>.\\nOriginal
        Traceback ...``, or a RuntimeError where the type cannot be built from one string."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """The four 32-bit words torch seeds NumPy's global stream with in worker ``worker_id``
    (a SeedSequence-style hash and mix of the worker id and the two halves of ``base_seed``)."""
    mask = 0xFFFFFFFF
    mult_a, mult_b = 0x931E8875, 0x58F38DED
    mix_l, mix_r = 0xCA01F9DD, 0x4973F715
    const_a = [0x43B0D7E5]

    def hashed(value: int) -> int:
        value = (value ^ const_a[0]) & mask
        const_a[0] = (const_a[0] * mult_a) & mask
        value = (value * const_a[0]) & mask
        return (value ^ (value >> 16)) & mask

    def mixed(x: int, y: int) -> int:
        result = (((mix_l * x) & mask) - ((mix_r * y) & mask)) & mask
        return (result ^ (result >> 16)) & mask

    pool = [hashed(v) for v in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mixed(pool[dst], hashed(pool[src]))
    const_b, state = 0x8B51F9DD, []
    for value in pool:
        value = (value ^ const_b) & mask
        const_b = (const_b * mult_b) & mask
        value = (value * const_b) & mask
        state.append((value ^ (value >> 16)) & mask)
    return state


def _seed_worker(base_seed: int, worker_id: int) -> int:
    from ... import _factories, _runtime

    with warnings.catch_warnings():  # without threadpoolctl the BLAS keeps its threads
        warnings.simplefilter("ignore")
        _runtime.set_num_threads(1)  # as torch's workers: N workers would oversubscribe BLAS
    seed = base_seed + worker_id
    random.seed(seed)
    _factories.manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


class _MainWatch:
    """Whether the main process is alive: its child (fork, spawn) sees its parent change the
    moment it dies; a forkserver's child asks the kernel about the main process's pid."""

    def __init__(self, main_pid: int) -> None:
        self.main_pid = main_pid
        self.direct = os.getppid() == main_pid  # read first: the main process may die early

    def alive(self) -> bool:
        if self.direct:
            return os.getppid() == self.main_pid
        try:
            os.kill(self.main_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # the pid exists
        return True


def worker_loop(spec, index_queue, result_queue, done_event, base_seed, worker_id,
                main_pid) -> None:
    """The body of worker ``worker_id``: seed, run ``worker_init_fn``, then answer
    ``(task, indices)`` with ``(task, pickled batch or ExceptionWrapper)`` until told to stop
    (``None``) or the main process ``main_pid`` is gone."""
    global _worker_info
    watch = _MainWatch(main_pid)
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=spec.num_workers, seed=seed,
                                  dataset=spec.dataset)
        init_error, fetcher = None, None
        try:
            if spec.worker_init_fn is not None:
                spec.worker_init_fn(worker_id)
            fetcher = create_fetcher(spec)
        except Exception:
            init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        ended = False
        while watch.alive():
            try:
                message = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(message, ResumeIteration):
                result_queue.put((message, None))
                ended, fetcher = False, create_fetcher(spec)
                continue
            if message is None:
                break
            if done_event.is_set() or ended:
                continue
            task, index = message
            if init_error is not None:
                # NOTE: every batch of this worker fails with the init error; torch reports it
                # once, then fails the worker's later batches with an UnboundLocalError
                data = init_error
            else:
                try:
                    data = bytes(ForkingPickler.dumps(fetcher.fetch(index)))
                except StopIteration:
                    if not spec.iterable:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data, ended = IterableDatasetStopIteration(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            result_queue.put((task, data))
            del data, index, message
    except KeyboardInterrupt:
        pass  # the main process handles Ctrl-C and shuts the workers down
    if done_event.is_set():
        result_queue.cancel_join_thread()
        result_queue.close()
