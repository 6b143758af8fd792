"""Object collectives: all_gather_object, broadcast_object_list, gather_object,
scatter_object_list, send_object_list, recv_object_list.

# NOTE [Objects between ranks]: torch pickles these objects, so a peer can run code in every rank
# that unpickles. glassgrad sends them in its own checkpoint format (``glassgrad.save`` into
# memory, ``glassgrad.load`` back): tensors, numbers, strings, bytes, None, dtypes, devices,
# nested lists/tuples/dicts/sets, state_dicts, argparse.Namespace, dataclasses and the other types
# ``glassgrad.save`` documents; nothing received is executed, and a payload that is not in
# glassgrad's format (a pickle or a zip) is refused. An object that cannot be encoded raises
# ``glassgrad.save``'s TypeError on its rank and a RuntimeError naming that rank on the others,
# instead of leaving them waiting.
"""

from __future__ import annotations

import io

import numpy as np

from ._buffers import mpi
from .collectives import not_member
from .p2p import _peer
from .process_group import _resolve, group_root
from .work import Work

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "recv_object_list",
           "scatter_object_list", "send_object_list"]


def _encode(obj):
    """``(uint8 array, None)``, or ``(None, the exception)`` when ``obj`` cannot be encoded."""
    from .. import serialization

    f = io.BytesIO()
    try:
        serialization.save([obj], f)
    except (TypeError, ValueError, RecursionError) as e:
        return None, e
    return np.frombuffer(f.getvalue(), dtype=np.uint8), None


def _decode(payload: np.ndarray, rank: int, what: str):
    from .. import serialization

    data = payload.tobytes()
    head = int.from_bytes(data[:8], "little") if len(data) >= 8 else -1
    if not (0 < head <= len(data) - 8 and data[8:9] == b"{"):
        raise RuntimeError(f"glassgrad.distributed.{what}: the payload from rank {rank} is not in "
                           "glassgrad's checkpoint format; refused (NOTE [Objects between ranks])")
    return serialization.load(io.BytesIO(data))[0]


def _wait(pg, op: str, req) -> None:
    Work(pg, op, [req], None, []).wait()


def _refuse(sizes, ranks, error, what: str) -> None:
    bad = [ranks[i] for i, s in enumerate(sizes) if s < 0]
    if not bad:
        return
    if error is not None:
        raise error
    raise RuntimeError(f"glassgrad.distributed.{what}: the object of rank {bad[0]} could not be "
                       "encoded (its own error is raised there); only the types glassgrad.save "
                       "writes can be sent (NOTE [Objects between ranks])")


def _check_slots(object_list, n: int, what: str, name: str) -> None:
    if len(object_list) < n:
        raise IndexError(f"list assignment index out of range: {what}: {name} has "
                         f"{len(object_list)} slots; it needs one per rank of the group ({n})")


def _displs(sizes) -> list[int]:
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()


def _gather_sizes(pg, payload):
    MPI = mpi()
    mine = np.array([-1 if payload is None else payload.size], dtype=np.int64)
    sizes = np.empty(pg.size(), dtype=np.int64)
    _wait(pg, "ALLGATHER", pg._comm.Iallgather([mine, MPI.INT64_T], [sizes, MPI.INT64_T]))
    return sizes


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Fill ``object_list[i]`` with rank i's ``obj`` on every rank
    (``torch.distributed.all_gather_object``), through glassgrad's checkpoint format, never
    pickle (NOTE [Objects between ranks]). ``object_list`` needs one slot per rank."""
    pg = _resolve(group)
    if not_member(pg, "all_gather_object"):
        return
    payload, error = _encode(obj)
    sizes = _gather_sizes(pg, payload)
    _refuse(sizes, pg._ranks, error, "all_gather_object")
    recv = np.empty(int(sizes.sum()), dtype=np.uint8)
    MPI = mpi()
    _wait(pg, "ALLGATHER", pg._comm.Iallgatherv(
        [payload, MPI.BYTE], [recv, (sizes.tolist(), _displs(sizes)), MPI.BYTE]))
    # NOTE: checked after the exchange, as torch fails (IndexError) only when it fills the list:
    # a rank that refused before communicating would leave the others waiting in the collective
    _check_slots(object_list, pg.size(), "all_gather_object", "object_list")
    starts = _displs(sizes)
    for i in range(pg.size()):
        object_list[i] = _decode(recv[starts[i]:starts[i] + sizes[i]], pg._ranks[i],
                                 "all_gather_object")


def broadcast_object_list(object_list: list, src: int | None = None, group=None, device=None,
                          group_src: int | None = None) -> None:
    """Replace ``object_list``'s items on every rank with rank ``src``'s
    (``torch.distributed.broadcast_object_list``, in place); the lists must have the same length
    on every rank. Safe format, never pickle (NOTE [Objects between ranks])."""
    pg = _resolve(group)
    if not_member(pg, "broadcast_object_list"):
        return
    root = group_root(pg, src, group_src, "broadcast_object_list")
    MPI = mpi()
    mine = pg.rank() == root
    payload, error = _encode(list(object_list)) if mine else (None, None)
    size = np.array([-1 if payload is None else payload.size], dtype=np.int64)
    _wait(pg, "BROADCAST", pg._comm.Ibcast([size, MPI.INT64_T], root))
    if size[0] < 0:
        _refuse([-1], [pg._ranks[root]], error, "broadcast_object_list")
    buf = payload if mine else np.empty(int(size[0]), dtype=np.uint8)
    _wait(pg, "BROADCAST", pg._comm.Ibcast([buf, MPI.BYTE], root))
    if mine:
        return
    values = _decode(buf, pg._ranks[root], "broadcast_object_list")
    if len(values) != len(object_list):
        raise RuntimeError(f"broadcast_object_list: rank {pg._ranks[root]} sent {len(values)} "
                           f"objects; this rank's list has {len(object_list)} slots")
    object_list[:] = values


def gather_object(obj, object_gather_list=None, dst: int | None = None, group=None,
                  group_dst: int | None = None) -> None:
    """Collect every rank's ``obj`` into ``object_gather_list`` on rank ``dst``
    (``torch.distributed.gather_object``); safe format (NOTE [Objects between ranks])."""
    pg = _resolve(group)
    if not_member(pg, "gather_object"):
        return
    root = group_root(pg, dst, group_dst, "gather_object", "dst")
    mine = pg.rank() == root
    if mine and not object_gather_list:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if not mine and object_gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    payload, error = _encode(obj)
    sizes = _gather_sizes(pg, payload)
    _refuse(sizes, pg._ranks, error, "gather_object")
    MPI = mpi()
    recv = np.empty(int(sizes.sum()), dtype=np.uint8) if mine else None
    rbuf = [recv, (sizes.tolist(), _displs(sizes)), MPI.BYTE] if mine else None
    _wait(pg, "GATHER", pg._comm.Igatherv([payload, MPI.BYTE], rbuf, root))
    if mine:
        _check_slots(object_gather_list, pg.size(), "gather_object", "object_gather_list")
        starts = _displs(sizes)
        for i in range(pg.size()):
            object_gather_list[i] = _decode(recv[starts[i]:starts[i] + sizes[i]], pg._ranks[i],
                                            "gather_object")


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None,
                        src: int | None = None, group=None, group_src: int | None = None) -> None:
    """Put rank ``src``'s ``scatter_object_input_list[i]`` into
    ``scatter_object_output_list[0]`` on rank i (``torch.distributed.scatter_object_list``)."""
    pg = _resolve(group)
    if not_member(pg, "scatter_object_list"):
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    root = group_root(pg, src, group_src, "scatter_object_list")
    mine = pg.rank() == root
    values = [None] * pg.size()
    if mine:
        if scatter_object_input_list is None or len(scatter_object_input_list) != pg.size():
            raise ValueError("scatter_object_list: scatter_object_input_list must have one object "
                             f"per rank ({pg.size()}) on the source rank")
        values = list(scatter_object_input_list)
    holder = [values]
    broadcast_object_list(holder, src=None, group=group, group_src=root)
    scatter_object_output_list[0] = holder[0][pg.rank()]


def send_object_list(object_list: list, dst: int | None = None, group=None, device=None,
                     group_dst: int | None = None, use_batch: bool = False) -> None:
    """Send ``object_list``'s objects to rank ``dst`` (``torch.distributed.send_object_list``);
    safe format (NOTE [Objects between ranks])."""
    pg = _resolve(group)
    if not_member(pg, "send_object_list"):
        return
    peer = _peer(pg, dst, group_dst, "send_object_list", "dst")
    payload, error = _encode(list(object_list))
    MPI = mpi()
    size = np.array([-1 if payload is None else payload.size], dtype=np.int64)
    _wait(pg, "SEND", pg._comm.Isend([size, MPI.INT64_T], peer, 1 << 14))
    if error is not None:
        raise error
    _wait(pg, "SEND", pg._comm.Isend([payload, MPI.BYTE], peer, (1 << 14) + 1))


def recv_object_list(object_list: list, src: int | None = None, group=None, device=None,
                     group_src: int | None = None, use_batch: bool = False) -> int:
    """Receive objects from rank ``src`` (any when None) into ``object_list`` in place and
    return the sender's rank (``torch.distributed.recv_object_list``)."""
    pg = _resolve(group)
    if not_member(pg, "recv_object_list"):
        return -1
    peer = _peer(pg, src, group_src, "recv_object_list", "src", allow_any=True)
    MPI = mpi()
    size = np.empty(1, dtype=np.int64)
    status = MPI.Status()
    work = Work(pg, "RECV", [pg._comm.Irecv([size, MPI.INT64_T], peer, 1 << 14)], None, [],
                status=status)
    work.wait()
    sender = status.Get_source()
    if size[0] < 0:
        _refuse([-1], [pg._ranks[sender]], None, "recv_object_list")
    buf = np.empty(int(size[0]), dtype=np.uint8)
    _wait(pg, "RECV", pg._comm.Irecv([buf, MPI.BYTE], sender, (1 << 14) + 1))
    values = _decode(buf, pg._ranks[sender], "recv_object_list")
    if len(values) != len(object_list):
        raise RuntimeError(f"recv_object_list: rank {pg._ranks[sender]} sent {len(values)} "
                           f"objects; the list here has {len(object_list)} slots")
    object_list[:] = values
    return pg._ranks[sender]
