"""A pass over a ``DataLoader`` with worker processes (torch's ``_MultiProcessingDataLoaderIter``).

See NOTE [Worker processes] for what the workers do and NOTE [Batches through shared memory]
(both in ``_worker.py``) for how batches come back. Here: at most ``prefetch_factor *
num_workers`` batches are in flight; batch k goes to the next active worker in round-robin order,
results are reassembled by batch number (``in_order=False`` hands each over as it arrives); a
worker that dies is reported instead of waited for; shutdown (end of the pass, the iterator
collected, or interpreter exit) stops and joins every worker.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import queue
import signal
import time
from ..._user_warning import warn_user
import weakref

from . import _worker
from ._base_iter import BaseDataLoaderIter
from ._worker import STATUS_CHECK_INTERVAL, ExceptionWrapper


def _context(loader):
    return loader.multiprocessing_context or multiprocessing.get_context()


def _start(process) -> None:
    try:
        process.start()
    except (TypeError, AttributeError, pickle.PicklingError):
        warn_user(
            "Got pickle error when attempting to start a worker Process. This might be because "
            "the worker Process arguments are not picklable. Python 3.14+ changed the "
            "multiprocessing start method in non-Mac POSIX platforms to 'forkserver', which "
            "requires the worker Process arguments to be picklable. You can also try "
            "multiprocessing.set_start_method('fork').", stacklevel=5)
        raise


class _Pool:
    """The worker processes and their queues; no reference to the iterator, so that a finalizer
    holding it does not keep the iterator alive."""

    def __init__(self, ctx, spec, base_seed: int, num_workers: int) -> None:
        self.results = ctx.Queue()
        self.done = ctx.Event()
        self.index_queues, self.workers, self.closed = [], [], False
        self.owner = os.getpid()  # a forked worker inherits this object: only the owner closes
        try:
            for wid in range(num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                self.index_queues.append(index_queue)
                process = ctx.Process(target=_worker.worker_loop, daemon=True,
                                      args=(spec, index_queue, self.results, self.done,
                                            base_seed, wid, self.owner))
                _start(process)
                self.workers.append(process)
        except BaseException:
            self.close()  # the workers already started
            raise

    def close(self) -> None:
        """Stop every worker (asked first, then terminated) and reap it; segments of batches
        never read go with their worker."""
        if self.closed or os.getpid() != self.owner:
            return
        self.closed = True
        try:
            self.done.set()
            for index_queue in self.index_queues:
                try:
                    index_queue.put(None)
                except (OSError, ValueError):
                    pass  # already closed
            for process in self.workers:
                process.join(timeout=STATUS_CHECK_INTERVAL)
        finally:
            for process in self.workers:
                if process.is_alive():
                    process.terminate()
                    process.join(timeout=STATUS_CHECK_INTERVAL)
            for q in (*self.index_queues, self.results):
                q.cancel_join_thread()
                q.close()


def _death(process) -> RuntimeError:
    """How a worker ended, in the words of torch's SIGCHLD handler."""
    code = process.exitcode
    if code is not None and code < 0:
        return RuntimeError(f"DataLoader worker (pid {process.pid}) is killed by signal: "
                            f"{signal.strsignal(-code)}. ")
    return RuntimeError(f"DataLoader worker (pid {process.pid}) exited unexpectedly with exit "
                        f"code {code}. Details are lost due to multiprocessing. Rerunning with "
                        "num_workers=0 may give better error trace.")


class MultiProcessingDataLoaderIter(BaseDataLoaderIter):
    """A pass whose batches are fetched by ``num_workers`` worker processes, in the order a
    ``num_workers=0`` pass gives them."""

    def __init__(self, loader) -> None:
        super().__init__(loader)
        if loader.prefetch_factor <= 0:  # torch's check: with none in flight a pass is empty
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter\nglassgrad: prefetch_factor "
                                 "is the batches each worker loads ahead; use 1 or more.")
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        self._pool = _Pool(_context(loader), self._spec, self._base_seed, self._num_workers)
        self._finalizer = weakref.finalize(self, _Pool.close, self._pool)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader)
        self._send_idx = self._rcvd_idx = 0
        self._task_info: dict[int, list] = {}  # task -> [worker] or [worker, result]
        self._active = [True] * self._num_workers
        self._worker_tasks = [0] * self._num_workers
        self._next_worker = itertools.cycle(range(self._num_workers))
        if not first_iter:  # each worker restarts its fetcher and answers once it has
            for index_queue in self._pool.index_queues:
                index_queue.put(_worker.ResumeIteration())
            waiting = self._num_workers
            while waiting:
                task, data = self._get_data()
                if isinstance(task, _worker.ResumeIteration):
                    waiting -= 1  # anything else is what a broken-off pass left
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float):
        lost = False
        try:
            task, data = self._pool.results.get(timeout=timeout)
        except queue.Empty:
            pass
        else:
            if not isinstance(data, bytes):
                return True, (task, data)
            try:
                # unpickled at once, as a Queue does: each tensor's segment is fetched from the
                # worker while it is surely alive (a worker whose IterableDataset ended is
                # stopped while its earlier batches wait for their turn)
                return True, (task, pickle.loads(data))
            except (OSError, EOFError):
                if all(w.is_alive() for w in self._pool.workers):
                    raise
                lost = True  # its worker died before the segments were fetched
        # NOTE: raised outside the except block, so that no frame holds the caught exception:
        # that cycle would keep this iterator, and its workers, alive until a GC pass
        dead = [wid for wid, w in enumerate(self._pool.workers)
                if (self._active[wid] or lost) and not w.is_alive()]
        if not dead:
            return False, None
        for wid in dead:
            self._mark_unavailable(wid)
        workers = [self._pool.workers[wid] for wid in dead]
        pids = ", ".join(str(w.pid) for w in workers)
        raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly\n"
                           "glassgrad: a worker process died (killed, out of memory, or "
                           "exited); num_workers=0 runs the dataset in this process and gives "
                           "its traceback.") from _death(workers[0])

    def _get_data(self):
        if self._timeout > 0:
            deadline = time.monotonic() + self._timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                ok, data = self._try_get_data(min(left, STATUS_CHECK_INTERVAL))
                if ok:
                    return data
        while True:
            ok, data = self._try_get_data(STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip tasks given to workers that have since ended (an IterableDataset replica)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._active[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                wid, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, wid)
            task, data = self._get_data()
            if isinstance(data, _worker.IterableDatasetStopIteration):
                if self._persistent:
                    self._active[data.worker_id] = False
                else:
                    self._mark_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(task)[0])
                self._task_info[task].append(data)
            else:
                wid = self._task_info.pop(task)[0]
                self._rcvd_idx += 1
                return self._process_data(data, wid)

    def _try_put_index(self) -> None:
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        max_tasks = self._prefetch_factor * self._num_workers
        for _ in range(self._num_workers):
            wid = next(self._next_worker)
            if self._active[wid] and (self._in_order or self._worker_tasks[wid]
                                      < max_tasks // sum(self._active)):
                break
        else:
            return
        self._pool.index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = [wid]
        self._worker_tasks[wid] += 1
        self._send_idx += 1

    def _process_data(self, data, wid: int):
        self._worker_tasks[wid] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_unavailable(self, wid: int) -> None:
        self._pool.index_queues[wid].put(None)
        self._active[wid] = False

    def _shutdown_workers(self) -> None:
        self._finalizer()
