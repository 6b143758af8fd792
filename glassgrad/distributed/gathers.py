"""all_gather, all_gather_into_tensor, reduce_scatter(_tensor), gather, scatter, all_to_all.

Same pattern as collectives.py: torch's checks, one nonblocking MPI call on contiguous NumPy
buffers (raw bytes where nothing is added: NOTE [MPI buffers]), results copied into the output
tensors when the Work completes.
"""

from __future__ import annotations

import numpy as np

from . import _fingerprint
from ._buffers import Staged, byte_view, check_writable, mpi, tensor_array
from .collectives import launch, not_member, reduction_plan
from .process_group import _resolve, group_root
from .reduce_op import ReduceOp

__all__ = ["all_gather", "all_gather_into_tensor", "all_to_all", "all_to_all_single", "gather",
           "reduce_scatter", "reduce_scatter_tensor", "scatter"]


def _shape(a: np.ndarray) -> str:
    return "(" + ", ".join(str(d) for d in a.shape) + ")"


def _check_list(tensors, n: int, ref: np.ndarray, what: str, name: str, list_kind: str):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"Invalid function argument: {name} should be a list of tensors, got "
                        f"{type(tensors).__name__}")
    if len(tensors) != n:
        raise RuntimeError(f"ProcessGroupMPI::{what}: invalid {list_kind} tensor list at index 0 "
                           f"(expected length {n}, got {len(tensors)})")
    arrays = [tensor_array(t, what, name) for t in tensors]
    for i, a in enumerate(arrays):
        if a.shape != ref.shape:
            raise RuntimeError(f"ProcessGroupMPI::{what}: invalid tensor size at index {i} "
                               f"(expected {_shape(ref)}, got {_shape(a)})")
        if a.dtype != ref.dtype:
            raise RuntimeError(f"ProcessGroupMPI::{what}: invalid tensor type at index {i} "
                               f"(expected {ref.dtype}, got {a.dtype})")
    return arrays


def _same_dtypes(*tensors) -> None:
    """torch's ValueError for tensors of different dtypes, raised before any rank communicates.

    As torch's check: a complex tensor counts as its real element type, lists are flattened,
    None and non-tensors are left to the later checks."""
    from .. import complex64, complex128, float32, float64

    last = None
    for item in tensors:
        for t in item if isinstance(item, (list, tuple)) else (item,):
            dtype = getattr(t, "dtype", None)
            if dtype is None:
                continue
            kind = {complex64: float32, complex128: float64}.get(dtype, dtype)
            if last is None:
                last = kind
            elif kind != last:
                raise ValueError(f"Invalid usage of tensors with different dtypesFound {last} "
                                 f"and  {dtype}")


def _scatter_into(outputs: list[np.ndarray], buf: np.ndarray):
    def finish():
        for i, out in enumerate(outputs):
            out[...] = buf[i]
    return finish


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list[i]`` with rank i's ``tensor`` on every rank
    (``torch.distributed.all_gather``). The list has one tensor per rank, each of ``tensor``'s
    shape and dtype (else torch's RuntimeError); any dtype."""
    _same_dtypes(tensor_list, tensor)
    pg = _resolve(group)
    if not_member(pg, "all_gather"):
        return None
    arr = tensor_array(tensor, "all_gather")
    outs = _check_list(tensor_list, pg.size(), arr, "allgather", "tensor_list", "output")
    for o in outs:
        check_writable(o, "all_gather")
    _fingerprint.check(pg, "ALLGATHER", [arr])
    send = np.ascontiguousarray(arr)
    recv = np.empty((pg.size(), *arr.shape), dtype=arr.dtype)
    req = pg._comm.Iallgather([byte_view(send), mpi().BYTE], [byte_view(recv), mpi().BYTE])
    return launch(pg, "ALLGATHER", [req], _scatter_into(outs, recv), list(tensor_list), async_op,
                  arr.size, keep=(send, recv))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Gather every rank's ``input_tensor`` into ``output_tensor`` in rank order
    (``torch.distributed.all_gather_into_tensor``): the output is the inputs concatenated
    along dim 0 (``world_size * n`` rows) or stacked (``(world_size, *shape)``)."""
    pg = _resolve(group)
    if not_member(pg, "all_gather_into_tensor"):
        return None
    arr = tensor_array(input_tensor, "all_gather_into_tensor", "input_tensor")
    out = tensor_array(output_tensor, "all_gather_into_tensor", "output_tensor")
    if out.dtype != arr.dtype:
        raise RuntimeError(f"output tensor must have the same type as input tensor (output "
                           f"{out.dtype}, input {arr.dtype})")
    if out.size != pg.size() * arr.size:
        raise RuntimeError(
            f"ProcessGroupMPI::_allgather_base: output tensor size must be equal to world_size "
            f"times input tensor size (output {_shape(out)}, input {_shape(arr)}, world_size "
            f"{pg.size()})")
    check_writable(out, "all_gather_into_tensor")
    _fingerprint.check(pg, "_ALLGATHER_BASE", [arr])
    send = np.ascontiguousarray(arr)
    staged = Staged(out, copy_in=False)
    req = pg._comm.Iallgather([byte_view(send), mpi().BYTE], [byte_view(staged.buf), mpi().BYTE])
    return launch(pg, "_ALLGATHER_BASE", [req], staged.finish, [output_tensor], async_op,
                  arr.size, keep=(send, staged))


def _reduce_scatter(pg, out: np.ndarray, send: np.ndarray, op, what: str, tensors, async_op,
                    kind: str):
    check_writable(out, what)
    staged, mop, dtype = reduction_plan(out, op, what, pg)
    staged.buf = np.empty(out.shape, dtype=staged.buf.dtype)
    staged.copy_back = True
    send = np.ascontiguousarray(send, dtype=staged.buf.dtype).reshape(-1)
    _fingerprint.check(pg, kind, [out])
    recv = staged.buf.reshape(-1)
    req = pg._comm.Ireduce_scatter_block([send, recv.size, dtype], [recv, recv.size, dtype], mop)
    return launch(pg, kind, [req], staged.finish, tensors, async_op, out.size,
                  keep=(send, staged))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``input_list[i]`` across the ranks into ``output`` on rank i
    (``torch.distributed.reduce_scatter``). ``input_list`` has one tensor per rank, each of
    ``output``'s shape and dtype."""
    _same_dtypes(output, input_list)
    pg = _resolve(group)
    if not_member(pg, "reduce_scatter"):
        return None
    out = tensor_array(output, "reduce_scatter", "output")
    if not isinstance(input_list, (list, tuple)) or len(input_list) != pg.size():
        raise RuntimeError("invalid input tensor list size, must be world size")
    ins = _check_list(input_list, pg.size(), out, "reduce_scatter", "input_list", "input")
    send = np.stack(ins) if ins else np.empty((0, *out.shape), out.dtype)
    return _reduce_scatter(pg, out, send, op, "reduce_scatter", [output], async_op,
                           "REDUCE_SCATTER")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None,  # noqa: A002
                          async_op: bool = False):
    """Reduce ``input`` (the ranks' chunks concatenated along dim 0, or stacked) across the ranks
    and write chunk i into ``output`` on rank i (``torch.distributed.reduce_scatter_tensor``)."""
    pg = _resolve(group)
    if not_member(pg, "reduce_scatter_tensor"):
        return None
    out = tensor_array(output, "reduce_scatter_tensor", "output")
    arr = tensor_array(input, "reduce_scatter_tensor", "input")
    if arr.dtype != out.dtype:
        raise RuntimeError(f"input tensor must be the same type as the output tensor (input "
                           f"{arr.dtype}, output {out.dtype})")
    if arr.size != pg.size() * out.size:
        raise RuntimeError(
            f"ProcessGroupMPI::_reduce_scatter_base: input tensor must be the same size as output "
            f"size times world size (input {_shape(arr)}, output {_shape(out)}, world_size "
            f"{pg.size()})")
    return _reduce_scatter(pg, out, arr, op, "reduce_scatter_tensor", [output], async_op,
                           "_REDUCE_SCATTER_BASE")


def gather(tensor, gather_list=None, dst: int | None = None, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Collect every rank's ``tensor`` into ``gather_list`` on rank ``dst``
    (``torch.distributed.gather``); other ranks pass no list."""
    _same_dtypes(tensor, gather_list)
    pg = _resolve(group)
    if not_member(pg, "gather"):
        return None
    arr = tensor_array(tensor, "gather")
    root = group_root(pg, dst, group_dst, "gather", "dst")
    mine = pg.rank() == root
    if mine:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        outs = _check_list(gather_list, pg.size(), arr, "gather", "gather_list", "output")
        for o in outs:
            check_writable(o, "gather")
        recv = np.empty((pg.size(), *arr.shape), dtype=arr.dtype)
        rbuf, finish = [byte_view(recv), mpi().BYTE], _scatter_into(outs, recv)
    else:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                             "ranks.")
        rbuf, finish, recv = None, None, None
    _fingerprint.check(pg, "GATHER", [arr], root)
    send = np.ascontiguousarray(arr)
    req = pg._comm.Igather([byte_view(send), mpi().BYTE], rbuf, root)
    return launch(pg, "GATHER", [req], finish, list(gather_list or []), async_op, arr.size,
                  keep=(send, recv))


def scatter(tensor, scatter_list=None, src: int | None = None, group=None,
            async_op: bool = False, group_src: int | None = None):
    """Write ``scatter_list[i]`` of rank ``src`` into ``tensor`` on rank i
    (``torch.distributed.scatter``); other ranks pass no list."""
    _same_dtypes(tensor, scatter_list)
    pg = _resolve(group)
    if not_member(pg, "scatter"):
        return None
    arr = tensor_array(tensor, "scatter")
    root = group_root(pg, src, group_src, "scatter")
    check_writable(arr, "scatter")
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        if len(scatter_list) != pg.size():
            raise RuntimeError(
                f"ProcessGroupMPI::scatter: Incorrect input list size {len(scatter_list)}. Input "
                f"list size should be {pg.size()}, same as size of the process group.")
        ins = _check_list(scatter_list, pg.size(), arr, "scatter", "scatter_list", "input")
        send = np.stack(ins)
        sbuf = [byte_view(send), mpi().BYTE]
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        sbuf, send = None, None
    _fingerprint.check(pg, "SCATTER", [arr], root)
    staged = Staged(arr, copy_in=False)
    req = pg._comm.Iscatter(sbuf, [byte_view(staged.buf), mpi().BYTE], root)
    return launch(pg, "SCATTER", [req], staged.finish, [tensor], async_op, arr.size,
                  keep=(send, staged))


def _alltoallv(pg, send: np.ndarray, scounts, recv: np.ndarray, rcounts, finish, tensors,
               async_op, kind, numel):
    sdispl = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(int).tolist()
    rdispl = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(int).tolist()
    _fingerprint.check(pg, kind, [])
    req = pg._comm.Ialltoallv([byte_view(send), (list(scounts), sdispl), mpi().BYTE],
                              [byte_view(recv), (list(rcounts), rdispl), mpi().BYTE])
    return launch(pg, kind, [req], finish, tensors, async_op, numel, keep=(send, recv))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Send ``input_tensor_list[j]`` to rank j and receive rank j's into
    ``output_tensor_list[j]`` (``torch.distributed.all_to_all``); sizes may differ per peer but
    the dtype is one, and each output must match what its peer sends."""
    _same_dtypes(output_tensor_list, input_tensor_list)
    pg = _resolve(group)
    if not_member(pg, "all_to_all"):
        return None
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise RuntimeError(f"ProcessGroupMPI::alltoall: the tensor lists must have one tensor "
                           f"per rank ({n}), got {len(output_tensor_list)} outputs and "
                           f"{len(input_tensor_list)} inputs")
    ins = [tensor_array(t, "all_to_all", "input_tensor_list") for t in input_tensor_list]
    outs = [tensor_array(t, "all_to_all", "output_tensor_list") for t in output_tensor_list]
    dtypes = {a.dtype for a in ins + outs}
    if len(dtypes) > 1:
        raise RuntimeError(f"ProcessGroupMPI::alltoall: all tensors must have one dtype, got "
                           f"{sorted(str(d) for d in dtypes)}")
    for o in outs:
        check_writable(o, "all_to_all")
    send = np.concatenate([a.reshape(-1) for a in ins]) if ins else np.empty(0)
    recv = np.empty(sum(o.size for o in outs), dtype=outs[0].dtype)

    def finish():
        start = 0
        for o in outs:
            o[...] = recv[start:start + o.size].reshape(o.shape)
            start += o.size

    return _alltoallv(pg, send, [a.nbytes for a in ins], recv, [o.nbytes for o in outs], finish,
                      list(output_tensor_list), async_op, "ALLTOALL", send.size)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,  # noqa: A002
                      group=None, async_op: bool = False):
    """Split ``input`` along dim 0 (evenly, or by ``input_split_sizes``), send piece j to rank
    j, and concatenate the received pieces into ``output`` along dim 0
    (``torch.distributed.all_to_all_single``)."""
    _same_dtypes(output, input)
    pg = _resolve(group)
    if not_member(pg, "all_to_all_single"):
        return None
    n = pg.size()
    arr = tensor_array(input, "all_to_all_single", "input")
    out = tensor_array(output, "all_to_all_single", "output")
    if arr.dtype != out.dtype:
        raise RuntimeError(f"all_to_all_single: input and output must have one dtype (input "
                           f"{arr.dtype}, output {out.dtype})")
    check_writable(out, "all_to_all_single")

    def splits(given, a, name):
        rows = a.shape[0] if a.ndim else 1
        if not given:
            if rows % n:
                raise RuntimeError(f"Tensor's dim 0 does not divide equally across group size "
                                   f"({name} has {rows} rows, group size {n})")
            return [rows // n] * n
        if len(given) != n or sum(given) != rows:
            raise RuntimeError(f"Split sizes doesn't match total dim 0 size ({name}: "
                               f"{list(given)} for {rows} rows and {n} ranks)")
        return list(given)

    row_in = arr[0].nbytes if arr.ndim and arr.shape[0] else arr.itemsize
    row_out = out[0].nbytes if out.ndim and out.shape[0] else out.itemsize
    scounts = [s * row_in for s in splits(input_split_sizes, arr, "input")]
    rcounts = [s * row_out for s in splits(output_split_sizes, out, "output")]
    staged = Staged(out, copy_in=False)
    return _alltoallv(pg, np.ascontiguousarray(arr), scounts, staged.buf, rcounts, staged.finish,
                      [output], async_op, "ALLTOALL_BASE", arr.size)
