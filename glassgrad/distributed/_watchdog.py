"""The watchdog: a rank blocked in a collective longer than its group's timeout aborts the job.

# NOTE [Watchdog]: MPI has no timed wait, and a rank whose peer exited or took another path
# would wait forever. Every wait registers itself here with its deadline (launch time plus the
# group's ``timeout``); one daemon thread sleeps until the nearest deadline (or, idle, for the
# shortest timeout seen) and, if a wait is still blocked past its deadline, prints torch's
# watchdog message with the op, the sequence number, the waiting rank's source line and the
# last operations that rank completed on the group (a small flight recorder), then
# calls ``MPI_Abort``, which ends every rank of the job (as torch's NCCL watchdog ends the
# process): no rank is left hanging. Cost when nothing is late:
# two uncontended lock acquisitions per wait, and a wake-up per timeout period.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback

_lock = threading.Condition()
_waiting: dict[int, tuple[float, object]] = {}  # thread id -> (deadline, work)
_thread = None
_next_check = [0.0]  # when the watchdog thread next wakes by itself (time.monotonic)
_period = [60.0]     # its idle sleep: at most the shortest timeout seen


def _start() -> None:
    global _thread
    _thread = threading.Thread(target=_run, name="glassgrad-distributed-watchdog", daemon=True)
    _thread.start()


def enter(deadline: float, work, timeout_s: float) -> int:
    """Mark the calling thread as blocked on ``work`` until ``deadline`` (time.monotonic)."""
    tid = threading.get_ident()
    with _lock:
        _waiting[tid] = (deadline, work)
        if timeout_s < _period[0]:
            _period[0] = max(timeout_s, 0.01)
        if _thread is None:
            _start()
        elif deadline < _next_check[0]:
            # NOTE: only a deadline earlier than the thread's own wake-up needs waking it: a
            # notify (a thread switch) per wait cost ~1 ms per collective on a busy 2-core box
            _lock.notify()
    return tid


def leave(tid: int) -> None:
    with _lock:
        _waiting.pop(tid, None)


def _run() -> None:
    while True:
        with _lock:
            now = time.monotonic()
            late = [(tid, w) for tid, (d, w) in _waiting.items() if d <= now]
            if not late:
                soonest = min((d for d, _ in _waiting.values()), default=now + _period[0])
                _next_check[0] = min(soonest, now + _period[0])
                _lock.wait(_next_check[0] - now)
                continue
        _fire(*late[0])
        return


def _user_line(tid: int) -> str:
    frame = sys._current_frames().get(tid)
    here = os.path.dirname(os.path.abspath(__file__))
    for fs in reversed(traceback.extract_stack(frame) if frame is not None else []):
        if not os.path.abspath(fs.filename).startswith(here):
            return f'File "{fs.filename}", line {fs.lineno}, in {fs.name}: {fs.line}'
    return "(unknown)"


def _fire(tid: int, work) -> None:
    from ._buffers import mpi

    ran_ms = int((time.monotonic() - work._launched) * 1000)
    rank = mpi().COMM_WORLD.Get_rank()
    history = list(work._pg._history) if work._pg is not None else []
    done = "; ".join(f"SeqNum={seq} {op} (NumelIn={numel}, {secs * 1000:.1f} ms)"
                     for seq, op, numel, secs in history) or "none"
    msg = (
        f"[Rank {rank}] Watchdog caught collective operation timeout: {work._describe()} ran for "
        f"{ran_ms} milliseconds before timing out.\n"
        f"glassgrad: rank {rank} waited at {_user_line(tid)}\n"
        "for the other ranks of the group, which did not complete the same operation in time "
        "(one exited or raised, hangs, or called a different collective). Aborting the MPI job "
        "so that no rank hangs. The limit is init_process_group(timeout=datetime.timedelta(...)) "
        "(or new_group(timeout=...)).\n"
        f"The last operations rank {rank} completed on this group: {done}.\n"
    )
    try:
        sys.stderr.write(msg)
        sys.stderr.flush()
    finally:
        mpi().COMM_WORLD.Abort(1)
