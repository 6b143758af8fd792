"""Start ``nprocs`` processes running ``fn(i, *args)`` and wait for them, re-raising the first
failure in the parent (``torch.multiprocessing.spawn``, ``start_processes``, ``ProcessContext``).

A child that raises writes its formatted traceback to an error file the parent reads; a child
that dies without one (a signal, ``os._exit``) is reported by its exit status. Either way the
other children are terminated (SIGTERM, then SIGKILL after the grace period) before the parent
raises ``ProcessRaisedException`` or ``ProcessExitedException``.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time

from .._user_warning import warn_user

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "spawn", "SpawnContext", "start_processes"]

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"
_log = logging.getLogger(__name__)


class ProcessException(Exception):
    """A child of ``spawn`` failed: ``error_index`` (its ``i``) and ``error_pid``."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A child raised; the message holds its original traceback
    (``torch.multiprocessing.ProcessRaisedException``)."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero status or was killed by a signal: ``exit_code`` (negative
    for a signal) and ``signal_name`` (``torch.multiprocessing.ProcessExitedException``)."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _die_with_parent() -> None:
    # NOTE: as torch's children, stop (SIGINT) when the parent dies instead of running orphaned
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no prctl in this libc
            pass


def _run_child(fn, i, args, error_file):
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent interrupted the group: not this child's error
    except Exception:
        import traceback

        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


class ProcessContext:
    """The children of ``start_processes(join=False)``: ``pids()``, and ``join()`` to wait
    (``torch.multiprocessing.ProcessContext``)."""

    def __init__(self, processes, error_files):
        self.processes, self.error_files = processes, error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list:
        return [int(p.pid) for p in self.processes]

    def _join_all(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for children to exit. True when all have exited
        cleanly, False when some still run; when one failed, stop the others (waiting
        ``grace_period`` first) and raise ProcessRaisedException / ProcessExitedException."""
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if self.processes[i].exitcode != 0:
                failed = i
                break
        if failed is None:
            return not self.sentinels
        self._stop_others(grace_period)
        self._raise(failed)

    def _stop_others(self, grace_period) -> None:
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                _log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                _log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via "
                             "SIGKILL", p.pid)
                p.kill()
            p.join()

    def _raise(self, i: int):
        proc, path = self.processes[i], self.error_files[i]
        if os.access(path, os.R_OK):
            with open(path, "rb") as f:
                trace = pickle.load(f)
            os.unlink(path)
            raise ProcessRaisedException(
                f"\n\n-- Process {i:d} terminated with the following error:\n{trace}", i, proc.pid)
        code = proc.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            raise ProcessExitedException(f"process {i:d} terminated with signal {name}", i,
                                         proc.pid, exit_code=code, signal_name=name)
        raise ProcessExitedException(f"process {i:d} terminated with exit code {code:d}", i,
                                     proc.pid, exit_code=code)


class SpawnContext(ProcessContext):
    """The old name of ProcessContext (deprecated, as in torch)."""

    def __init__(self, processes, error_files):
        warn_user("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def _error_file() -> str:
    # a name no file has yet: the child creates it only when it fails
    fd, path = tempfile.mkstemp(prefix="glassgrad-errorfile-", suffix=".pickle")
    os.close(fd)
    os.unlink(path)
    return path


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes of ``start_method`` ('spawn', 'fork', 'forkserver'), each
    running ``fn(i, *args)`` for its index ``i`` (``torch.multiprocessing.start_processes``).
    ``join=True``: wait for all and return None, raising ProcessRaisedException (a child raised:
    its traceback is in the message) or ProcessExitedException (a child exited non-zero or was
    killed) after stopping the others; ``join=False``: return the ProcessContext."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        path = _error_file()
        p = ctx.Process(target=_run_child, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` with the ``spawn`` start method (``torch.multiprocessing.spawn``);
    ``fn`` must be importable by name (defined at the top level of a module). Another
    ``start_method`` gives a FutureWarning and is ignored, as in torch.

    Example::

        >>> glassgrad.multiprocessing.spawn(train, args=(model,), nprocs=2)
    """
    if start_method != "spawn":
        warn_user(
            f"This method only supports start_method=spawn (got: {start_method}).\nTo use a "
            "different start_method use:\n\t\t torch.multiprocessing.start_processes(...)",
            FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
