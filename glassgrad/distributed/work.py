"""``Work``: the handle an ``async_op=True`` collective or ``isend``/``irecv`` returns."""

from __future__ import annotations

import datetime
import time

from . import _watchdog

__all__ = ["Work"]


class Work:
    """A launched MPI operation (``torch.distributed.Work``): ``wait()`` blocks until it is done
    and its result is in the output tensors; ``is_completed()`` tests without blocking.

    Results land in the tensors only at ``wait()`` (or a ``True`` from ``is_completed()``), as
    torch requires before the tensors are read. A wait longer than the group's timeout aborts the
    job with torch's watchdog message (NOTE [Watchdog]).

    Example::

        >>> work = dist.all_reduce(t, async_op=True)
        >>> ...            # other work overlaps the reduction
        >>> work.wait()    # t now holds the sum
        True
    """

    __slots__ = ("_requests", "_finish", "_done", "_tensors", "_pg", "_op", "_seq", "_numel",
                 "_launched", "_status", "_error", "_future", "_keep", "__weakref__")

    def __init__(self, pg, op: str, requests: list, finish, tensors: list, numel: int = 0,
                 status=None, keep=(), count: bool = True):
        self._pg = pg
        self._keep = keep  # NOTE: staging buffers MPI reads or writes until completion
        self._op = op
        self._requests = requests
        self._finish = finish
        self._tensors = tensors
        self._numel = numel
        self._status = status
        self._done = False
        self._error = None
        self._future = None
        self._seq = (pg._next_seq() if count else pg._seq) if pg is not None else 0
        self._launched = time.monotonic()

    def _describe(self) -> str:
        timeout = int(self._pg.timeout.total_seconds() * 1000) if self._pg is not None else 0
        return (f"WorkMPI(SeqNum={self._seq}, OpType={self._op}, NumelIn={self._numel}, "
                f"NumelOut={self._numel}, Timeout(ms)={timeout})")

    def _complete(self) -> None:
        self._done = True
        self._requests = self._keep = None
        if self._pg is not None:
            self._pg._history.append((self._seq, self._op, self._numel,
                                      time.monotonic() - self._launched))
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()
        if self._future is not None:
            self._future.set_result(self._tensors)

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        """Block until the operation completed and its result is written; returns True.

        ``timeout`` (a ``timedelta``) replaces the group's for this wait; past it the job is
        aborted with torch's watchdog message (NOTE [Watchdog])."""
        if self._done:
            return True
        from ._buffers import mpi

        limit = self._pg.timeout if self._pg is not None else datetime.timedelta(minutes=30)
        if timeout is not None and timeout.total_seconds() > 0:
            limit = timeout
        seconds = limit.total_seconds()
        tid = _watchdog.enter(self._launched + seconds, self, seconds)
        try:
            if self._status is not None:
                self._requests[0].Wait(self._status)
                for req in self._requests[1:]:
                    req.Wait()
            elif len(self._requests) == 1:
                self._requests[0].Wait()  # NOTE: Wait's error names the MPI error; Waitall's not
            else:
                mpi().Request.Waitall(self._requests)
        except mpi().Exception as e:
            raise _backend_error(self, e) from None
        finally:
            _watchdog.leave(tid)
        self._complete()
        return True

    def is_completed(self) -> bool:
        """True once done (``Work.is_completed``); testing also drives MPI's progress."""
        if self._done:
            return True
        from ._buffers import mpi

        try:
            done = mpi().Request.Testall(self._requests) if self._status is None else all(
                [self._requests[0].Test(self._status)] + [r.Test() for r in self._requests[1:]])
        except mpi().Exception as e:
            raise _backend_error(self, e) from None
        if done:
            self._complete()
        return done

    def is_success(self) -> bool:
        """True once completed without an error (``Work.is_success``)."""
        return self._done and self._error is None

    def exception(self):
        """The error of a failed operation, else None (``Work.exception``)."""
        return self._error

    def result(self) -> list:
        """The output tensors (``Work.result``), after ``wait()``."""
        return list(self._tensors)

    def source_rank(self) -> int:
        """The global rank an ``irecv`` from any source received from (``Work.source_rank``)."""
        if self._status is None:
            raise ValueError(
                "source_rank() is only defined for a recv work (irecv / recv with src=None)")
        if not self._done:
            self.wait()
        return self._pg._ranks[self._status.Get_source()]

    def synchronize(self) -> None:
        """Wait for completion (``Work.synchronize``; there is no device stream on the CPU)."""
        self.wait()

    def get_future(self):
        """A ``glassgrad.futures.Future`` completed with ``result()`` when this work completes
        (``Work.get_future``); its ``wait()`` waits for the work."""
        if self._future is None:
            self._future = _WorkFuture(self)
            if self._done:
                self._future.set_result(self._tensors)
        return self._future


def _backend_error(work, e):
    from .errors import DistBackendError

    return DistBackendError(
        f"glassgrad.distributed: {work._describe()} failed in MPI: {e}\nglassgrad: the ranks "
        "likely passed tensors of different sizes or dtypes to the same collective; set "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL to check each collective's shapes across ranks."
    )


def _future_class():
    from ..futures import Future

    return Future


class _WorkFuture:
    """Built lazily as a subclass of glassgrad's Future (see get_future)."""

    def __new__(cls, work):
        Future = _future_class()
        sub = _SUBCLASS.get("cls")
        if sub is None:
            class WorkFuture(Future):
                __doc__ = Future.__doc__

                def wait(self):
                    if not self.done():
                        self._work.wait()
                    return super().wait()

            sub = _SUBCLASS["cls"] = WorkFuture
        fut = sub()
        fut._work = work
        return fut


_SUBCLASS: dict = {}
