"""Reading PyTorch's own checkpoint files (``torch.save``'s zip format) for ``glassgrad.load``.

NOTE [Reading torch files]: a torch checkpoint is a zip archive: ``<prefix>/data.pkl`` (a pickle
of the saved object whose tensors are calls of ``torch._utils._rebuild_tensor_v2`` on storages
named by persistent ids ``('storage', torch.FloatStorage, key, location, numel)``),
``<prefix>/data/<key>`` (each storage's raw bytes), ``byteorder`` and ``version``. glassgrad
unpickles ``data.pkl`` with ``_Unpickler``, whose ``find_class`` admits only what torch's
``weights_only=True`` admits (``_allowed()``: tensor and parameter rebuilds, storage types, dtypes,
``torch.Size``, ``torch.device``, OrderedDict, set, complex, bytearray, ``_codecs.encode`` for
bytes) plus what the user allowlisted with ``safe_globals`` (a ``torch.*`` name also matches the
glassgrad class of the same path, so ``torch.nn.modules.linear.Linear`` allowlisted under the
alias is glassgrad's ``Linear``). Every other global raises torch's ``pickle.UnpicklingError``
"Weights only load failed", naming it, before anything the file names runs; glassgrad never
imports a module a file names. Memory stays bounded as in NOTE [Bounded loading]: the zip's
directory may list at most ``MAX_ENTRIES`` files (counted from its end record before it is
parsed), ``data.pkl`` may hold at most ``MAX_PICKLE_BYTES``, a storage is read only when its
entry in the zip has exactly the bytes its persistent id declares (a compressed one no more
than deflate's 1032:1 allows), and each tensor's size, stride and offset must stay inside its
storage. ``MAX_PICKLE_BYTES`` (8 MB) holds a model and Adam state of ~22,000 parameters (torch
pickles 8,000 of them, 32,000 tensors, in 2.9 MB; a 7B-parameter LLM has under 300 tensors); the
worst 16 MB pickle (8 million nested empty lists) cost 550 MB and 28 s on a busy 2-core machine,
so the worst 8 MB one costs about half. Tensors over one storage come back as views of one
buffer, as in torch.
"""

from __future__ import annotations

import _compat_pickle
import collections
import contextvars
import io
import math
import pickle
import zipfile

import ml_dtypes
import numpy as np

from . import _checkpoint_sparse, _layout, dtypes
from ._checkpoint_objects import UnpicklingError, allowlisted, own, refuse_blocked, refused
from ._checkpoint_read import _read_into

MAX_ENTRIES = 1_000_000
MAX_PICKLE_BYTES = 8_000_000
_MAX_REPEATED_VIEW = 1 << 30  # bytes a zero-stride view may claim beyond its storage
_STORAGE_DTYPES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "BFloat16Storage": ml_dtypes.bfloat16, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
    "BoolStorage": np.bool_, "UntypedStorage": np.uint8,
    "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
}
_CUDA = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
         "False. If you are running on a CPU-only machine, please use torch.load with "
         "map_location=torch.device('cpu') to map your storages to the CPU.")
_ON_CPU = ("\nglassgrad.load: {} asks for a device glassgrad has no tensors on; tensors load on "
           "the CPU with map_location='cpu'.")


class CheckpointError(RuntimeError, ValueError):
    """torch's RuntimeError for a damaged checkpoint, and glassgrad's ValueError for every file
    it refuses."""


# NOTE: admitted as torch admits them, so that a file holding one is refused for its dtype
_NO_TENSORS = {"ComplexHalfStorage": "complex32", "QInt8Storage": "qint8",
               "QUInt8Storage": "quint8", "QInt32Storage": "qint32"}


class StorageType:
    """What ``torch.FloatStorage`` and friends unpickle to: the storage's element type."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.np = np.dtype(_STORAGE_DTYPES[name]) if name in _STORAGE_DTYPES else None


class Storage:
    """A storage read from the archive: its elements as a 1-d array, and where it was saved."""

    def __init__(self, array: np.ndarray, location: str) -> None:
        self.array, self.location = array, location

    def cpu(self) -> Storage:
        return self

    def cuda(self, *args, **kwargs):
        raise CheckpointError(_CUDA + _ON_CPU.format("map_location"))

    def __len__(self) -> int:
        return self.array.size


def _rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False,
                    backward_hooks=None, metadata=None):
    from .tensor import Tensor

    if not isinstance(storage, Storage):
        raise pickle.UnpicklingError(f"a tensor's storage is a {type(storage).__name__}")
    arr = _view(storage.array, storage_offset, size, stride)
    t = Tensor._make(arr)
    if requires_grad is True:
        if not t.is_floating_point():
            raise pickle.UnpicklingError(f"a {t.dtype} tensor requires grad")
        t.requires_grad_(True)
    return t


def _view(flat: np.ndarray, offset, size, stride) -> np.ndarray:
    """The tensor's elements as a view of its storage, after checking they lie inside it."""
    dims = (tuple(size) if isinstance(size, (tuple, list)) else None,
            tuple(stride) if isinstance(stride, (tuple, list)) else None)
    shape, strides = dims
    if not (shape is not None and strides is not None and len(shape) == len(strides) <= 64
            and all(type(n) is int and 0 <= n < 2**62 for n in shape)
            and all(type(s) is int and 0 <= s < 2**62 for s in strides)
            and type(offset) is int and offset >= 0):
        raise pickle.UnpicklingError(f"a tensor of size {str(size)[:60]}, stride "
                                     f"{str(stride)[:60]} and offset {str(offset)[:20]}")
    numel = math.prod(shape)
    last = offset + sum((n - 1) * s for n, s in zip(shape, strides)) if numel else offset - 1
    if last >= flat.size or (numel and offset >= flat.size):
        raise pickle.UnpicklingError(f"a tensor of size {list(shape)} and stride {list(strides)} "
                                     f"at offset {offset} reaches past its storage of "
                                     f"{flat.size} elements")
    if numel * flat.itemsize > max(flat.nbytes, _MAX_REPEATED_VIEW):
        raise pickle.UnpicklingError(f"a tensor of size {list(shape)} claims "
                                     f"{numel * flat.itemsize} bytes over a {flat.nbytes}-byte "
                                     "storage")
    item = flat.itemsize
    return np.ndarray(shape, flat.dtype, buffer=flat, offset=offset * item if numel else 0,
                      strides=tuple(s * item for s in strides))


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad=requires_grad is True)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in (_rebuild_tensor, _rebuild_parameter):
        raise pickle.UnpicklingError("a tensor subclass rebuilt by another function")
    return func(*args)


def _encode(text, encoding="utf-8"):
    if encoding not in ("latin1", "latin-1") or not isinstance(text, str):
        raise pickle.UnpicklingError(f"_codecs.encode with {encoding!r}")
    return text.encode("latin1")  # NOTE: how protocol 2 pickles bytes


def _device(*args):
    from .backend import device

    return device(*args)


def _allowed() -> dict:
    from .nn.parameter import Parameter
    from .tensor import Size, Tensor

    table = {
        "collections.OrderedDict": collections.OrderedDict, "collections.Counter":
        collections.Counter, "torch._utils._rebuild_tensor_v2": _rebuild_tensor,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch._utils._rebuild_sparse_tensor": _checkpoint_sparse.rebuild_from_torch,
        "torch.sparse_coo": _layout.sparse_coo, "torch.sparse_csr": _layout.sparse_csr,
        "torch.serialization._get_layout": _checkpoint_sparse.layout_named,
        "torch.nn.parameter.Parameter": Parameter, "torch.Tensor": Tensor, "torch.Size": Size,
        "torch.device": _device, "_codecs.encode": _encode, "builtins.set": set,
        "builtins.complex": complex, "builtins.bytearray": bytearray,
    }
    table.update({f"torch.{name}": StorageType(name) for name in [*_STORAGE_DTYPES,
                                                                   *_NO_TENSORS]})
    table["torch.storage.UntypedStorage"] = table["torch.UntypedStorage"]
    table.update({f"torch.{d.name}": d for d in dtypes.ALL})
    return table


# load(weights_only=False) sets it: torch.nn's classes then need no allowlist (as torch, which
# unpickles anything then); under weights_only=True they do, as in torch
OWN_NN_CLASSES = contextvars.ContextVar("glassgrad_own_nn_classes", default=False)


class _Unpickler(pickle._Unpickler):
    """``data.pkl``'s unpickler: globals from ``_allowed()`` and the allowlist only.

    NOTE: pickle's pure-Python unpickler, not the C one: the C one grows its memo to the largest
    index a PUT names, so one ``LONG_BINPUT 1061628273`` (five bytes, found by fuzzing) cost
    75 s and gigabytes; the Python one keeps its memo in a dict. It unpickles a 2.9 MB
    ``data.pkl`` (32,000 tensors) in 3.1 s where the C one takes 1.5 s on a busy 2-core machine.
    """

    def __init__(self, file, read_storage, where: str) -> None:
        super().__init__(file, encoding="utf-8")
        self._read_storage, self._where, self._table = read_storage, where, _allowed()

    def find_class(self, module: str, name: str):
        # NOTE: protocol 2 names Python 2's modules (__builtin__.set); pickle's own find_class
        # maps them, an override sees them raw
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        dotted = f"{module}.{name}"
        refuse_blocked(module, dotted, self._where)
        obj = self._table.get(dotted)
        if obj is None:
            obj = allowlisted(f"{module}:{name}")
        if obj is None and module.startswith("torch."):  # the same class under the alias
            obj = allowlisted(f"glassgrad.{module[6:]}:{name}")
        if obj is None and module.startswith("torch.nn.") and OWN_NN_CLASSES.get():
            # a whole torch model under weights_only=False: torch would unpickle anything, and
            # torch's nn classes and functions are glassgrad's own, rebuilt as from glassgrad's
            # files (NOTE [Objects in checkpoints]); the user's own classes still need safe_globals
            obj = own(f"glassgrad.{module[6:]}", name)
        if obj is None:
            raise refused(dotted, self._where)
        return obj

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) == 6 and pid[5] is None:
            pid = pid[:5]  # NOTE: the legacy format's, with no storage view metadata
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], StorageType) and isinstance(pid[2], str)
                and isinstance(pid[3], str) and type(pid[4]) is int and pid[4] >= 0):
            raise pickle.UnpicklingError(f"an unknown persistent id {str(pid)[:80]}")
        if pid[1].np is None:
            raise pickle.UnpicklingError(
                f"a tensor of dtype {_NO_TENSORS[pid[1].name]} (torch.{pid[1].name}), which "
                "glassgrad has no tensors for")
        return self._read_storage(pid[1], pid[2], pid[3], pid[4])


def _bad(where: str, what: str, prefix="PytorchStreamReader failed reading zip archive: "):
    return CheckpointError(
        prefix + what + ("" if what.endswith("?") else ".") + f"\nglassgrad.load: {where} is a "
        "damaged or hostile PyTorch "
        "checkpoint; nothing in it was run."
    )


def _entries(f, where: str) -> zipfile.ZipFile:
    """The archive, after its end record showed a directory of bounded size."""
    end = zipfile._EndRecData(f)
    if end is None:
        raise _bad(where, "failed finding central directory")
    if end[zipfile._ECD_ENTRIES_TOTAL] > MAX_ENTRIES:
        raise _bad(where, f"its directory lists {end[zipfile._ECD_ENTRIES_TOTAL]:,} files, more "
                          f"than the {MAX_ENTRIES:,} glassgrad reads")
    try:
        return zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise _bad(where, str(e)) from None


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, nbytes: int, where: str):
    if info.file_size != nbytes:
        raise _bad(where, f"{info.filename} holds {info.file_size} bytes where {nbytes} are "
                          "declared")
    if info.compress_type != zipfile.ZIP_STORED and nbytes > 1032 * info.compress_size + 1024:
        raise _bad(where, f"{info.filename} claims {nbytes} bytes from {info.compress_size} "
                          "compressed, more than deflate can give")
    out = np.empty(nbytes, np.uint8)
    try:
        with archive.open(info) as fh:
            got = _read_into(fh, memoryview(out))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as e:
        raise _bad(where, f"reading {info.filename}: {e}") from None
    if got != nbytes:
        raise _bad(where, f"{info.filename} ends after {got} of its {nbytes} bytes")
    return out


def load_zip(f, where: str, map_location):
    """The object a torch zip checkpoint holds, its tensors as glassgrad Tensors."""
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    archive = _entries(f, where)
    infos = {info.filename: info for info in archive.infolist()}
    pickles = [name for name in infos if name.endswith("/data.pkl") and name.count("/") == 1]
    if len(pickles) != 1:
        if any(name.endswith("/constants.pkl") for name in infos):
            raise _bad(where, "it is a TorchScript archive (torch.jit.save), which glassgrad "
                              "does not run")
        raise _bad(where, "file not found: data.pkl")
    prefix = pickles[0][: -len("data.pkl")]
    big = False
    if prefix + "byteorder" in infos:
        order = _read_entry(archive, infos[prefix + "byteorder"],
                            min(infos[prefix + "byteorder"].file_size, 16), where).tobytes()
        if order not in (b"little", b"big"):
            raise _bad(where, f"byteorder {order[:16]!r}")
        big = order == b"big"
    info = infos[pickles[0]]
    if info.file_size > MAX_PICKLE_BYTES:
        raise _bad(where, f"data.pkl claims {info.file_size:,} bytes, more than the "
                          f"{MAX_PICKLE_BYTES:,} glassgrad reads")
    storages: dict[str, Storage] = {}

    def read_storage(kind: StorageType, key: str, location: str, numel: int):
        if key in storages:
            if storages[key].array.dtype != kind.np:
                raise pickle.UnpicklingError(f"storage {key!r} read as two dtypes")
            return storages[key]
        entry = infos.get(f"{prefix}data/{key}")
        if entry is None:
            raise _bad(where, f"file not found: {prefix}data/{key}")
        flat = _read_entry(archive, entry, numel * kind.np.itemsize, where).view(kind.np)
        if big:
            flat = flat.byteswap()
        storages[key] = restore(Storage(flat, location), location, map_location, where)
        return storages[key]

    raw = _read_entry(archive, info, info.file_size, where)
    return unpickle(io.BytesIO(raw.tobytes()), read_storage, where)


def unpickle(f, read_storage, where: str):
    """One pickle from ``f`` through ``_Unpickler``; every failure is glassgrad's refusal."""
    try:
        return _Unpickler(f, read_storage, where).load()
    except (UnpicklingError, CheckpointError):
        raise
    except (pickle.UnpicklingError, EOFError, AttributeError, IndexError, KeyError, TypeError,
            ValueError, RecursionError, MemoryError, OverflowError) as e:
        raise UnpicklingError(
            f"Weights only load failed. WeightsUnpickler error: {type(e).__name__}: "
            f"{str(e)[:200]}\nglassgrad.load: {where} holds a malformed or hostile pickle; "
            "nothing in it was run.") from None


def restore(storage: Storage, location: str, map_location, where: str) -> Storage:
    """Apply ``map_location`` as torch does; glassgrad's tensors live on the CPU."""
    if callable(map_location) and not isinstance(map_location, (str, dict)) and not hasattr(
            map_location, "type"):
        result = map_location(storage, location)
        if result is not None and not isinstance(result, Storage):
            raise TypeError(f"map_location returned a {type(result).__name__}; glassgrad "
                            "expects the storage it was given (its tensors load on the CPU)")
        return storage if result is None else result
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
    else:
        target = location if map_location is None else map_location
    target = str(target)
    if target.startswith("cuda"):
        raise CheckpointError(_CUDA + _ON_CPU.format(where))
    if target != "cpu":
        raise CheckpointError(f"torch.UntypedStorage(): Storage device not recognized: "
                              f"{target[:40]!r}." + _ON_CPU.format(where))
    return storage
