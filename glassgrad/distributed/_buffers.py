"""Tensor arrays as MPI buffers: datatypes, reduction ops, and the write-back into the tensor.

# NOTE [MPI buffers]: collectives hand MPI the tensor's own NumPy memory (``[array, count,
# datatype]``, no pickling). A tensor that is not C-contiguous, or of a dtype MPI cannot reduce
# (float16, bfloat16: MPICH has no half types), goes through a contiguous staging copy (float32
# for the half types, which adds once and rounds once: as exact as torch's gloo for 2 ranks, and
# no worse for more) and is written back into the tensor's memory when the operation completes,
# so the in-place semantics are torch's: ``all_reduce(t)`` changes ``t`` and every view of it.
# Data movement without arithmetic (broadcast, gather, send) moves raw bytes, so any dtype goes.
# As in torch, these writes do not bump the tensor's version counter.
"""

from __future__ import annotations

import numpy as np

from .reduce_op import _RedOpType, as_red_op_type

_MPI = None


def mpi():
    """mpi4py's MPI module, imported (which initialises MPI) on first use."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise RuntimeError(
                "glassgrad.distributed needs mpi4py and an MPI library: pip install "
                "'glassgrad[distributed]' (mpi4py and the mpich wheel)"
            ) from e
        _MPI = MPI
    return _MPI


_INT_TYPES = {
    "int8": "INT8_T", "int16": "INT16_T", "int32": "INT32_T", "int64": "INT64_T",
    "uint8": "UINT8_T", "uint16": "UINT16_T", "uint32": "UINT32_T", "uint64": "UINT64_T",
}
_FLOAT_TYPES = {"float32": "FLOAT", "float64": "DOUBLE"}
_COMPLEX_TYPES = {"complex64": "C_FLOAT_COMPLEX", "complex128": "C_DOUBLE_COMPLEX"}
_HALF = ("float16", "bfloat16")


_TORCH_NAMES = {
    "float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def torch_dtype_name(arr: np.ndarray) -> str:
    """The dtype as torch names it in messages (``Float``, ``Long``, ``BFloat16``...)."""
    return _TORCH_NAMES.get(arr.dtype.name, arr.dtype.name)


def tensor_array(tensor, what: str, name: str = "tensor") -> np.ndarray:
    """The NumPy array behind ``tensor``, after torch's argument checks for collective ``what``."""
    from ..tensor import Tensor

    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(tensor)} instead."
        )
    if getattr(tensor, "_sparse", False):
        raise RuntimeError(
            f"glassgrad.distributed.{what}: sparse tensors are not supported; pass "
            f"tensor.to_dense()"
        )
    arr = tensor._array
    if not isinstance(arr, np.ndarray):
        raise RuntimeError(
            f"glassgrad.distributed.{what}: the tensor's data is a {type(arr).__name__}, not a "
            "NumPy array (a tensor inside vmap/functorch cannot take part in a collective)"
        )
    return arr


def check_writable(arr: np.ndarray, what: str) -> None:
    if not arr.flags.writeable:
        raise RuntimeError(
            f"glassgrad.distributed.{what}: the output tensor of shape {list(arr.shape)} is a "
            "read-only (expanded or broadcast) view, so the result cannot be written into it; "
            "pass tensor.clone() or tensor.contiguous()"
        )


def byte_view(arr: np.ndarray) -> np.ndarray:
    """A flat uint8 view of a C-contiguous array (MPI moves it as MPI.BYTE)."""
    return arr.reshape(-1).view(np.uint8)


class Staged:
    """A C-contiguous buffer standing for ``arr``; ``finish()`` writes it back if it is a copy."""

    __slots__ = ("arr", "buf", "copy_back", "post")

    def __init__(self, arr: np.ndarray, compute_dtype=None, copy_in: bool = True,
                 copy_back: bool = True):
        self.arr = arr
        self.post = None
        if compute_dtype is None and arr.flags.c_contiguous:
            self.buf, self.copy_back = arr, False
            return
        dtype = arr.dtype if compute_dtype is None else compute_dtype
        if copy_in:
            self.buf = np.ascontiguousarray(arr, dtype=dtype)
        else:
            self.buf = np.empty(arr.shape, dtype=dtype)
        self.copy_back = copy_back

    def finish(self) -> None:
        if self.post is not None:
            self.post(self.buf)
        if self.copy_back:
            # NOTE: a half sum past the type's range is inf, as torch's, without NumPy's warning
            with np.errstate(over="ignore"):
                self.arr[...] = self.buf.astype(self.arr.dtype, copy=False)


_INFO: dict = {}  # np.dtype -> (kind, staging dtype or None, MPI datatype name or None)


def _info(np_dtype: np.dtype) -> tuple:
    # NOTE: cached per dtype: dtype.name costs microseconds, and a collective asks three times
    info = _INFO.get(np_dtype)
    if info is None:
        name = np_dtype.name
        if name in _FLOAT_TYPES or name in _HALF:
            kind = "float"
        elif name in _INT_TYPES:
            kind = "int"
        elif name == "bool":
            kind = "bool"
        elif name in _COMPLEX_TYPES:
            kind = "complex"
        else:
            kind = "other"
        stage = np.dtype(np.float32) if name in _HALF else None
        key = (_FLOAT_TYPES.get(name) or _INT_TYPES.get(name) or _COMPLEX_TYPES.get(name)
               or ("C_BOOL" if name == "bool" else None))
        info = _INFO[np_dtype] = (kind, stage, key)
    return info


def dtype_kind(arr_dtype: np.dtype) -> str:
    return _info(arr_dtype)[0]


def compute_dtype(arr_dtype: np.dtype):
    """The staging dtype reductions use for ``arr_dtype`` (None: reduce in place)."""
    return _info(arr_dtype)[1]


def mpi_datatype(np_dtype: np.dtype, what: str):
    key = _info(np_dtype)[2]
    if key is None:
        raise TypeError(f"glassgrad.distributed.{what}: tensors of dtype {np_dtype.name} cannot "
                        "be reduced")
    return getattr(mpi(), key)


_FLOAT_OPS = {_RedOpType.SUM: "SUM", _RedOpType.AVG: "SUM", _RedOpType.PRODUCT: "PROD",
              _RedOpType.MIN: "MIN", _RedOpType.MAX: "MAX"}
_INT_OPS = {**_FLOAT_OPS, _RedOpType.BAND: "BAND", _RedOpType.BOR: "BOR",
            _RedOpType.BXOR: "BXOR"}
# NOTE: torch's backends reduce bools as bytes with max/min, i.e. a logical or/and
_BOOL_OPS = {_RedOpType.SUM: "LOR", _RedOpType.MAX: "LOR", _RedOpType.BOR: "LOR",
             _RedOpType.PRODUCT: "LAND", _RedOpType.MIN: "LAND", _RedOpType.BAND: "LAND",
             _RedOpType.BXOR: "LXOR"}


def mpi_op(op, arr: np.ndarray, what: str):
    """``(MPI.Op, average)`` for ReduceOp ``op`` on ``arr``'s dtype, refusing as torch refuses."""
    op = as_red_op_type(op)
    kind = dtype_kind(arr.dtype)
    if op in (_RedOpType.PREMUL_SUM, _RedOpType.UNUSED):
        raise NotImplementedError(
            f"glassgrad.distributed.{what}: ReduceOp.{op.name} is a NCCL-only reduction in torch "
            "and is not supported by the MPI backend; scale the tensor and use ReduceOp.SUM"
        )
    if kind == "complex":
        if op not in (_RedOpType.SUM, _RedOpType.AVG):
            raise ValueError(f"{what} does not support RedOpType.{op.name} on complex tensors")
        table = _FLOAT_OPS
    elif kind == "float":
        if op in (_RedOpType.BAND, _RedOpType.BOR, _RedOpType.BXOR):
            raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
        table = _FLOAT_OPS
    elif kind in ("int", "bool"):
        if op is _RedOpType.AVG:
            out = torch_dtype_name(arr)
            raise RuntimeError(f"result type Float can't be cast to the desired output type {out}")
        table = _BOOL_OPS if kind == "bool" else _INT_OPS
    else:
        raise TypeError(
            f"glassgrad.distributed.{what}: tensors of dtype {arr.dtype} cannot be reduced"
        )
    return getattr(mpi(), table[op]), op is _RedOpType.AVG
