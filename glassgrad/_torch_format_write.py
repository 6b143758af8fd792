"""Writing checkpoints that PyTorch reads: ``glassgrad.save(obj, f, format="torch")``.

NOTE [Writing torch files]: the file is what ``torch.save`` writes: a zip archive of
``archive/data.pkl``, ``.format_version``, ``.storage_alignment``, ``byteorder``, one
``archive/data/<key>`` per storage (its data aligned to 64 bytes, as torch aligns them, so
``torch.load(mmap=True)`` maps them) and ``version``. ``data.pkl`` is a protocol-2 pickle that
names only globals torch's ``weights_only=True`` unpickler admits: ``torch._utils``'s
``_rebuild_tensor_v2`` and ``_rebuild_parameter``, ``torch.<X>Storage`` (in persistent ids),
dtypes, ``torch.Size``, ``torch.device``, ``collections.OrderedDict``, ``_codecs.encode`` (bytes),
``set`` and ``complex``. Those names are written as opcodes by ``_Pickler`` (glassgrad never
imports torch), so anything else in ``obj`` (NumPy arrays, objects) is a TypeError: torch would
refuse the file. Tensors over one buffer share one storage, as views do in torch; a tensor whose
layout a torch storage cannot express (negative strides, a byte offset that is not a whole
element, a second dtype over the buffer) gets a storage of its own.
"""

from __future__ import annotations

import codecs
import collections
import io
import pickle
import struct
import zipfile

import numpy as np

from . import _layout, dtypes
from .tensor import Size, Tensor

_STORAGE_NAMES = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_PLAIN = (type(None), bool, int, float, str, bytes, complex, list, tuple, dict,
          collections.OrderedDict, set)
_ALIGNMENT = 64
# the globals pickle itself writes for those: OrderedDict(), set(list), complex, bytes
_NAMES = (collections.OrderedDict, set, complex, codecs.encode)


class _Global:
    """A name in ``data.pkl`` (``torch._utils._rebuild_tensor_v2``), written as a GLOBAL."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args):  # NOTE: pickle's save_reduce insists on a callable
        raise TypeError(f"{self.module}.{self.name} is a name in a torch file, not a function")


class _Storage:
    def __init__(self, key: str, kind: str, numel: int) -> None:
        self.key, self.kind, self.numel = key, kind, numel


class _Reduced:
    """A value pickled as the call ``reduction`` describes (a Parameter's inner tensor)."""

    def __init__(self, reduction: tuple) -> None:
        self.reduction = reduction


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, taught to write ``_Global`` names and glassgrad's types as
    torch pickles its own."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, layouts: dict, sparse: dict) -> None:
        super().__init__(file, protocol=2)
        self._layouts, self._sparse = layouts, sparse

    def _save_name(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = _save_name

    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            return ("storage", _Global("torch", obj.kind), obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, _Reduced):
            return obj.reduction
        if isinstance(obj, Tensor) and obj._sparse:  # as torch's Tensor.__reduce_ex__
            layout, data = self._sparse[id(obj)]
            return (_Global("torch._utils", "_rebuild_sparse_tensor"),
                    (_Reduced((_Global("torch.serialization", "_get_layout"), (layout,))), data))
        if isinstance(obj, Tensor):
            storage, offset, size, stride = self._layouts[id(obj)]
            tensor = (_Global("torch._utils", "_rebuild_tensor_v2"),
                      (storage, offset, size, stride, obj.requires_grad,
                       collections.OrderedDict()))
            if not any(c.__name__ == "Parameter" for c in type(obj).__mro__):
                return tensor
            return (_Global("torch._utils", "_rebuild_parameter"),
                    (_Reduced(tensor), obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, Size):
            return (_Global("torch", "Size"), (tuple(int(n) for n in obj),))
        if type(obj).__name__ == "device" and type(obj).__module__.startswith("glassgrad."):
            return (_Global("torch", "device"), (str(obj),))
        if type(obj) in _PLAIN or type(obj) in (_Global, _Storage, dtypes.dtype) or any(
                obj is name for name in _NAMES):
            return NotImplemented
        raise TypeError(
            f"glassgrad.save(format='torch'): cannot save an object of type "
            f"{type(obj).__name__}: torch.load(weights_only=True) reads tensors, Parameters, "
            "numbers, strings, bytes, None, dtypes, Size, devices and (nested) lists, tuples, "
            "sets and dicts. Save the rest in glassgrad's own format (the default)."
        )

    def _save_dtype(self, obj) -> None:
        self._save_name(_Global("torch", obj.name))

    dispatch[dtypes.dtype] = _save_dtype


def _layouts(tensors: list[Tensor]) -> tuple[dict, list[np.ndarray]]:
    """Per tensor ``(storage, offset, size, stride)`` in elements, and each storage's bytes."""
    from .serialization import _extent, _root

    groups: dict[tuple, list] = {}
    alone = []
    for t in tensors:
        arr = np.asarray(t._array)
        item = arr.itemsize
        if all(s >= 0 and s % item == 0 for s in arr.strides):
            groups.setdefault((id(_root(arr)), arr.dtype), []).append((t, arr))
        else:
            alone.append((t, arr))
    layouts, blobs = {}, []

    def add(members, arr0):
        base = _root(arr0).__array_interface__["data"][0]
        spans = [_extent(arr, base) for _, arr in members]
        lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
        item = arr0.itemsize
        lo -= lo % item  # NOTE: whole elements, so every member's offset is one
        blob = np.zeros(-(-(hi - lo) // item) * item, np.uint8)
        storage = _Storage(str(len(blobs)), _STORAGE_NAMES[dtypes._FROM_NP[arr0.dtype].name],
                           blob.size // item)
        for t, arr in members:
            offset = arr.__array_interface__["data"][0] - base - lo
            np.ndarray(arr.shape, arr.dtype, buffer=blob, offset=offset,
                       strides=arr.strides)[...] = arr
            layouts[id(t)] = (storage, offset // item, tuple(arr.shape),
                              tuple(s // item for s in arr.strides))
        blobs.append(blob)

    for members in groups.values():
        base = _root(members[0][1]).__array_interface__["data"][0]
        item = members[0][1].itemsize
        whole = [(m[1].__array_interface__["data"][0] - base) % item == 0 for m in members]
        if any(whole):
            add([m for m, ok in zip(members, whole) if ok], members[whole.index(True)][1])
        alone += [m for m, ok in zip(members, whole) if not ok]
    for t, arr in alone:
        copy = np.ascontiguousarray(arr)
        add([(t, copy)], copy)
    return layouts, blobs


def save_torch(obj) -> bytes:
    """The bytes of a torch zip checkpoint holding ``obj`` (NOTE [Writing torch files])."""
    tensors: dict[int, Tensor] = {}
    sparse: dict[int, tuple] = {}
    _walk(obj, tensors, set(), sparse)
    layouts, blobs = _layouts(list(tensors.values()))
    pkl = io.BytesIO()
    _Pickler(pkl, layouts, sparse).dump(obj)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        records = [("data.pkl", pkl.getbuffer()), (".format_version", b"1"),
                   (".storage_alignment", str(_ALIGNMENT).encode()), ("byteorder", b"little")]
        records += [(f"data/{k}", memoryview(blob)) for k, blob in enumerate(blobs)]
        for name, data in [*records, ("version", b"3\n")]:
            info = zipfile.ZipInfo("archive/" + name, date_time=(1980, 1, 1, 0, 0, 0))
            start = out.tell() + 30 + len(info.filename) + 4  # NOTE: local header, FB field
            pad = -start % _ALIGNMENT
            info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            archive.writestr(info, data)
    return out.getvalue()


def _sparse_parts(t: Tensor) -> tuple:
    """torch's layout name and the data its ``_rebuild_sparse_tensor`` takes (values detached:
    torch's load gives a sparse tensor that does not require grad)."""
    size = Size(int(n) for n in t.shape)
    if t.layout is _layout.sparse_coo:
        return "torch.sparse_coo", (t._indices(), t._values().detach(), size, t.is_coalesced())
    return "torch.sparse_csr", (t.crow_indices(), t.col_indices(), t.values().detach(), size)


def _walk(obj, tensors: dict, active: set, sparse: dict) -> None:
    if isinstance(obj, Tensor) and obj._sparse:
        if id(obj) not in sparse:
            sparse[id(obj)] = _sparse_parts(obj)
            _walk(sparse[id(obj)][1], tensors, active, sparse)
    elif isinstance(obj, Tensor):
        tensors.setdefault(id(obj), obj)
    elif isinstance(obj, (list, tuple, set, dict)) and id(obj) not in active:
        active.add(id(obj))  # NOTE: every id stays taken: the containers live in obj
        for value in ([*obj.keys(), *obj.values()] if isinstance(obj, dict) else obj):
            _walk(value, tensors, active, sparse)
