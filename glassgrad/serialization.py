"""Checkpoints without pickle: ``glassgrad.save`` / ``glassgrad.load`` (``torch.save``/``load``).

NOTE [Checkpoint format]: a checkpoint is one safetensors file. Tensor data are safetensors entries
named by where they sit in the saved object (``"fc.weight"``, ``"state.0.exp_avg"``), so any
safetensors reader sees the weights. The header's ``__metadata__`` holds three strings:
``"glassgrad"`` (format version ``"1"``), ``"structure"`` (the saved object as tagged JSON) and
``"tensors"`` (per tensor: its storage entry, and for a view its dtype, shape, byte offset and
strides; ``requires_grad``; whether it was an ``nn.Parameter``).

Structure tags: JSON null, booleans, numbers, strings and arrays (lists) stand for themselves; every
JSON object is a tag: ``{"tensor": name}``, ``{"tuple": [...]}``, ``{"dict": {str: value}}`` or
``{"items": [[key, value], ...]}`` (non-string keys, e.g. an optimizer's ``state``), either one with
``"ordered": true`` for an OrderedDict, ``{"float": "nan" | "inf" | "-inf"}``, ``{"bytes": hex}``,
``{"dtype": name}``; NumPy arrays and scalars, complex numbers, sets, ``Size``, devices and whole
objects (a model, ``argparse.Namespace``, dataclasses) have the tags of NOTE [Objects in
checkpoints] in ``_checkpoint_objects.py``. Loading reads JSON and buffers only: nothing from the
file is executed, and
unknown tags are an error, as is every field of the wrong type or out of range (always a
ValueError naming the file). Lists, tuples and dicts nest at most ``MAX_DEPTH`` (100) levels, in
save and load alike. How a file is read with bounded memory: NOTE [Bounded loading].

Sharing: tensors over one buffer (tied weights, views) are saved once and come back sharing memory;
safetensors itself refuses aliased entries, so aliases are recorded in ``"tensors"``. Identical
views share one typed entry; different views of one buffer share a byte entry covering them all.

Writes are atomic: the bytes go to a temporary file in the target's folder, are fsynced, then
``os.replace`` puts it in place, so a crash mid-write leaves any old checkpoint intact.
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
import os

import ml_dtypes
import numpy as np

from . import dtypes
from . import _checkpoint_objects as _objects
from . import _checkpoint_read as _read
from . import _checkpoint_sparse as _sparse
from ._checkpoint_objects import (  # noqa: F401 - torch.serialization's allowlist API
    add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals,
)
from ._checkpoint_read import (
    header_values, is_int, open_source, plan_entries, read_entries, read_header, sniff,
)
from . import _torch_format_read as _torch_read
from . import _torch_legacy_read as _torch_legacy
from . import _torch_format_write as _torch_write
from .tensor import Size, Tensor

__all__ = ["DEFAULT_PROTOCOL", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "load", "safe_globals", "save"]

DEFAULT_PROTOCOL = 2  # torch.serialization's pickle protocol; glassgrad's format has none

_VERSION = "1"
_CHUNK = 1 << 26
_MAX_REPEATED_VIEW = 1 << 30  # bytes a view may claim beyond its storage (stride-0 repeats)
# NOTE: containers nested deeper are refused by save (RecursionError, as torch.save raises near
# 500) and by load (ValueError): JSON's C encoder and decoder recurse, so a fixed cap well under
# the interpreter's recursion limit makes what save writes load from any call depth.
MAX_DEPTH = 100
_PLAIN = frozenset((type(None), bool, int, float, str))
# a whole module's tensors are named as in its state_dict ("fc.weight", not "_modules.fc...")
_MODULE_DICTS = frozenset(("_parameters", "_buffers", "_modules"))


class _Encoder:
    """Walks the object: builds the tagged JSON and collects each distinct tensor once."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}  # id(tensor) -> entry name
        self.tensors: list[tuple[str, Tensor]] = []
        self._taken: set[str] = set()
        self._active: set[int] = set()
        self.arrays: dict[int, dict] = {}  # id(NumPy array) -> its tag
        self.objects: dict[int, int] = {}  # id(object) -> its "id" in the structure
        self._keep: list = []

    def _name(self, path: list) -> str:
        base = ".".join(str(p) for p in path if p not in _MODULE_DICTS) or "tensor"
        name, k = base, 1
        while name in self._taken or name == "__metadata__" or name.startswith("__storage"):
            name, k = f"{base}#{k}", k + 1
        self._taken.add(name)
        return name

    def encode(self, obj, path: list):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, np.generic):  # NOTE: before int/float: np.float64 is a float
            return _objects.encode_other(self, obj, path)
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return float(obj) if math.isfinite(obj) else {"float": repr(float(obj))}
        if isinstance(obj, Tensor):
            if obj._sparse:  # NOTE [Sparse tensors in checkpoints]
                return _sparse.encode(self, obj, path)
            name = self.names.get(id(obj))
            if name is None:
                name = self.names[id(obj)] = self._name(path)
                self.tensors.append((name, obj))
            return {"tensor": name}
        if isinstance(obj, dtypes.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, bytes):
            return {"bytes": obj.hex()}
        if isinstance(obj, Size) or not isinstance(obj, (list, tuple, dict)):
            return _objects.encode_other(self, obj, path)
        return self.container(obj, path)

    def container(self, obj, path: list):
        """A list, tuple, set or dict, nested at most MAX_DEPTH deep and not inside itself."""
        if len(path) >= MAX_DEPTH:
            raise RecursionError(
                f"maximum recursion depth exceeded: glassgrad.save: the object nests deeper than "
                f"{MAX_DEPTH} levels at {'.'.join(map(str, path[:8]))}...; a checkpoint holds at "
                f"most {MAX_DEPTH} levels of lists, tuples and dicts."
            )
        if id(obj) in self._active:
            raise ValueError("glassgrad.save: the object contains itself (a reference cycle)")
        self._active.add(id(obj))
        try:
            if isinstance(obj, list):
                return [self.encode(v, [*path, i]) for i, v in enumerate(obj)]
            if isinstance(obj, tuple):
                return {"tuple": [self.encode(v, [*path, i]) for i, v in enumerate(obj)]}
            if isinstance(obj, (set, frozenset)):
                return {type(obj).__name__: [self._key(v, path) for v in obj]}
            if all(isinstance(k, str) for k in obj):
                out = {"dict": {k: self.encode(v, [*path, k]) for k, v in obj.items()}}
            else:
                out = {"items": [[self._key(k, path), self.encode(v, [*path, k])]
                                 for k, v in obj.items()]}
            if isinstance(obj, collections.OrderedDict):
                out["ordered"] = True
            return out
        finally:
            self._active.discard(id(obj))

    def array(self, arr: np.ndarray, path: list) -> dict:
        """The tag of a NumPy array: a tensor entry for the dtypes tensors have, else its bytes
        with its dtype and shape."""
        tag = self.arrays.get(id(arr))
        if tag is None:
            self._keep.append(arr)  # NOTE: its id stays its own while the save runs
            # NOTE: a copy, as pickle makes one: views of one array load apart, as in torch;
            # in native byte order, as NumPy unpickles it
            copy = arr.astype(arr.dtype.newbyteorder("="))
            if copy.dtype in dtypes._FROM_NP and copy.dtype.kind != "c":
                tag = {"ndarray": self.encode(Tensor._make(copy), path)["tensor"]}
            else:
                raw = copy.reshape(-1).view(np.uint8)
                tag = {"ndarray": self.encode(Tensor._make(raw), path)["tensor"],
                       "dtype": copy.dtype.str, "shape": list(copy.shape)}
            self.arrays[id(arr)] = tag
        return tag

    def instance(self, obj, name: str, state, path: list) -> dict:
        """An object as its class's name and its state (NOTE [Objects in checkpoints])."""
        k = self.objects.get(id(obj))
        if k is not None:
            return {"ref": k}
        k = self.objects[id(obj)] = len(self.objects)
        self._keep.append(obj)
        return {"object": name, "id": k, "state": self.encode(state, path)}

    def _key(self, key, path):
        if isinstance(key, Tensor):
            raise TypeError("glassgrad.save: tensors cannot be dict keys in a checkpoint")
        return self.encode(key, [*path, key])  # NOTE: a key is one level in, as load counts


def _root(arr: np.ndarray) -> np.ndarray:
    """The array owning ``arr``'s memory; through NumPy's as_strided wrapper (``diagonal()``,
    ``expand``), whose base is a plain object holding the array it was made from."""
    while True:
        base = arr.base
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)  # NOTE: as_strided's DummyArray keeps .base
        if not isinstance(base, np.ndarray):
            return arr
        arr = base


def _layout(arr: np.ndarray) -> tuple:
    return (arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype)


def _extent(arr: np.ndarray, start: int) -> tuple[int, int]:
    """Byte range [lo, hi) that ``arr`` touches, relative to ``start``."""
    lo = hi = arr.__array_interface__["data"][0] - start
    if arr.size == 0:
        return lo, lo
    for size, stride in zip(arr.shape, arr.strides):
        span = (size - 1) * stride
        lo, hi = (lo + span, hi) if span < 0 else (lo, hi + span)
    return lo, hi + arr.itemsize


def _storages(tensors: list[tuple[str, Tensor]]):
    """Group tensors by the buffer they live in: ``(arrays to write, per-tensor table)``."""
    groups: dict[int, list] = {}
    for name, t in tensors:
        arr = np.asarray(t._array)
        groups.setdefault(id(_root(arr)), []).append((name, arr, t))
    arrays, table = {}, {}
    for members in groups.values():
        first_name, first = members[0][0], members[0][1]
        # safetensors has no complex dtype: a complex tensor is stored as bytes with its view
        if len({_layout(arr) for _, arr, _ in members}) == 1 and first.dtype.kind != "c":
            arrays[first_name] = first if first.flags.c_contiguous else first.copy(order="C")
            for name, _, t in members:
                table[name] = {"storage": first_name}
        else:
            base = _root(first).__array_interface__["data"][0]
            spans = [_extent(arr, base) for _, arr, _ in members]
            lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
            blob = np.zeros(hi - lo, dtype=np.uint8)
            storage = f"__storage{len(arrays)}__.{first_name}"
            for (name, arr, t), (start, _) in zip(members, spans):
                offset = arr.__array_interface__["data"][0] - base - lo
                view = np.ndarray(arr.shape, arr.dtype, buffer=blob, offset=offset,
                                  strides=arr.strides)
                view[...] = arr
                table[name] = {"storage": storage, "view": {
                    "dtype": dtypes._FROM_NP[arr.dtype].name, "shape": list(arr.shape),
                    "offset": offset, "strides": list(arr.strides)}}
            arrays[storage] = blob
        for name, _, t in members:
            if t.requires_grad:
                table[name]["requires_grad"] = True
            if any(c.__name__ == "Parameter" for c in type(t).__mro__):
                table[name]["parameter"] = True
    return arrays, table


def _write_all(f, payload: bytes) -> None:
    view = memoryview(payload)
    for start in range(0, len(view), _CHUNK):
        f.write(view[start : start + _CHUNK])


def _atomic_write(path: str, payload: bytes) -> None:
    import tempfile

    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {os.path.dirname(path) or folder} does not exist.")
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            _write_all(f, payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (POSIX)
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, format: str = "glassgrad") -> None:
    """Save tensors and plain values to a checkpoint file, atomically (``torch.save``).

    ``obj`` may nest dicts (any keys but tensors), lists, tuples and sets of tensors (sparse COO
    and CSR ones too: NOTE [Sparse tensors in checkpoints]), NumPy arrays
    and scalars (any numeric or bool dtype, 0-d too), ints, floats, complex numbers, bools,
    strings, bytes, None, dtypes, ``Size`` and devices: model, optimizer and scheduler
    ``state_dict()``s; and objects of importable classes by their ``__getstate__()``: a whole
    ``nn.Module``, ``argparse.Namespace``, dataclasses (NOTE [Objects in checkpoints]). ``f`` is a
    path or a writable binary file object (written directly, not atomically). Tensors sharing
    memory are stored once and load sharing; bfloat16 is kept. Format: NOTE [Checkpoint format].
    Raises TypeError for anything else (glassgrad never pickles: a lambda, a local class, an
    object with its own ``__reduce__``), RecursionError for containers nested more than
    ``MAX_DEPTH`` (100) deep, and ValueError for a header ``load`` would refuse (over
    2,000,000 JSON values: store long lists of numbers as tensors). ``pickle_module`` and the
    other pickle options are accepted for compatibility and ignored.

    ``format="torch"`` (glassgrad's own argument) writes what ``torch.save`` writes instead: a
    zip file that ``torch.load`` reads with ``weights_only=True`` (NOTE [Writing torch files]);
    it holds tensors, Parameters, numbers, strings, bytes, None, dtypes, Size, devices and
    (nested) lists, tuples, sets and dicts, and raises TypeError for anything else.

    Example::

        >>> glassgrad.save({"model": model.state_dict(), "step": 10}, "ckpt.safetensors")
        >>> glassgrad.save(model.state_dict(), "for_pytorch.pt", format="torch")
    """
    if pickle_protocol is not None:  # NOTE: torch's errors for a protocol pickle would refuse
        import io
        import pickle
        pickle.Pickler(io.BytesIO(), pickle_protocol)
    if format == "torch":
        return _write(f, _torch_write.save_torch(obj))
    if format != "glassgrad":
        raise ValueError(f"glassgrad.save: format must be 'glassgrad' or 'torch', not {format!r}")
    from safetensors.numpy import save as st_save

    encoder = _Encoder()
    structure = encoder.encode(obj, [])
    arrays, table = _storages(encoder.tensors)
    metadata = {
        "glassgrad": _VERSION,
        "structure": json.dumps(structure, allow_nan=False, separators=(",", ":")),
        "tensors": json.dumps(table, separators=(",", ":")),
    }
    payload = st_save(arrays, metadata=metadata)
    values = header_values(payload[8 : 8 + int.from_bytes(payload[:8], "little")])
    if values > _read.MAX_HEADER_VALUES:  # NOTE [Bounded loading]: load would refuse it
        raise ValueError(
            f"glassgrad.save: the checkpoint's header would hold ~{values:,} JSON values, more "
            f"than the {_read.MAX_HEADER_VALUES:,} glassgrad.load reads. Store long lists of "
            "numbers as tensors (glassgrad.tensor(values)): their data then goes in the file's "
            "binary part."
        )
    _write(f, payload)


def _write(f, payload: bytes) -> None:
    if hasattr(f, "write"):
        _write_all(f, payload)
        return
    _atomic_write(os.fspath(f), payload)


def _bad(where: str, what: str) -> ValueError:
    return ValueError(f"glassgrad.load: {where} has a malformed glassgrad structure: {what}.")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _view_array(name: str, view, storage: np.ndarray, where: str) -> np.ndarray:
    """The view a table entry describes, after checking it stays inside its storage."""
    if not (isinstance(view, dict) and set(view) == {"dtype", "shape", "offset", "strides"}):
        raise _bad(where, f"tensor {name!r} has the view {_short(view)}")
    dt = dtypes._NAMES.get(view["dtype"]) if isinstance(view["dtype"], str) else None
    shape, strides, offset = view["shape"], view["strides"], view["offset"]
    if dt is None:
        raise _bad(where, f"tensor {name!r} is a view of unknown dtype {_short(view['dtype'])}")
    if not (isinstance(shape, list) and isinstance(strides, list) and len(shape) == len(strides)
            and len(shape) <= 64 and all(is_int(n) and n >= 0 for n in shape)
            and all(is_int(s) and abs(s) < 2**62 for s in strides)
            and is_int(offset) and offset >= 0):
        raise _bad(where, f"tensor {name!r} is a view of shape {_short(shape)}, strides "
                          f"{_short(strides)} and offset {_short(offset)}")
    itemsize, size = dt.np.itemsize, storage.nbytes
    claimed = math.prod(max(n, 1) for n in shape) * itemsize
    if claimed > max(size, _MAX_REPEATED_VIEW):
        # NOTE: a zero-stride view of a few bytes can claim terabytes; the first op on it
        # would then fail to allocate. glassgrad's own views never repeat that much.
        raise _bad(where, f"tensor {name!r} is a {shape} view claiming {claimed} bytes over a "
                          f"{size}-byte storage")
    lo = hi = offset
    if 0 not in shape:
        for n, stride in zip(shape, strides):
            span = (n - 1) * stride
            lo, hi = (lo + span, hi) if span < 0 else (lo, hi + span)
        hi += itemsize
    if lo < 0 or hi > size:
        raise _bad(where, f"tensor {name!r} is a view reaching bytes [{lo}, {hi}) of a "
                          f"{size}-byte storage")
    return np.ndarray(tuple(shape), dt.np, buffer=storage, offset=offset, strides=tuple(strides))


def _build_tensors(table, storages: dict, where: str) -> dict[str, Tensor]:
    parameter_cls = None
    out = {}
    if not isinstance(table, dict):
        raise _bad(where, "the tensor table is not an object")
    for name, entry in table.items():
        if not (isinstance(entry, dict) and "storage" in entry
                and set(entry) <= {"storage", "view", "requires_grad", "parameter"}):
            raise _bad(where, f"tensor {name!r} has the table entry {_short(entry)}")
        storage, view = entry["storage"], entry.get("view")
        requires_grad, parameter = entry.get("requires_grad", False), entry.get("parameter", False)
        if not (isinstance(storage, str) and storage in storages):
            raise _bad(where, f"tensor {name!r} names the storage {_short(storage)}, which the "
                              "file does not hold")
        if type(requires_grad) is not bool or type(parameter) is not bool:
            raise _bad(where, f"tensor {name!r} has requires_grad {_short(requires_grad)} and "
                              f"parameter {_short(parameter)}; both are true or false")
        arr = storages[storage] if view is None else _view_array(name, view, storages[storage],
                                                                  where)
        if requires_grad and arr.dtype.kind != "f" and arr.dtype != ml_dtypes.bfloat16:
            raise _bad(where, f"tensor {name!r} of dtype {dtypes._FROM_NP[arr.dtype].name} "
                              "requires grad; only Tensors of floating point dtype can")
        t = Tensor._make(arr)
        if parameter:
            if parameter_cls is None:
                try:
                    from .nn.parameter import Parameter as parameter_cls
                except ImportError:
                    parameter_cls = False
            if parameter_cls:
                t = parameter_cls(t, requires_grad=requires_grad)
        if requires_grad and not t.requires_grad:
            t.requires_grad_(True)
        out[name] = t
    return out


def _deeper(depth: int, where: str) -> int:
    """The depth inside one more container (a list, tuple or dict), refused past MAX_DEPTH."""
    if depth >= MAX_DEPTH:
        raise _bad(where, f"the structure nests deeper than {MAX_DEPTH} levels")
    return depth + 1


def _decode(node, tensors: dict, where: str, depth: int = 0):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        depth = _deeper(depth, where)
        if all(type(v) in _PLAIN for v in node):  # a list of numbers: no call per element
            return node
        return [_decode(v, tensors, where, depth) for v in node]
    if not isinstance(node, dict):
        raise _bad(where, f"unexpected value {_short(node)}")
    keys, value = set(node), next(iter(node.values()), None)
    if keys == {"tensor"}:
        if isinstance(value, str) and value in tensors:
            return tensors[value]
        raise _bad(where, f"the structure refers to tensor {_short(value)}, which the tensor "
                          "table does not hold")
    if keys == {"tuple"} and isinstance(value, list):
        depth = _deeper(depth, where)
        return tuple(_decode(v, tensors, where, depth) for v in value)
    if keys == {"float"} and value in ("nan", "inf", "-inf"):
        return float(value)
    if keys == {"bytes"} and isinstance(value, str):
        try:
            return bytes.fromhex(value)
        except ValueError:
            raise _bad(where, f"the bytes {_short(value)} are not a hex string") from None
    if keys == {"dtype"}:
        if isinstance(value, str) and value in dtypes._NAMES:
            return dtypes._NAMES[value]
        raise _bad(where, f"unknown dtype {_short(value)}")
    if keys & _sparse.TAGS:
        return _sparse.decode(node, tensors, where, depth, _decode, _bad)
    if keys & _objects.TAGS:
        return _objects.decode_other(node, tensors, where, depth, _decode)
    ordered = node.get("ordered", False)
    cls = collections.OrderedDict if ordered is True else dict
    depth = _deeper(depth, where)
    if type(ordered) is bool and keys - {"ordered"} == {"dict"} and isinstance(node["dict"], dict):
        return cls((k, _decode(v, tensors, where, depth)) for k, v in node["dict"].items())
    if type(ordered) is bool and keys - {"ordered"} == {"items"} and isinstance(node["items"],
                                                                                 list):
        pairs = []
        for pair in node["items"]:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise _bad(where, f"a dict item is not a [key, value] pair: {_short(pair)}")
            key = _decode(pair[0], tensors, where, depth)
            try:
                hash(key)
            except TypeError:
                raise _bad(where, f"a dict key is a {type(key).__name__}, which cannot be a "
                                  "key") from None
            if isinstance(key, Tensor):
                raise _bad(where, "a dict key is a tensor, which glassgrad.save never writes")
            pairs.append((key, _decode(pair[1], tensors, where, depth)))
        return cls(pairs)
    raise _bad(where, f"unknown tag {_short(sorted(keys))}")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what ``glassgrad.save`` wrote (``torch.load``); tensors come back writable, sharing
    memory where they shared it, with their dtype (bfloat16 included) and ``requires_grad``.

    ``f`` is a path or a readable binary file object. A plain safetensors file (e.g. written by
    ``safetensors.torch.save_file``) loads as a dict of tensors, by sorted name as
    safetensors' own loaders give them. A PyTorch checkpoint (``torch.save``'s zip format, or
    its legacy format: NOTE [Legacy torch files]; told apart by their first bytes) is read with
    a restricted unpickler that admits only what torch's ``weights_only=True`` admits
    (NOTE [Reading torch files]), so a torch model's
    ``state_dict()`` loads into the same glassgrad model. Nothing in the file is executed:
    objects are rebuilt only from glassgrad's own classes, ``argparse.Namespace`` and those
    allowlisted with ``safe_globals`` (else ``pickle.UnpicklingError`` "Weights only load
    failed", as torch raises, naming the global). ``weights_only=False`` widens one thing, for
    a whole model saved by torch: ``torch.nn``'s classes and functions in a torch file are then
    glassgrad's own without an allowlist (under the default, as in torch, they need one); the
    user's own classes still need ``safe_globals``, and nothing a file names is imported or run. ``map_location`` is applied as torch applies it (a string, a
    device, a dict of locations or a callable on each storage); tensors load on the CPU, and a
    CUDA target raises torch's RuntimeError for a machine without one. ``pickle_module`` is
    ignored. Memory is bounded (NOTE [Bounded loading]): the load peaks near one copy of the
    data, and ``mmap=True`` (``f`` a path, as in torch) maps a glassgrad file copy-on-write
    instead of reading it (a torch file is read). Raises ValueError naming the file and the
    problem for anything that is neither (a device or FIFO, a damaged or hostile header; for a
    torch file the error is also torch's type, RuntimeError or pickle.UnpicklingError),
    IsADirectoryError for a directory, as torch does.

    Example::

        >>> state = glassgrad.load("ckpt.safetensors")
        >>> model.load_state_dict(state["model"])
    """
    with open_source(f, bool(mmap)) as (fh, size, where):
        kind, fh = sniff(fh, size)
        if kind in ("zip", "pickle"):
            token = _torch_read.OWN_NN_CLASSES.set(weights_only is False)
            try:
                if kind == "zip":
                    return _torch_read.load_zip(fh, where, map_location)
                return _torch_legacy.load_legacy(fh, size, where, map_location)
            finally:
                _torch_read.OWN_NN_CLASSES.reset(token)
        _torch_read.restore(_torch_read.Storage(np.empty(0), "cpu"), "cpu", map_location, where)
        header, head, data_start = read_header(fh, size, where)
        data_size = None if size is None else size - data_start
        plan = plan_entries(header, data_size, where, head)
        storages = read_entries(fh, plan, where, head, data_start, bool(mmap), size is not None)
    metadata = header.get("__metadata__") or {}
    if "glassgrad" not in metadata:
        return {name: Tensor._make(storages[name]) for name in sorted(storages)}
    if metadata["glassgrad"] != _VERSION:
        raise ValueError(
            f"glassgrad.load: {where} is a glassgrad checkpoint of format version "
            f"{metadata['glassgrad']!r}; this glassgrad reads version {_VERSION}. Upgrade "
            "glassgrad."
        )
    try:
        structure = json.loads(metadata["structure"])
        table = json.loads(metadata["tensors"])
    except RecursionError:
        raise _bad(where, f"the structure nests deeper than {MAX_DEPTH} levels") from None
    except (KeyError, TypeError, ValueError):
        raise _bad(where, "the structure or tensor table is missing or not JSON") from None
    loading = _objects.Loading(_build_tensors(table, storages, where))
    return _decode(structure, loading, where)
