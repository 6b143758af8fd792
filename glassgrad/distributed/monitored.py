"""``monitored_barrier``: a barrier whose rank 0 names the ranks that did not arrive in time."""

from __future__ import annotations

import datetime
import time

import numpy as np

from ._buffers import mpi
from .collectives import not_member
from .process_group import _resolve

__all__ = ["monitored_barrier"]

_ARRIVE, _RELEASE = 32001, 32002  # NOTE: tags of their own, apart from user p2p tags


def _poll(requests, deadline: float) -> list[bool]:
    """Which of ``requests`` completed by ``deadline`` (MPI has no timed wait: poll, sleeping
    briefly so a waiting rank does not take a core from the ranks it waits for)."""
    done = [False] * len(requests)
    pause = 1e-4
    while True:
        for i, req in enumerate(requests):
            if not done[i]:
                done[i] = req.Test()
        if all(done) or time.monotonic() >= deadline:
            return done
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def _cancel(requests, done) -> None:
    for req, ok in zip(requests, done):
        if not ok:
            req.Cancel()
            req.Wait()


def monitored_barrier(group=None, timeout: datetime.timedelta | None = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that fails clearly instead of hanging (``torch.distributed.monitored_barrier``).

    Every other rank reports to rank 0 of the group, which waits up to ``timeout`` (default:
    the group's) and then raises torch's RuntimeError "[Rank 0]: Rank 1 failed to pass
    monitoredBarrier in 2000 ms" (``wait_all_ranks=True``: "Ranks 1, 2 failed ...", all the late
    ranks). The ranks that did arrive are released with an error telling them to check rank 0's
    log, as in torch."""
    pg = _resolve(group)
    if not_member(pg, "monitored_barrier"):
        return
    limit = timeout if timeout is not None else pg.timeout
    ms = int(limit.total_seconds() * 1000)
    deadline = time.monotonic() + limit.total_seconds()
    comm, me, n = pg._comm, pg.rank(), pg.size()
    MPI = mpi()
    pg._barriers += 1
    if me == 0:
        boxes = [np.zeros(1, dtype=np.int64) for _ in range(1, n)]
        reqs = [comm.Irecv([boxes[r - 1], MPI.INT64_T], r, _ARRIVE) for r in range(1, n)]
        done = [False] * (n - 1)
        while True:
            done = _poll(reqs, deadline)
            # NOTE: a token from an earlier barrier that rank 0 gave up on is drained here
            stale = [i for i, ok in enumerate(done) if ok and boxes[i][0] != pg._barriers]
            if not stale or time.monotonic() >= deadline:
                break
            for i in stale:
                reqs[i] = comm.Irecv([boxes[i], MPI.INT64_T], i + 1, _ARRIVE)
        done = [ok and boxes[i][0] == pg._barriers for i, ok in enumerate(done)]
        late = [pg._ranks[r] for r in range(1, n) if not done[r - 1]]
        _cancel(reqs, [r.Test() for r in reqs])
        verdict = np.array([1 if late else 0], dtype=np.int64)
        for r in range(1, n):
            if done[r - 1]:
                comm.Send([verdict, MPI.INT64_T], r, _RELEASE)
        if late:
            shown = late if wait_all_ranks else late[:1]
            word = "Ranks" if wait_all_ranks else "Rank"
            raise RuntimeError(f"[Rank 0]: {word} {', '.join(map(str, shown))} failed to pass "
                               f"monitoredBarrier in {ms} ms")
        return
    token = np.array([pg._barriers], dtype=np.int64)
    verdict = np.full(1, -1, dtype=np.int64)
    sent = comm.Isend([token, MPI.INT64_T], 0, _ARRIVE)
    got = comm.Irecv([verdict, MPI.INT64_T], 0, _RELEASE)
    done = _poll([sent, got], deadline + 1.0)  # rank 0 answers at its own deadline at the latest
    _cancel([sent, got], done)
    if not all(done) or verdict[0] != 0:
        raise RuntimeError(f"Rank {pg._ranks[me]} successfully reached monitoredBarrier, but "
                           "received errors while waiting for send/recv from rank 0. Please "
                           "check rank 0 logs for faulty rank.")
