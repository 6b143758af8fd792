"""Memory shared with other libraries: DLPack (``torch.from_dlpack``, ``to_dlpack``,
``Tensor.__dlpack__``), ``torch.frombuffer``, ``torch.asarray`` and ``torch.from_file``.

A glassgrad tensor is a NumPy array, so NumPy's DLPack support does the exchange: a tensor
exported here and imported by NumPy or torch (or the reverse) shares its memory, no copy.
"""

from __future__ import annotations

import ctypes
import enum
import os
import numpy as np

from . import _storage, _warn_always, dtypes
from ._factories import _finish, from_numpy, tensor
from .tensor import Tensor

_WARNED: set = set()  # NOTE [Warn always] in _warn_always.py


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (``torch.utils.dlpack.DLDeviceType``); glassgrad is CPU only."""

    kDLCPU = 1


def _exportable(t, op) -> np.ndarray:
    if t._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if t._array.dtype == dtypes.bfloat16.np:
        raise BufferError(f"{op}: glassgrad's bfloat16 is ml_dtypes', which DLPack export through "
                          "NumPy does not support; convert with .float() first.")
    return t._array


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of this tensor's memory (``torch.Tensor.__dlpack__``); BufferError for a
    tensor that requires grad."""
    arr = _exportable(self, "__dlpack__")
    kwargs = {} if max_version is None else {"max_version": max_version}
    if copy is not None:
        kwargs["copy"] = copy
    return arr.__dlpack__(stream=stream, **kwargs)


def __dlpack_device__(self):
    """(device type, index): ``(DLDeviceType.kDLCPU, 0)`` (``torch.Tensor.__dlpack_device__``)."""
    return DLDeviceType.kDLCPU, 0


def to_dlpack(tensor):
    """A "dltensor" capsule sharing ``tensor``'s memory, consumed once by ``from_dlpack``
    (``torch.utils.dlpack.to_dlpack``)."""
    return _exportable(tensor, "to_dlpack").__dlpack__()


class _Capsule:
    """A bare capsule dressed as an exporter, which is what ``numpy.from_dlpack`` takes."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return DLDeviceType.kDLCPU, 0


def _is_capsule(obj) -> bool:
    return type(obj).__name__ == "PyCapsule"


def _capsule_valid(capsule) -> bool:
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype, is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    return bool(is_valid(capsule, b"dltensor"))


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing memory with any DLPack exporter (a torch tensor, a NumPy array, ...) or a
    "dltensor" capsule (``torch.from_dlpack``). RuntimeError for a capsule already consumed;
    BufferError (the exporter's) for a device other than the CPU."""
    if isinstance(ext_tensor, Tensor):
        return from_numpy(_exportable(ext_tensor, "from_dlpack"))
    if _is_capsule(ext_tensor):
        if not _capsule_valid(ext_tensor):
            raise RuntimeError(
                "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                "consumed only once, so you might have already constructed a tensor from it once.")
        return from_numpy(_storage.writable_alias(np.from_dlpack(_Capsule(ext_tensor))))
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(ext_tensor).__name__}")
    return from_numpy(np.from_dlpack(ext_tensor))


def _check_buffer(buffer, dt, count, offset):
    n = memoryview(buffer).nbytes
    item = dt.itemsize
    if n == 0 and count <= 0:
        raise ValueError(f"both buffer length ({n}) and count ({count}) must not be 0")
    if not 0 <= offset < n:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer "
                         f"length ({n} bytes) minus 1")
    if count <= 0 and (n - offset) % item:
        raise ValueError(f"buffer length ({n - offset} bytes) after offset ({offset} bytes) must be "
                         f"a multiple of element size ({item})")
    if count > 0 and count * item > n - offset:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset ({offset} "
                         f"bytes) must not be greater than actual buffer length ({n} bytes)")


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor:
    """A 1-D tensor over the bytes of a Python buffer (bytearray, array.array, mmap, ...), no copy
    (``torch.frombuffer``); ``count`` elements (-1: all) after ``offset`` bytes. ValueError with
    torch's wording for lengths that do not fit. A read-only buffer gives a read-only tensor (torch
    warns and lets writes through; NumPy refuses them)."""
    dt = dtype.np
    _check_buffer(buffer, dt, count, offset)
    arr = np.frombuffer(buffer, dtype=dt, count=count, offset=offset)
    if not arr.flags.writeable:
        _warn_always.warn_once(
            _WARNED, "readonly", "The given buffer is not writable, and PyTorch does not support "
            "non-writable tensors. glassgrad: the tensor is read-only (an in-place write raises); "
            "copy the buffer, or pass a bytearray, to write to it. This warning is shown once "
            "(glassgrad.set_warn_always(True) shows it every time).")
    return _finish(arr, requires_grad)


def _dtype_name(dt) -> str:
    return {dtypes.float32: "Float", dtypes.float64: "Double", dtypes.float16: "Half",
            dtypes.bfloat16: "BFloat16", dtypes.int64: "Long", dtypes.int32: "Int",
            dtypes.int16: "Short", dtypes.int8: "Char", dtypes.uint8: "Byte",
            dtypes.bool: "Bool"}.get(dt, str(dt))


def _alias(t, dtype, copy, requires_grad):
    if dtype is not None and dtype != t.dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_dtype_name(t.dtype)}' into dtype "
                             f"'{_dtype_name(dtype)}'.")
        t = t.to(dtype)
    elif copy:
        t = t.detach().clone()
    if requires_grad:
        t.requires_grad_(True)
    return t


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """``obj`` as a tensor, sharing its memory where it can (``torch.asarray``): a Tensor (itself),
    a NumPy array or DLPack exporter, a Python buffer (read as ``dtype``, default the default
    dtype), else numbers and sequences (copied). ``copy=True`` always copies; ``copy=False``
    raises ValueError where sharing is impossible (another dtype, a Python sequence)."""
    if device is not None:
        from .backend import device as _device

        _device(device)
    if isinstance(obj, Tensor):
        return _alias(obj, dtype, copy, requires_grad)
    if isinstance(obj, np.ndarray) or hasattr(obj, "__dlpack__"):
        arr = obj if isinstance(obj, np.ndarray) else np.from_dlpack(obj)
        return _alias(from_numpy(arr), dtype, copy, requires_grad)
    if not isinstance(obj, (list, tuple, np.generic, int, float, bool, complex)):
        try:
            memoryview(obj)
        except TypeError:
            pass
        else:
            t = frombuffer(obj, dtype=dtypes.get_default_dtype() if dtype is None else dtype)
            return _alias(t, None, copy, requires_grad)
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    return tensor(obj, dtype=dtype, requires_grad=requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False) -> Tensor:
    """A 1-D tensor of ``size`` elements memory-mapped from ``filename`` (``torch.from_file``).
    ``shared=True``: writes reach the file (created or extended if needed); otherwise the mapping
    is private (copy-on-write). RuntimeError with torch's wording for a missing or short file."""
    dt = (dtypes.get_default_dtype() if dtype is None else dtype).np
    need = int(size) * dt.itemsize
    path = os.fspath(filename)
    if shared:
        with open(path, "ab") as f:  # created if needed
            if f.tell() < need:
                f.truncate(need)
    elif not os.path.exists(path):
        raise RuntimeError(f"unable to open file <{path}> in read-only mode: No such file or "
                           "directory (2)")
    have = os.path.getsize(path)
    if have < need:
        raise RuntimeError(f"file <{path}> size <{have}> is smaller than the required mapping "
                           f"size <{need}>")
    if need == 0:
        return _finish(np.empty(0, dt), requires_grad)
    arr = np.memmap(path, dtype=dt, mode="r+" if shared else "c", shape=(int(size),))
    return _finish(np.asarray(arr), requires_grad)


Tensor.__dlpack__ = __dlpack__
Tensor.__dlpack_device__ = __dlpack_device__
