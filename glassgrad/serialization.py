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
``{"dtype": name}``. Loading reads JSON and buffers only: nothing from the file is executed, and
unknown tags are an error.

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
from .tensor import Tensor

__all__ = ["load", "save"]

_VERSION = "1"
_ST_DTYPES = {
    "F64": np.dtype(np.float64), "F32": np.dtype(np.float32), "F16": np.dtype(np.float16),
    "BF16": np.dtype(ml_dtypes.bfloat16), "I64": np.dtype(np.int64), "I32": np.dtype(np.int32),
    "I16": np.dtype(np.int16), "I8": np.dtype(np.int8), "U8": np.dtype(np.uint8),
    "BOOL": np.dtype(np.bool_),
}
_CHUNK = 1 << 26
_MAX_REPEATED_VIEW = 1 << 30  # bytes a view may claim beyond its storage (stride-0 repeats)


class _Encoder:
    """Walks the object: builds the tagged JSON and collects each distinct tensor once."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}  # id(tensor) -> entry name
        self.tensors: list[tuple[str, Tensor]] = []
        self._taken: set[str] = set()
        self._active: set[int] = set()

    def _name(self, path: list) -> str:
        base = ".".join(str(p) for p in path) or "tensor"
        name, k = base, 1
        while name in self._taken or name == "__metadata__" or name.startswith("__storage"):
            name, k = f"{base}#{k}", k + 1
        self._taken.add(name)
        return name

    def encode(self, obj, path: list):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return float(obj) if math.isfinite(obj) else {"float": repr(float(obj))}
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            return self.encode(obj.item(), path)
        if isinstance(obj, Tensor):
            name = self.names.get(id(obj))
            if name is None:
                name = self.names[id(obj)] = self._name(path)
                self.tensors.append((name, obj))
            return {"tensor": name}
        if isinstance(obj, dtypes.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, bytes):
            return {"bytes": obj.hex()}
        if not isinstance(obj, (list, tuple, dict)):
            raise TypeError(
                f"glassgrad.save: cannot save an object of type {type(obj).__name__} at "
                f"{'.'.join(map(str, path)) or 'the top level'}. Checkpoints hold tensors, "
                "numbers, strings, bytes, None, dtypes and (nested) lists, tuples and dicts; "
                "glassgrad never pickles. To save a model, save model.state_dict()."
            )
        if id(obj) in self._active:
            raise ValueError("glassgrad.save: the object contains itself (a reference cycle)")
        self._active.add(id(obj))
        try:
            if isinstance(obj, list):
                return [self.encode(v, [*path, i]) for i, v in enumerate(obj)]
            if isinstance(obj, tuple):
                return {"tuple": [self.encode(v, [*path, i]) for i, v in enumerate(obj)]}
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

    def _key(self, key, path):
        if isinstance(key, Tensor):
            raise TypeError("glassgrad.save: tensors cannot be dict keys in a checkpoint")
        return self.encode(key, path)


def _root(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


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
        if len({_layout(arr) for _, arr, _ in members}) == 1:
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
         _disable_byteorder_record=False) -> None:
    """Save tensors and plain values to a checkpoint file, atomically (``torch.save``).

    ``obj`` may nest dicts (any keys but tensors), lists and tuples of tensors, ints, floats, bools,
    strings, bytes, None and dtypes: model and optimizer ``state_dict()``s. ``f`` is a path or a
    writable binary file object (written directly, not atomically). Tensors sharing memory are
    stored once and load sharing; bfloat16 is kept. Format: NOTE [Checkpoint format]. Raises
    TypeError for anything else (glassgrad never pickles). ``pickle_module`` and the other
    pickle options are accepted for compatibility and ignored.

    Example::

        >>> glassgrad.save({"model": model.state_dict(), "step": 10}, "ckpt.safetensors")
    """
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
    if hasattr(f, "write"):
        _write_all(f, payload)
        return
    _atomic_write(os.fspath(f), payload)


def _not_a_checkpoint(where: str, data: bytes, why: str) -> ValueError:
    hint = ""
    if data[:4] == b"PK\x03\x04" or data[:1] == b"\x80":
        hint = (" It looks like a PyTorch (pickle) checkpoint; glassgrad never unpickles. In "
                "PyTorch, save the state dict with safetensors.torch.save_file(state_dict, path), "
                "then glassgrad.load(path) reads it.")
    return ValueError(
        f"glassgrad.load: {where} is not a glassgrad checkpoint (a safetensors file): {why}.{hint}"
    )


def _read_header(data: bytes, where: str) -> dict:
    if len(data) < 10:
        raise _not_a_checkpoint(where, data, "the file is too short")
    n = int.from_bytes(data[:8], "little")
    if n < 2 or n > len(data) - 8 or data[8:9] != b"{":
        raise _not_a_checkpoint(where, data, "no safetensors header")
    try:
        header = json.loads(bytes(data[8 : 8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _not_a_checkpoint(where, data, "the header is not JSON") from None
    if not isinstance(header, dict):
        raise _not_a_checkpoint(where, data, "the header is not a JSON object")
    return header


def _storage_arrays(data: bytes, where: str) -> dict[str, np.ndarray]:
    from safetensors import SafetensorError, deserialize

    try:
        entries = deserialize(data)
    except (SafetensorError, ValueError) as e:
        raise _not_a_checkpoint(where, data, f"safetensors rejected it ({e})") from None
    out = {}
    for name, entry in entries:
        dt = _ST_DTYPES.get(entry["dtype"])
        if dt is None:
            raise ValueError(
                f"glassgrad.load: tensor {name!r} in {where} has dtype {entry['dtype']}, which "
                f"glassgrad has no tensor type for (supported: {', '.join(_ST_DTYPES)})."
            )
        arr = np.frombuffer(entry["data"], dtype=dt).reshape(entry["shape"])
        if not (arr.flags.writeable and arr.flags.aligned):
            arr = arr.copy()
        out[name] = arr
    return out


def _bad(where: str, what: str) -> ValueError:
    return ValueError(f"glassgrad.load: {where} has a malformed glassgrad structure: {what}.")


def _build_tensors(table, storages: dict, where: str) -> dict[str, Tensor]:
    parameter_cls = None
    out = {}
    if not isinstance(table, dict):
        raise _bad(where, "the tensor table is not an object")
    for name, entry in table.items():
        try:
            arr = storages[entry["storage"]]
            view = entry.get("view")
            if view is not None:
                dt = dtypes._NAMES[view["dtype"]].np
                storage_bytes = arr.nbytes
                arr = np.ndarray(tuple(int(s) for s in view["shape"]), dtype=dt, buffer=arr,
                                 offset=int(view["offset"]),
                                 strides=tuple(int(s) for s in view["strides"]))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise _bad(where, f"tensor {name!r} ({e!r})") from None
        if view is not None and arr.nbytes > max(storage_bytes, _MAX_REPEATED_VIEW):
            # NOTE: a zero-stride view of a few bytes can claim terabytes; the first op on it
            # would then fail to allocate. glassgrad's own views never repeat that much.
            raise _bad(where, f"tensor {name!r} is a {list(arr.shape)} view claiming "
                              f"{arr.nbytes} bytes over a {storage_bytes}-byte storage")
        t = Tensor._make(arr)
        if entry.get("parameter"):
            if parameter_cls is None:
                try:
                    from .nn.parameter import Parameter as parameter_cls
                except ImportError:
                    parameter_cls = False
            if parameter_cls:
                t = parameter_cls(t, requires_grad=bool(entry.get("requires_grad")))
        if entry.get("requires_grad") and not t.requires_grad:
            t.requires_grad_(True)
        out[name] = t
    return out


def _decode(node, tensors: dict, where: str):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(v, tensors, where) for v in node]
    if not isinstance(node, dict):
        raise _bad(where, f"unexpected value {node!r}")
    keys = set(node)
    if keys == {"tensor"} and node["tensor"] in tensors:
        return tensors[node["tensor"]]
    if keys == {"tuple"} and isinstance(node["tuple"], list):
        return tuple(_decode(v, tensors, where) for v in node["tuple"])
    if keys == {"float"} and node["float"] in ("nan", "inf", "-inf"):
        return float(node["float"])
    if keys == {"bytes"} and isinstance(node["bytes"], str):
        return bytes.fromhex(node["bytes"])
    if keys == {"dtype"} and node["dtype"] in dtypes._NAMES:
        return dtypes._NAMES[node["dtype"]]
    cls = collections.OrderedDict if node.get("ordered") is True else dict
    if keys - {"ordered"} == {"dict"} and isinstance(node["dict"], dict):
        return cls((k, _decode(v, tensors, where)) for k, v in node["dict"].items())
    if keys - {"ordered"} == {"items"} and isinstance(node["items"], list):
        pairs = []
        for pair in node["items"]:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise _bad(where, f"a dict item is not a [key, value] pair: {pair!r}")
            pairs.append((_decode(pair[0], tensors, where), _decode(pair[1], tensors, where)))
        return cls(pairs)
    raise _bad(where, f"unknown tag {sorted(keys)}")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what ``glassgrad.save`` wrote (``torch.load``); tensors come back writable, sharing
    memory where they shared it, with their dtype (bfloat16 included) and ``requires_grad``.

    ``f`` is a path or a readable binary file object. A plain safetensors file (e.g. written by
    ``safetensors.torch.save_file``) loads as a dict of tensors, by sorted name as
    safetensors' own loaders give them. Nothing in the file is executed:
    there is no pickle, so ``weights_only`` is accepted and ignored (loading is always
    weights-only); ``map_location``, ``mmap`` and ``pickle_module`` are ignored too (tensors load
    on the CPU). Raises ValueError for a file that is not a glassgrad checkpoint or safetensors
    file, e.g. a pickled ``torch.save`` file.
    """
    if hasattr(f, "read"):
        data, where = f.read(), repr(getattr(f, "name", "the file object"))
    else:
        where = repr(os.fspath(f))
        with open(f, "rb") as fh:
            data = fh.read()
    header = _read_header(data, where)
    storages = _storage_arrays(data, where)
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
    except (KeyError, TypeError, ValueError):
        raise _bad(where, "the structure or tensor table is missing or not JSON") from None
    return _decode(structure, _build_tensors(table, storages, where), where)
