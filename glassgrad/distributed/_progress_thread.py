"""Opt-in background progress for nonblocking collectives (GLASSGRAD_DISTRIBUTED_PROGRESS=thread).

# NOTE [Progress thread]: MPICH moves a nonblocking operation only while some thread is inside
# MPI (NOTE [Progress]). With GLASSGRAD_DISTRIBUTED_PROGRESS=thread set before
# init_process_group, a daemon thread calls ``Iprobe`` on a private communicator every 0.5 ms
# while async works are outstanding: any MPI call runs MPICH's progress engine for every pending
# request, so reductions advance during the caller's computation (DDP's backward). It never
# touches the requests themselves (which only the caller's thread tests or waits on), and sleeps
# on an Event when nothing is outstanding. Measured here (2 ranks, 4 x 6 MB all-reduces behind
# ~20 ms of matmuls each, on a loaded 2-core machine): the final wait fell from ~25-37 ms to
# ~13-19 ms. Off by default: it takes CPU from compute on machines with a core per rank.
"""

from __future__ import annotations

import atexit
import os
import threading
import time

_wake = threading.Event()
_stop = threading.Event()
_thread = None
PAUSE_S = 0.0005


def wanted() -> bool:
    return os.environ.get("GLASSGRAD_DISTRIBUTED_PROGRESS", "").lower() == "thread"


def start(groups) -> None:
    """Start the thread (once per process); ``groups()`` returns the live process groups."""
    global _thread
    if _thread is not None:
        return
    from ._buffers import mpi

    MPI = mpi()
    comm = MPI.COMM_WORLD.Dup()

    def run():
        while not _stop.is_set():
            _wake.wait()
            if _stop.is_set():
                return
            if not any(w for pg in list(groups()) for w in pg._pending if not w._done):
                _wake.clear()
                continue
            comm.Iprobe(MPI.ANY_SOURCE, 0)
            time.sleep(PAUSE_S)

    _thread = threading.Thread(target=run, name="glassgrad-distributed-progress", daemon=True)
    _thread.start()
    # NOTE: registered after mpi4py's MPI_Finalize hook, so it runs first: no Iprobe after it
    atexit.register(_halt)


def _halt() -> None:
    _stop.set()
    _wake.set()
    if _thread is not None:
        _thread.join(timeout=1.0)


def kick() -> None:
    """An async work was launched: let the thread (if any) run."""
    if _thread is not None:
        _wake.set()
