"""Point-to-point: send, recv, isend, irecv, P2POp and batch_isend_irecv, on MPI messages."""

from __future__ import annotations

from ._buffers import Staged, byte_view, check_writable, mpi, tensor_array
from .collectives import not_member
from .process_group import _resolve
from .work import Work

__all__ = ["P2POp", "batch_isend_irecv", "irecv", "isend", "recv", "send"]


def _peer(pg, rank, group_rank, what: str, role: str, allow_any: bool = False):
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if group_rank is not None:
        peer = group_rank
    elif rank is None:
        if allow_any:
            return mpi().ANY_SOURCE
        raise ValueError(f"{what}: {role} must be given")
    else:
        if rank not in pg._global_to_group:
            raise ValueError(f"Global rank {rank} is not part of group {pg}")
        peer = pg._global_to_group[rank]
    if not 0 <= peer < pg.size():
        raise ValueError(f"Invalid {role} rank: {peer} (the group has {pg.size()} ranks)")
    if peer == pg.rank():
        kind = "destination" if role == "dst" else "source"
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         "of the current process.")
    return peer


def isend(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None):
    """Start sending ``tensor`` to rank ``dst``; returns a ``Work`` to wait on before the
    tensor is modified (``torch.distributed.isend``). Any dtype and shape; the receiver's tensor
    must have the same number of bytes. Raises ValueError for ``dst`` equal to this rank."""
    pg = _resolve(group)
    if not_member(pg, "isend"):
        return None
    arr = tensor_array(tensor, "isend")
    peer = _peer(pg, dst, group_dst, "isend", "dst")
    staged = Staged(arr, copy_back=False)
    req = pg._comm.Isend([byte_view(staged.buf), mpi().BYTE], peer, tag)
    return Work(pg, "SEND", [req], None, [tensor], arr.size, keep=(staged,))


def irecv(tensor, src: int | None = None, group=None, tag: int = 0,
          group_src: int | None = None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None); returns a
    ``Work`` whose ``source_rank()`` names the sender (``torch.distributed.irecv``)."""
    pg = _resolve(group)
    if not_member(pg, "irecv"):
        return None
    arr = tensor_array(tensor, "irecv")
    check_writable(arr, "irecv")
    peer = _peer(pg, src, group_src, "irecv", "src", allow_any=True)
    staged = Staged(arr, copy_in=False)
    status = mpi().Status()
    req = pg._comm.Irecv([byte_view(staged.buf), mpi().BYTE], peer,
                         tag if tag is not None else mpi().ANY_TAG)
    return Work(pg, "RECV", [req], staged.finish, [tensor], arr.size, status=status,
                keep=(staged,))


def send(tensor, dst: int | None = None, group=None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it went (``torch.distributed.send``)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src: int | None = None, group=None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any when None); returns the sender's global
    rank (``torch.distributed.recv``), -1 on a rank outside ``group``."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source_rank()


class P2POp:
    """One send or receive for ``batch_isend_irecv`` (``torch.distributed.P2POp``): ``op`` is
    ``isend`` or ``irecv``, ``peer`` a global rank (or ``group_peer`` a group rank)."""

    def __init__(self, op, tensor, peer: int | None = None, group=None, tag: int = 0,
                 group_peer: int | None = None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group = op, tensor, peer, group
        self.tag, self.group_peer = tag, group_peer

    def __repr__(self) -> str:
        return f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list: list) -> list:
    """Start every ``P2POp`` of the list and return their ``Work``s
    (``torch.distributed.batch_isend_irecv``); wait on each before using the tensors."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works
