"""Reading PyTorch's legacy checkpoint format (``torch.save(..., _use_new_zipfile_serialization=
False)``, and every file of torch before 1.6) for ``glassgrad.load``.

NOTE [Legacy torch files]: the file is five pickles, then the storages: the magic number
``0x1950a86a20f9469cfc6c``, the protocol version 1001, a dict of system facts (byte order, type
sizes), the saved object (its tensors refer to storages by persistent ids, as in the zip format:
NOTE [Reading torch files]) and the list of storage keys; then per key the storage's element
count as 8 little-endian bytes and its raw elements. Every pickle goes through the same
restricted unpickler as the zip format, read from a window of at most ``MAX_PICKLE_BYTES`` in
all, so a pickle that claims a huge string costs what the window holds. A storage is allocated
when the object's pickle declares it, only while the storages declared so far fit in the file;
its bytes are read into it once the pickles end, after its count matched the declared one.
"""

from __future__ import annotations

import io

import numpy as np

from ._checkpoint_read import _read_into
from ._torch_format_read import MAX_PICKLE_BYTES, Storage, _bad, restore, unpickle

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


class _Window:
    """At most ``left`` more bytes of ``f``: what a pickle may read."""

    def __init__(self, f, left: int) -> None:
        self._f, self.left = f, left

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(self.left if n is None or n < 0 else min(n, self.left))
        self.left -= len(data)
        return data

    def readline(self, n: int = -1) -> bytes:
        data = self._f.readline(self.left if n is None or n < 0 else min(n, self.left))
        self.left -= len(data)
        return data

    def readinto(self, buf) -> int:
        with memoryview(buf) as view:
            got = self._f.readinto(view[: self.left])
        self.left -= got
        return got


def _refuse_storage(*pid):
    import pickle

    raise pickle.UnpicklingError("a storage outside the saved object's pickle")


def load_legacy(f, size: int | None, where: str, map_location):
    """The object a legacy torch checkpoint holds, its tensors as glassgrad Tensors."""
    if size is None:  # a stream: what it delivers is what the file holds
        data = f.read()
        f, size = io.BytesIO(data), len(data)
    window = _Window(f, MAX_PICKLE_BYTES)
    legacy = "legacy torch format: "
    if unpickle(window, _refuse_storage, where) != MAGIC_NUMBER:
        raise _bad(where, "Invalid magic number; corrupt file?", "")
    version = unpickle(window, _refuse_storage, where)
    if version != PROTOCOL_VERSION:
        raise _bad(where, f"Invalid protocol version: {str(version)[:40]}", "")
    info = unpickle(window, _refuse_storage, where)
    if not (isinstance(info, dict) and info.get("little_endian") in (True, False)):
        raise _bad(where, f"system information {str(info)[:80]}", legacy)
    declared: dict[str, Storage] = {}
    claimed = [0]

    def read_storage(kind, key: str, location: str, numel: int) -> Storage:
        if key in declared:
            if declared[key].array.dtype != kind.np:
                raise _bad(where, f"storage {key!r} is declared with two dtypes", legacy)
            return declared[key]
        claimed[0] += 8 + numel * kind.np.itemsize
        if claimed[0] > size:
            raise _bad(where, f"its storages claim {claimed[0]:,} bytes, more than the "
                              f"{size:,}-byte file holds", legacy)
        storage = declared[key] = Storage(np.empty(numel, kind.np), location)
        return restore(storage, location, map_location, where)

    obj = unpickle(window, read_storage, where)
    keys = unpickle(window, _refuse_storage, where)
    if not (isinstance(keys, list) and sorted(keys) == sorted(declared)):
        raise _bad(where, f"the storage keys {str(keys)[:80]} are not those the object "
                          "declares", legacy)
    for key in keys:
        arr = declared[key].array
        count = f.read(8)
        if len(count) < 8 or int.from_bytes(count, "little") != arr.size:
            raise _bad(where, f"storage {key!r} holds {int.from_bytes(count, 'little')} "
                              f"elements where {arr.size} are declared", legacy)
        if _read_into(f, memoryview(arr.view(np.uint8))) < arr.nbytes:
            raise _bad(where, f"the file ends inside storage {key!r}", legacy)
        if not info["little_endian"]:
            arr.byteswap(inplace=True)
    return obj
