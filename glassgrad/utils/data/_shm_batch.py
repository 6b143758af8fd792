"""A collated batch across a process boundary with its tensors' bytes in shared memory.

NOTE [Batches through shared memory]: a worker pickles the batch with every plain ``Tensor``
replaced by a reference to a slot in one shared-memory file per batch (``/dev/shm`` where it
exists); only that small pickle goes through the result queue. The main process maps the file,
unlinks it at once, and builds each tensor as a NumPy view of the mapping, so the bytes are
written once (by the worker) and never copied through a pipe; the mapping lives as long as the
tensors viewing it. Other objects (NumPy arrays, strings, numbers) are pickled as usual. A tensor
that requires grad and is not a leaf cannot cross (torch refuses too); a leaf keeps its
``requires_grad``. A batch that is never decoded (the iterator shut down first) is released with
``discard``.
"""

from __future__ import annotations

import io
import itertools
import mmap
import os
import pickle
import tempfile

import numpy as np

from ...tensor import Tensor

_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
_counter = itertools.count()
_ALIGN = 64  # every slot starts on a cache line, so each view is aligned for any dtype

_NON_LEAF = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
    "support crossing process boundaries.  If you just want to transfer the data, call detach() "
    "on the tensor before serializing (e.g., putting it on the queue)."
)


class _Pickler(pickle.Pickler):
    def __init__(self, file) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.arrays: list[np.ndarray] = []

    def persistent_id(self, obj):
        if type(obj) is not Tensor or type(obj._array) is not np.ndarray:
            return None
        if obj.grad_fn is not None and obj._requires_grad:
            raise RuntimeError(_NON_LEAF + "\nglassgrad: detach() the tensor in the dataset "
                               "or the collate_fn.")
        self.arrays.append(obj._array)
        return len(self.arrays) - 1, obj._requires_grad


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, tensors) -> None:
        super().__init__(file)
        self.tensors = tensors

    def persistent_load(self, pid):
        slot, requires_grad = pid
        t = Tensor._make(self.tensors[slot])
        t._requires_grad = requires_grad
        return t


def encode_batch(data) -> tuple:
    """``(path or None, layout, pickle bytes)``: the batch with its tensors' bytes written to a
    new shared-memory file at ``path``."""
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(data)
    layout, offset = [], 0
    for arr in pickler.arrays:
        layout.append((offset, arr.dtype, arr.shape))
        offset += -(-arr.nbytes // _ALIGN) * _ALIGN
    path = None
    if offset:
        path = os.path.join(_DIR, f"glassgrad_batch_{os.getpid()}_{next(_counter)}")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, offset)
            with mmap.mmap(fd, offset) as mapping:
                for arr, (start, dtype, shape) in zip(pickler.arrays, layout):
                    view = np.ndarray(shape, dtype, buffer=mapping, offset=start)
                    view[...] = arr
                    del view
        except BaseException:
            os.unlink(path)
            raise
        finally:
            os.close(fd)
    return path, layout, buf.getvalue()


def decode_batch(payload):
    """The batch ``encode_batch`` wrote, its tensors viewing the mapped file (now unlinked)."""
    path, layout, raw = payload
    tensors = [np.empty(shape, dtype) for _, dtype, shape in layout]
    if path is not None:
        fd = os.open(path, os.O_RDWR)
        try:
            os.unlink(path)
            size = os.fstat(fd).st_size
            mapping = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        tensors = [np.ndarray(shape, dtype, buffer=mapping, offset=start)
                   for start, dtype, shape in layout]
    return _Unpickler(io.BytesIO(raw), tensors).load()


def discard(payload) -> None:
    """Release a batch that will never be decoded."""
    path = payload[0] if isinstance(payload, tuple) and len(payload) == 3 else None
    if isinstance(path, str):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
