"""Collective fingerprints: with TORCH_DISTRIBUTED_DEBUG=DETAIL (torch's switch) every
collective first compares its op, root, shapes and dtypes across the group, and a mismatch
raises torch's "Detected mismatch between collectives on ranks" naming both ranks' calls,
instead of a hang or a truncated message. Off by default (one cached flag test per call)."""

from __future__ import annotations

import os

import numpy as np

from ._buffers import mpi, torch_dtype_name

_OPS = ["ALLREDUCE", "BROADCAST", "REDUCE", "BARRIER", "ALLGATHER", "_ALLGATHER_BASE",
        "REDUCE_SCATTER", "_REDUCE_SCATTER_BASE", "GATHER", "SCATTER", "ALLTOALL",
        "ALLTOALL_BASE"]
_DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool", "complex64", "complex128"]
_WIDTH = 16  # op, root, ntensors, then (dtype, ndim, 4 dims) for the first tensor, numel sum


def enabled() -> bool:
    return os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"


def _encode(op: str, arrays, root: int, seq: int) -> np.ndarray:
    fp = np.full(_WIDTH, -1, dtype=np.int64)
    fp[0], fp[1], fp[2], fp[3] = _OPS.index(op), root, len(arrays), seq
    if arrays:
        a = arrays[0]
        fp[4] = _DTYPES.index(a.dtype.name) if a.dtype.name in _DTYPES else 99
        fp[5] = a.ndim
        fp[6:6 + min(a.ndim, 8)] = a.shape[:8]
        fp[14] = sum(x.size for x in arrays)
    return fp


def _describe(fp: np.ndarray) -> str:
    shape = [int(d) for d in fp[6:6 + max(int(fp[5]), 0)]] if fp[2] > 0 else []
    dtype = _DTYPES[fp[4]] if 0 <= fp[4] < len(_DTYPES) else "other"
    name = torch_dtype_name(np.empty(0, dtype=dtype)) if dtype != "other" else dtype
    return (f"CollectiveFingerPrint(SequenceNumber={int(fp[3])}, OpType={_OPS[fp[0]]}, "
            f"TensorShape={shape}, TensorDtypes={name if fp[2] > 0 else []}, Root={int(fp[1])})")


def check(pg, op: str, arrays, root: int = -1) -> None:
    """Raise RuntimeError if another rank of ``pg`` is running a different collective now."""
    if not enabled():
        return
    mine = _encode(op, arrays, root, pg._seq + 1)
    every = np.empty((pg.size(), _WIDTH), dtype=np.int64)
    from .work import Work

    req = pg._comm.Iallgather([mine, mpi().INT64_T], [every, mpi().INT64_T])
    work = Work(pg, f"{op} (fingerprint check)", [req], None, [], count=False)
    work._seq = pg._seq + 1
    work.wait()
    for r in range(pg.size()):
        if not np.array_equal(every[r], mine):
            raise RuntimeError(
                "Detected mismatch between collectives on ranks. Rank "
                f"{pg._ranks[pg.rank()]} is running collective: {_describe(mine)}, but Rank "
                f"{pg._ranks[r]} is running collective: {_describe(every[r])}."
            )
