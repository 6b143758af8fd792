"""Collectives over a process group: all_reduce, broadcast, reduce, barrier, the gathers.

Each one checks its arguments as torch does, launches one nonblocking MPI operation on the
tensors' own memory (NOTE [MPI buffers]) and returns a ``Work`` when ``async_op=True``, else
waits for it and returns None. Results are written into the given output tensors in place.
"""

from __future__ import annotations

import numpy as np

from .._user_warning import warn_user
from . import _fingerprint, _progress_thread
from ._buffers import (
    Staged, byte_view, check_writable, compute_dtype, mpi, mpi_datatype, mpi_op, tensor_array,
)
from .process_group import GroupMember, _resolve, group_root
from .reduce_op import ReduceOp
from .work import Work

__all__ = ["all_reduce", "barrier", "broadcast", "reduce"]


def launch(pg, op: str, requests: list, finish, tensors: list, async_op: bool, numel: int = 0,
           status=None, keep=()):
    if pg._pending:
        progress(pg)
    work = Work(pg, op, requests, finish, tensors, numel, status, keep)
    if async_op:
        pg._pending.append(work)
        _progress_thread.kick()
        return work
    work.wait()
    return None


def progress(pg) -> None:
    """Test the group's outstanding async works, which lets MPI move them on.

    NOTE [Progress]: MPICH advances a nonblocking collective only inside MPI calls (it has no
    progress thread unless MPIR_CVAR_ASYNC_PROGRESS=1, which costs a core). Launching a collective
    first tests the earlier async ones, so a train of reductions launched during backward (DDP's
    buckets) moves along while backward runs, instead of all at the final wait(). A work found
    complete writes its result at once, which torch allows (results are defined after wait()).
    Measured (2 ranks, 4 x 6 MB all-reduces launched between ~20 ms matmul chunks): the final
    wait fell from ~46-50 ms to ~25-28 ms. For more, NOTE [Progress thread] (opt-in)."""
    pg._pending = [w for w in pg._pending if not w._done and not w.is_completed()]


def not_member(pg, what: str) -> bool:
    if pg is GroupMember.NON_GROUP_MEMBER:
        warn_user(f"Running {what} on global rank {mpi().COMM_WORLD.Get_rank()} which does "
                      "not belong to the given group.", stacklevel=3)
        return True
    return False


def reduction_plan(arr: np.ndarray, op, what: str, pg):
    """``(Staged, MPI.Op, MPI datatype)`` for reducing ``arr`` with ReduceOp ``op``."""
    mop, average = mpi_op(op, arr, what)
    staged = Staged(arr, compute_dtype(arr.dtype))
    if average:
        size = pg.size()
        if staged.buf.dtype != arr.dtype:
            # NOTE: the sum rounded to the half type first, as torch's backends hold it: a sum
            # past float16's range averages to inf there, not to the float32 quotient
            def average_sum(buf, size=size, half=arr.dtype):
                with np.errstate(over="ignore"):
                    np.divide(buf.astype(half).astype(buf.dtype), size, out=buf)

            staged.post = average_sum
        else:
            staged.post = lambda buf: np.divide(buf, size, out=buf)
    return staged, mop, mpi_datatype(staged.buf.dtype, what)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the group and write the result into it on every rank
    (``torch.distributed.all_reduce``, in place).

    Any shape; dtypes float16/bfloat16 (reduced in float32), float32/64, integers, bool,
    complex (SUM/AVG). ``op`` is a ``ReduceOp``; AVG divides the sum by the group's size.
    Returns a ``Work`` when ``async_op``, else None. Raises torch's errors for an op the dtype
    does not support, TypeError for a non-tensor, ValueError before ``init_process_group``.

    Example::

        >>> t = glassgrad.tensor([float(dist.get_rank())])
        >>> dist.all_reduce(t)     # every rank: tensor([0 + 1 + ... + (world_size - 1)])
    """
    pg = _resolve(group)
    if not_member(pg, "all_reduce"):
        return None
    arr = tensor_array(tensor, "all_reduce")
    staged, mop, dtype = reduction_plan(arr, op, "all_reduce", pg)
    check_writable(arr, "all_reduce")
    _fingerprint.check(pg, "ALLREDUCE", [arr])
    buf = staged.buf.reshape(-1)
    req = pg._comm.Iallreduce(mpi().IN_PLACE, [buf, buf.size, dtype], mop)
    return launch(pg, "ALLREDUCE", [req], staged.finish, [tensor], async_op, arr.size)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False,
              group_src: int | None = None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank of the group
    (``torch.distributed.broadcast``, in place). ``src`` is a global rank, ``group_src`` a rank
    within ``group`` (give one). Any dtype; the shapes must agree across ranks."""
    pg = _resolve(group)
    if not_member(pg, "broadcast"):
        return None
    arr = tensor_array(tensor, "broadcast")
    root = group_root(pg, src, group_src, "broadcast")
    mine = pg.rank() == root
    if not mine:
        check_writable(arr, "broadcast")
    staged = Staged(arr, copy_in=mine, copy_back=not mine)
    _fingerprint.check(pg, "BROADCAST", [arr], root)
    req = pg._comm.Ibcast([byte_view(staged.buf), mpi().BYTE], root)
    return launch(pg, "BROADCAST", [req], staged.finish, [tensor], async_op, arr.size)


def reduce(tensor, dst: int | None = None, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Reduce ``tensor`` across the group into ``tensor`` on rank ``dst`` only
    (``torch.distributed.reduce``); the other ranks' tensors are left as they were."""
    pg = _resolve(group)
    if not_member(pg, "reduce"):
        return None
    arr = tensor_array(tensor, "reduce")
    root = group_root(pg, dst, group_dst, "reduce", "dst")
    staged, mop, dtype = reduction_plan(arr, op, "reduce", pg)
    mine = pg.rank() == root
    if mine:
        check_writable(arr, "reduce")
    else:
        staged.copy_back, staged.post = False, None
    _fingerprint.check(pg, "REDUCE", [arr], root)
    buf = staged.buf.reshape(-1)
    if mine:
        req = pg._comm.Ireduce(mpi().IN_PLACE, [buf, buf.size, dtype], mop, root)
    else:
        req = pg._comm.Ireduce([buf, buf.size, dtype], None, mop, root)
    return launch(pg, "REDUCE", [req], staged.finish, [tensor], async_op, arr.size)


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Block until every rank of the group reached the barrier (``torch.distributed.barrier``).
    ``timeout`` (a timedelta) replaces the group's timeout for this barrier."""
    pg = _resolve(group)
    if not_member(pg, "barrier"):
        return None
    _fingerprint.check(pg, "BARRIER", [])
    work = Work(pg, "BARRIER", [pg._comm.Ibarrier()], None, [])
    if async_op:
        return work
    work.wait(timeout)
    return None
