"""Reading a safetensors file with bounded memory, for ``glassgrad.load``.

NOTE [Bounded loading]: nothing is read that the file has not first shown to be worth reading,
so no file, however hostile, makes a load cost more than a bounded header plus the data that a
consistent header declares:
1. A path must name a regular file (``/dev/zero``, a FIFO or a socket would stream without end; a
   directory is refused with the IsADirectoryError torch raises). It is opened non-blocking, so a
   FIFO swapped in after the check cannot hang the open, and checked again on the open descriptor.
2. The 8-byte header length comes first. It must fit in the file (its size is known for paths and
   seekable file objects) and under ``MAX_HEADER_BYTES`` (safetensors' own cap, 100 MB), before
   the header is read; unseekable streams are read in bounded pieces, so a short stream costs
   what it delivered. Bytes alone do not bound the parse: json.loads makes a Python object of up
   to ~60 bytes per value (a 30 MB header of ``[[],[],...]`` cost 1.4 GB and 50 s), so the header
   may also hold at most ``MAX_HEADER_VALUES`` (2,000,000) values, counted before parsing as its
   commas and opening brackets (an upper bound): at worst ~170 MB (2,000,000 short strings) and
   about a second on a busy 2-core machine. Measured on a model and Adam state_dict of 8,000
   parameters (32,000 tensors): a 7.1 MB header of 398,000 values, ~50 per parameter, so the
   caps hold ~40,000 parameters with their optimizer state (a 70B-parameter LLM has under 1,000
   tensors). save refuses (ValueError) what load would refuse, e.g. a list of millions of
   numbers, which belongs in a tensor.
3. The header's entries are checked as safetensors checks them (known dtype, shape times item size
   equal to the byte range, ranges tiling the data region from 0 without gaps) and the data region
   must end exactly at the end of the file, before a single tensor byte is read: a 16 GiB sparse
   file whose header declares a few bytes is refused in microseconds.
4. Each tensor is read straight into its own fresh array (``readinto``, 64 MiB at a time), so a
   load peaks near one copy of the data. With ``mmap=True`` (a path only, as in torch) the arrays
   are private copy-on-write maps of the file instead: nothing is read until it is used, writes stay
   in memory, and ``os.replace`` (how glassgrad saves) leaves the mapped old file intact; but a file
   rewritten in place shows through in pages not yet written, and one truncated under the map
   kills the process (SIGBUS) on access, which is why copying is the default.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import mmap as _mmap
import os
import stat

import ml_dtypes
import numpy as np

MAX_HEADER_BYTES = 100_000_000
MAX_HEADER_VALUES = 2_000_000
_CHUNK = 1 << 26
_MAX_DIMS = 64  # NumPy's limit
ST_DTYPES = {
    "F64": np.dtype(np.float64), "F32": np.dtype(np.float32), "F16": np.dtype(np.float16),
    "BF16": np.dtype(ml_dtypes.bfloat16), "I64": np.dtype(np.int64), "I32": np.dtype(np.int32),
    "I16": np.dtype(np.int16), "I8": np.dtype(np.int8), "U8": np.dtype(np.uint8),
    "BOOL": np.dtype(np.bool_),
}
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


class EmptyCheckpointError(EOFError, ValueError):
    """torch's error for an empty file (EOFError, 'Ran out of input'), and glassgrad's ValueError
    for every file it refuses."""


def not_a_checkpoint(where: str, head: bytes, why: str) -> ValueError:
    """The error for a file that is no safetensors file; ``head`` is its first bytes (for hints)."""
    hint = ""
    if head[:1] == b"\x80":
        hint = (" It looks like a pickle, or a PyTorch checkpoint of the legacy format "
                "(_use_new_zipfile_serialization=False); glassgrad never unpickles it. In "
                "PyTorch, save it again with torch.save(obj, path) (the zip format), which "
                "glassgrad.load reads.")
    return ValueError(
        f"glassgrad.load: {where} is not a glassgrad checkpoint (a safetensors file): {why}.{hint}"
    )


def header_values(raw: bytes) -> int:
    """An upper bound on the JSON values (and objects json.loads would make) in a header."""
    return raw.count(b",") + raw.count(b"[") + raw.count(b"{")


def is_int(x) -> bool:
    """A JSON integer (not a bool, not a float such as 1e30 or NaN)."""
    return type(x) is int


def _check_regular(mode: int, path: str) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise ValueError(
            f"glassgrad.load: {path!r} is not a regular file (it is {kind}); a checkpoint is a "
            "file of known size, so glassgrad reads nothing from it. To read a stream, pass a "
            "file object."
        )


@contextlib.contextmanager
def open_source(f, use_mmap: bool = False):
    """Yield ``(file, size or None, where)`` for a path or a readable file object; ``size``
    counts the bytes from the current position to the end."""
    if hasattr(f, "read"):
        if use_mmap:  # torch's check and words
            raise ValueError("f must be a file path in order to use the mmap argument")
        yield f, _remaining(f), repr(getattr(f, "name", "the file object"))
        return
    path = os.fspath(f)
    _check_regular(os.stat(path).st_mode, path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb", buffering=0) as fh:
        st = os.fstat(fd)
        _check_regular(st.st_mode, path)
        yield fh, st.st_size, repr(path)


def _remaining(f) -> int | None:
    try:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None  # a pipe or device: seek/tell would say nothing true
    except (AttributeError, OSError, ValueError):
        pass
    try:
        pos = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(pos)
    except (AttributeError, OSError, ValueError):
        return None
    return end - pos if isinstance(end, int) and isinstance(pos, int) else None


def _read_into(f, buf: memoryview) -> int:
    """Fill ``buf`` from ``f`` in bounded pieces; return how many bytes arrived."""
    done = 0
    readinto = getattr(f, "readinto", None)
    while done < len(buf):
        piece = buf[done : done + _CHUNK]
        if readinto is not None:
            got = readinto(piece)
        else:
            data = f.read(len(piece))
            got = len(data)
            piece[:got] = data
        if not got:
            break
        done += got
    return done


def _read_bytes(f, n: int, sized: bool = False) -> bytearray:
    """Up to ``n`` bytes: read in place when the file is known to hold them (``sized``), else
    grown as they arrive, so a short stream costs what it delivered."""
    if sized:
        out = bytearray(n)
        with memoryview(out) as view:
            got = _read_into(f, view)
        return out if got == n else out[:got]  # NOTE: a slice would copy
    out = bytearray()
    while len(out) < n:
        data = f.read(min(n - len(out), _CHUNK))
        if not data:
            break
        out += data
    return out


class _Prefixed:
    """An unseekable stream with the bytes already read from it put back in front."""

    def __init__(self, head: bytes, f) -> None:
        self._head, self._f = head, f

    def read(self, n: int = -1) -> bytes:
        if not self._head:
            return self._f.read(n)
        if n < 0:
            out, self._head = self._head + self._f.read(), b""
            return out
        out, self._head = self._head[:n], self._head[n:]
        return out if len(out) == n else out + self._f.read(n - len(out))


def sniff(f, size: int | None):
    """``("safetensors" | "zip" | "pickle", f)``: the file's format by its first bytes (a
    safetensors file has ``{`` after its 8-byte header length, a zip ``PK\x03\x04``, a pickle
    ``\x80`` and its protocol), and the file positioned where it was."""
    head = bytes(_read_bytes(f, 9))
    if size is not None:
        f.seek(-len(head), os.SEEK_CUR)
    else:
        f = _Prefixed(head, f)
    if head[8:9] == b"{":
        return "safetensors", f
    if head[:4] == b"PK\x03\x04":
        return "zip", f
    # NOTE: a pickle starts with PROTO and its number; a file of 9 bytes or more whose byte 8
    # is not "{" is no safetensors file, so a header length starting 0x80 0x02 is never taken
    pickle = len(head) == 9 and head[:1] == b"\x80" and 2 <= head[1] <= 5
    return ("pickle" if pickle else "safetensors"), f


def read_header(f, size: int | None, where: str) -> tuple[dict, bytes, int]:
    """The header as a dict, the file's first bytes and the header's length (8 + n)."""
    head = _read_bytes(f, 8)
    if not head:
        raise EmptyCheckpointError(f"Ran out of input\nglassgrad.load: {where} is not a "
                                   "glassgrad checkpoint (a safetensors file): it is empty (0 "
                                   "bytes); nothing was saved to it, or the save was cut off.")
    if len(head) < 8:
        raise not_a_checkpoint(where, head, "the file is too short")
    n = int.from_bytes(head, "little")
    if n < 2 or (size is not None and n > size - 8):
        within = "" if size is None else f" in a {size}-byte file"
        raise not_a_checkpoint(where, head, f"no safetensors header (its length field says {n} "
                                            f"bytes{within})")
    if n > MAX_HEADER_BYTES:
        raise not_a_checkpoint(where, head, f"the header claims {n:,} bytes, more than the "
                                            f"{MAX_HEADER_BYTES:,} safetensors allows")
    raw = _read_bytes(f, n, size is not None)
    if len(raw) < n:
        raise not_a_checkpoint(where, head, f"the file ends inside its {n}-byte header")
    if raw[:1] != b"{":
        raise not_a_checkpoint(where, head, "no safetensors header")
    values = header_values(raw)
    if values > MAX_HEADER_VALUES:
        raise not_a_checkpoint(where, head, f"its header holds ~{values:,} JSON values, more "
                                            f"than the {MAX_HEADER_VALUES:,} glassgrad reads")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise not_a_checkpoint(where, head, "the header is not JSON") from None
    except RecursionError:
        raise not_a_checkpoint(where, head, "the header nests too deeply for JSON") from None
    if not isinstance(header, dict):
        raise not_a_checkpoint(where, head, "the header is not a JSON object")
    return header, head, 8 + n


def plan_entries(header: dict, data_size: int | None, where: str, head: bytes) -> list:
    """Check every entry as safetensors does; return ``(name, dtype, shape, begin, end)`` sorted
    by position. ``data_size`` (bytes after the header) must equal the last end when known."""
    metadata = header.get("__metadata__")
    if metadata is not None and not (
            isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
        raise not_a_checkpoint(where, head, "__metadata__ is not a map of strings")
    plan = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not (isinstance(entry, dict) and set(entry) == {"dtype", "shape", "data_offsets"}):
            raise not_a_checkpoint(where, head, f"entry {name!r} is not a safetensors tensor")
        code, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not (isinstance(shape, list) and len(shape) <= _MAX_DIMS
                and all(is_int(s) and s >= 0 for s in shape)
                and math.prod(max(s, 1) for s in shape) < 2**62):  # NumPy's index range
            raise not_a_checkpoint(where, head, f"tensor {name!r} has shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(is_int, offsets))
                and 0 <= offsets[0] <= offsets[1]):
            raise not_a_checkpoint(where, head, f"tensor {name!r} has data_offsets {offsets!r}")
        dt = ST_DTYPES.get(code) if isinstance(code, str) else None
        if dt is None:
            raise ValueError(
                f"glassgrad.load: tensor {name!r} in {where} has dtype {code!r}, which glassgrad "
                f"has no tensor type for (supported: {', '.join(ST_DTYPES)})."
            )
        nbytes = math.prod(shape) * dt.itemsize
        if nbytes != offsets[1] - offsets[0]:
            raise not_a_checkpoint(where, head, f"tensor {name!r} of shape {shape} and dtype "
                                                f"{code} needs {nbytes} bytes, its data_offsets "
                                                f"give {offsets[1] - offsets[0]}")
        plan.append((name, dt, tuple(shape), offsets[0], offsets[1]))
    plan.sort(key=lambda p: (p[3], p[4]))
    end = 0
    for name, _, _, begin, stop in plan:
        if begin != end:
            raise not_a_checkpoint(where, head, f"tensor {name!r} starts at byte {begin} of the "
                                                f"data, not at {end} where the one before ends")
        end = stop
    if data_size is not None and end != data_size:
        raise not_a_checkpoint(where, head, f"the header declares {end} bytes of data, the file "
                                            f"holds {data_size}")
    return plan


def read_entries(f, plan: list, where: str, head: bytes, data_start: int, use_mmap: bool,
                 sized: bool) -> dict[str, np.ndarray]:
    """The tensors of ``plan``, each read once into a fresh writable array (or mapped). From a
    stream of unknown size (``sized`` false) an array grows with the bytes that arrive, so a
    header that lies costs what the stream delivered, not what the header claimed."""
    if use_mmap:
        return _mapped(f, plan, data_start)
    out = {}
    for name, dt, shape, begin, stop in plan:
        if sized:
            arr = np.empty(shape, dtype=dt)
            got = _read_into(f, memoryview(arr.reshape(-1).view(np.uint8))) if stop > begin else 0
        else:
            raw = _read_bytes(f, stop - begin)
            got = len(raw)
            arr = np.frombuffer(raw, dtype=np.uint8)[: got - got % dt.itemsize].view(dt)
        if got < stop - begin:
            raise not_a_checkpoint(where, head, f"the file ends inside tensor {name!r}")
        out[name] = arr.reshape(shape)  # NOTE: bool bytes other than 0 and 1 kept, as torch does
    return out


def _mapped(f, plan: list, data_start: int) -> dict[str, np.ndarray]:
    out = {}
    buf = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_COPY) if plan and plan[-1][4] else None
    for name, dt, shape, begin, stop in plan:
        start = data_start + begin
        if begin == stop:
            arr = np.empty(shape, dtype=dt)
        else:  # NOTE: unaligned when the header is not padded to 8 bytes; NumPy copes
            arr = np.frombuffer(buf, dt, math.prod(shape), start).reshape(shape)
        out[name] = arr
    return out
