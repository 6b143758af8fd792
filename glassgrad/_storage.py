"""Storages and strides: ``Tensor.untyped_storage()``, ``stride()``, ``storage_offset()``,
``data_ptr()`` (``torch.UntypedStorage``, ``torch.TypedStorage``).

NOTE [Storage]: a glassgrad Tensor holds a NumPy array; its storage is the memory of the NumPy
array that owns the buffer (the last ndarray down the ``.base`` chain). Element strides are NumPy's
byte strides over the itemsize and the storage offset is the distance of the first element from the
start of that memory, so a view (transpose, expand, slicing, diagonal) reports torch's numbers. The
storage objects are thin windows over that memory: they hold no state of their own, so reading and
writing through them is reading and writing the tensor.
"""

from __future__ import annotations

import numpy as np

from . import _warn_always, dtypes

_WARNED: set = set()  # NOTE [Warn always] in _warn_always.py

try:  # NumPy 2 moved byte_bounds
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:  # pragma: no cover - NumPy 1.x
    _byte_bounds = np.byte_bounds


def owner(arr) -> np.ndarray:
    """The ndarray whose memory ``arr`` views (NOTE [Storage])."""
    while True:
        b = arr.base
        if isinstance(b, np.ndarray):
            arr = b
        elif b is not None and isinstance(getattr(b, "base", None), np.ndarray):
            arr = b.base  # NumPy's DummyArray, made by stride_tricks.as_strided
        else:
            return arr


def in_shared_memory(arr) -> bool:
    """True when ``arr``'s memory is a memory map (``share_memory_``, a shared ``from_file``)."""
    import mmap

    buf = owner(arr).base
    return isinstance(buf.obj if isinstance(buf, memoryview) else buf, mmap.mmap)


def storage_bounds(arr) -> tuple[int, int]:
    """(address of the storage's first byte, its length in bytes) for the array ``arr``."""
    lo, hi = _byte_bounds(owner(arr))
    return lo, hi - lo


def bytes_of(arr) -> np.ndarray:
    """A uint8 array over the whole storage of ``arr`` (writable when ``arr`` is)."""
    root = owner(arr)
    lo, hi = _byte_bounds(root)
    return np.asarray(_Window(root, lo, hi - lo))


class _Window:
    """The bytes [lo, lo + n) of ``base``'s memory as an array interface; ``.base`` keeps the
    owner alive and lets ``owner`` walk through it, as it does through NumPy's DummyArray."""

    __slots__ = ("__array_interface__", "base")

    def __init__(self, base, lo, n, readonly=None):
        self.base = base
        readonly = not base.flags.writeable if readonly is None else readonly
        self.__array_interface__ = {"data": (lo, readonly), "shape": (n,), "typestr": "|u1",
                                    "version": 3}


def writable_alias(arr) -> np.ndarray:
    """``arr`` itself, or a writable array over the same memory when NumPy marked it read-only
    only for want of a flag (a legacy DLPack capsule, which torch treats as writable)."""
    if arr.flags.writeable:
        return arr
    lo, hi = _byte_bounds(arr)
    raw = np.asarray(_Window(arr, lo, hi - lo, readonly=False))
    start = arr.__array_interface__["data"][0] - lo
    return np.ndarray(arr.shape, arr.dtype, buffer=raw, offset=start, strides=arr.strides)


def strides(arr) -> tuple:
    """Element strides of ``arr`` (torch's ``stride()``)."""
    size = arr.itemsize
    if arr.size == 0 and not any(arr.strides):
        # NOTE: NumPy zeroes an empty array's strides; torch keeps the contiguous ones
        out, step = [], 1
        for n in reversed(arr.shape):
            out.append(step)
            step *= max(n, 1)
        return tuple(reversed(out))
    return tuple(s // size for s in arr.strides)


def storage_offset(arr) -> int:
    """Elements between the start of the storage and the first element of ``arr``."""
    if arr.size == 0 and arr.nbytes == 0 and owner(arr).nbytes == 0:
        return 0
    return (arr.__array_interface__["data"][0] - storage_bounds(arr)[0]) // arr.itemsize


def data_ptr(arr) -> int:
    """Address of the first element (0 for an empty storage, as torch)."""
    lo, n = storage_bounds(arr)
    return 0 if n == 0 else arr.__array_interface__["data"][0]


def view_of(arr, size, stride, offset, dtype=None) -> np.ndarray:
    """An array of ``size``/``stride`` (elements) starting ``offset`` elements into ``arr``'s
    storage; the caller has checked the bounds."""
    dt = arr.dtype if dtype is None else dtype
    raw = bytes_of(arr)
    if raw.size == 0 or any(s == 0 for s in size):
        # NOTE: nothing is read; an empty buffer still needs a valid address for NumPy
        return np.ndarray(tuple(size), dt, buffer=np.empty(max(raw.size, dt.itemsize), np.uint8),
                          strides=tuple(s * dt.itemsize for s in stride))
    return np.ndarray(tuple(size), dt, buffer=raw, offset=offset * dt.itemsize,
                      strides=tuple(s * dt.itemsize for s in stride))


def required_size(size, stride, offset) -> int:
    """Elements a storage needs for this geometry (0 when any size is 0)."""
    if any(s == 0 for s in size):
        return 0
    return offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))


class UntypedStorage:
    """The bytes under a tensor (``torch.UntypedStorage``): ``nbytes()``, ``data_ptr()``, indexing
    and slicing by byte, ``tolist()``. ``UntypedStorage(n)`` allocates ``n`` zeroed bytes."""

    __slots__ = ("_bytes",)
    device = None  # set below: the CPU device

    def __init__(self, *args, **kwargs):
        n = args[0] if args else kwargs.get("size", 0)
        if isinstance(n, (list, tuple)):
            self._bytes = np.array(n, dtype=np.uint8)
        else:
            self._bytes = np.zeros(int(n), np.uint8)

    @classmethod
    def _wrap(cls, raw) -> UntypedStorage:
        s = object.__new__(cls)
        s._bytes = raw
        return s

    def nbytes(self) -> int:
        return self._bytes.size

    size = nbytes
    __len__ = nbytes

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return 0 if self._bytes.size == 0 else self._bytes.__array_interface__["data"][0]

    def _check(self, i: int) -> int:
        n = self._bytes.size
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i % n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return UntypedStorage._wrap(self._bytes[i])
        return int(self._bytes[self._check(int(i))])

    def __setitem__(self, i, value):
        if isinstance(i, slice):
            self._bytes[i] = value
        else:
            self._bytes[self._check(int(i))] = value

    def tolist(self) -> list:
        return self._bytes.tolist()

    def is_shared(self) -> bool:
        return in_shared_memory(self._bytes)

    def is_pinned(self, device="cuda") -> bool:
        return False

    def resizable(self) -> bool:
        return False

    def type(self) -> str:
        return "torch.storage.UntypedStorage"

    @property
    def is_sparse(self) -> bool:
        return False

    def __repr__(self) -> str:
        body = "\n".join(f" {b}" for b in self._bytes.tolist())
        return f"{body}\n[glassgrad.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and other.data_ptr() == self.data_ptr() \
            and other.nbytes() == self.nbytes()

    __hash__ = object.__hash__


class TypedStorage:
    """The storage seen as elements of one dtype (``torch.TypedStorage``; deprecated in torch, and
    ``tensor.storage()`` warns as torch does): ``size()`` in elements, ``dtype``, indexing."""

    __slots__ = ("_elems", "dtype")

    def __init__(self, *args, dtype=None, **kwargs):
        d = dtypes.get_default_dtype() if dtype is None else dtype
        n = args[0] if args else kwargs.get("size", 0)
        self.dtype = d
        self._elems = np.array(n, dtype=d.np) if isinstance(n, (list, tuple)) \
            else np.zeros(int(n), d.np)

    @classmethod
    def _wrap(cls, elems, dtype) -> TypedStorage:
        s = object.__new__(cls)
        s._elems, s.dtype = elems, dtype
        return s

    def size(self) -> int:
        return self._elems.size

    __len__ = size

    def nbytes(self) -> int:
        return self._elems.nbytes

    def element_size(self) -> int:
        return self._elems.itemsize

    def data_ptr(self) -> int:
        return 0 if self._elems.size == 0 else self._elems.__array_interface__["data"][0]

    def untyped(self) -> UntypedStorage:
        return UntypedStorage._wrap(self._elems.reshape(-1).view(np.uint8))

    def __getitem__(self, i):
        n = self._elems.size
        if isinstance(i, slice):
            return TypedStorage._wrap(self._elems[i], self.dtype)
        if not -n <= int(i) < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return self._elems[int(i)].item()

    def __setitem__(self, i, value):
        self._elems[i] = value

    def tolist(self) -> list:
        return self._elems.tolist()

    def is_shared(self) -> bool:
        return in_shared_memory(self._elems)

    def is_pinned(self, device="cuda") -> bool:
        return False

    def type(self) -> str:
        return storage_type_name(self.dtype)

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self._elems.tolist())
        return (f"{body}\n[glassgrad.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size "
                f"{self.size()}]")


def storage_type_name(dtype) -> str:
    """torch's legacy storage class name: ``torch.FloatStorage`` for float32."""
    return dtypes.type_name(dtype).replace("Tensor", "Storage")


_STORAGE_CLASSES: dict = {}


def storage_class(dtype) -> type:
    """The legacy storage class of a dtype (``x.storage_type()``: ``torch.FloatStorage``), a
    TypedStorage whose instances hold that dtype."""
    cls = _STORAGE_CLASSES.get(dtype)
    if cls is None:
        name = storage_type_name(dtype).rsplit(".", 1)[1]

        def __init__(self, *args, **kwargs):
            TypedStorage.__init__(self, *args, dtype=dtype, **kwargs)

        cls = _STORAGE_CLASSES[dtype] = type(name, (TypedStorage,), {
            "__slots__": (), "__init__": __init__, "__module__": "glassgrad"})
    return cls


def untyped_storage(t) -> UntypedStorage:
    """``t``'s storage as bytes (``torch.Tensor.untyped_storage``)."""
    return UntypedStorage._wrap(bytes_of(t._array))


def typed_storage(t) -> TypedStorage:
    """``t``'s storage as elements of its dtype (``torch.Tensor.storage``, deprecated there)."""
    _warn_always.warn_once(
        _WARNED, "typed", "TypedStorage is deprecated. It will be removed in the future and "
        "UntypedStorage will be the only storage class. This should only matter to you if you are "
        "using storages directly.  To access UntypedStorage directly, use "
        "tensor.untyped_storage() instead of tensor.storage()", stacklevel=3)
    raw = bytes_of(t._array)
    size = t._array.itemsize
    return TypedStorage._wrap(raw[: raw.size // size * size].view(t._array.dtype), t.dtype)


def is_storage(obj) -> bool:
    """True for a storage object (``torch.is_storage``)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))
