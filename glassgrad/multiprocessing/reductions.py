"""Tensors and storages pickled through shared memory between processes
(``torch.multiprocessing.reductions``).

``init_reductions()`` (run when glassgrad is imported) registers reducers with
``multiprocessing.reduction.ForkingPickler``, the pickler that every ``multiprocessing`` channel
uses: ``Queue``/``SimpleQueue``/``Pipe`` connections, ``Pool`` tasks and results, and the
arguments of a ``Process`` started with ``spawn`` or ``forkserver``. Any of them then sends a
glassgrad ``Tensor``, ``nn.Parameter``, ``nn.Buffer``, ``UntypedStorage`` or ``TypedStorage`` as
a handle to shared memory, not as bytes: the receiver's tensor maps the same memory, so an
in-place update in either process is seen by the other (Hogwild). Under ``fork`` the arguments of
a ``Process`` are inherited, not pickled: tensors moved with ``share_memory_()`` (or
``Module.share_memory()``) before the fork are shared, others are copied on write as usual.

How to use it (a DataLoader worker, or any producer)::

    import multiprocessing as mp
    import glassgrad                        # registers the reducers
    q = mp.get_context("spawn").Queue()     # or glassgrad.multiprocessing.Queue()
    q.put(batch)                            # in the worker: batch's storage moves to shared memory
    batch = q.get()                         # in the parent: a tensor over that same memory

To pickle outside a channel, ``ForkingPickler.dumps(obj)`` / ``pickle.loads`` in the other process.

Rules, as torch's:

- A tensor whose storage is private is moved into a new shared segment first, in place
  (``share_memory_()``: the sender keeps using the shared copy; a view moves with its base).
  When other views, NumPy arrays or saved tensors also see that storage glassgrad cannot move it
  under them, so it sends a shared copy instead and the sender's tensor stays private (torch
  moves the storage under all of them; NOTE [Shared segments] in _segment.py).
- Sizes, strides, storage offset, dtype and ``requires_grad`` travel; ``.grad``, hooks, the
  version counter and the graph do not. A leaf that requires grad (a Parameter) arrives as a
  leaf that requires grad; a non-leaf that requires grad raises RuntimeError ("Cowardly refusing
  to serialize non-leaf tensor which requires_grad"): call ``.detach()`` first.
- ``glassgrad.multiprocessing.set_sharing_strategy``: ``file_descriptor`` (default) passes a file
  descriptor (multiprocessing's ``DupFd``); ``file_system`` passes a /dev/shm name. Either way no
  segment outlives the processes that use it (no resource_tracker warning at exit).
- A process must stay alive until its receivers have unpickled what it sent (as in torch).
"""

from __future__ import annotations

from multiprocessing import context as _mp_context
from multiprocessing import reduction as _mp_reduction

import numpy as np

from .. import _storage
from ..tensor import Tensor
from . import _segment, _strategy

__all__ = ["init_reductions", "reduce_tensor", "reduce_storage", "rebuild_tensor"]

_NON_LEAF = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
    "support crossing process boundaries.  If you just want to transfer the data, call detach() "
    "on the tensor before serializing (e.g., putting it on the queue).")


def _keep_until_started(seg) -> None:
    # NOTE: while spawn pickles a Process's arguments, DupFd only records the descriptor; it is
    # handed to the child after pickling ends, so a segment made just for this send must outlive
    # the pickler: the Popen object (alive as long as the Process) holds it.
    popen = _mp_context.get_spawning_popen()
    if popen is not None:
        keep = getattr(popen, "_glassgrad_segments", None)
        if keep is None:
            keep = popen._glassgrad_segments = []
        keep.append(seg)


def _shared_array(t: Tensor) -> np.ndarray:
    """``t``'s array over a shared segment: moving its storage there first when it is private."""
    if _segment.segment_of(t._array) is not None:
        return t._array
    if not _segment.is_shared(t) and _segment.move_in_place(t):
        return t._array
    arr = _segment.moved_copy(t._array)  # NOTE [Shared segments]: views see this storage
    _keep_until_started(_segment.segment_of(arr))
    return arr


def _handle(seg) -> tuple:
    """What the receiver needs to map ``seg``: ("name", a fresh /dev/shm name) or ("fd", DupFd)."""
    if seg.name is not None and _strategy.get_sharing_strategy() == "file_system":
        from . import _named

        name = _named.send_name(seg)
        if name is not None:
            return ("name", name, len(seg))
    popen = _mp_context.get_spawning_popen()
    if popen is not None:
        # NOTE: spawn passes each descriptor to the child once (a repeated one is an error of
        # fork_exec): views of one storage in a Process's arguments share one DupFd
        sent = popen.__dict__.setdefault("_glassgrad_fds", {})
        if seg.fd not in sent:
            sent[seg.fd] = _mp_reduction.DupFd(seg.fd)
        return ("fd", sent[seg.fd], len(seg))
    return ("fd", _mp_reduction.DupFd(seg.fd), len(seg))


def _attach(handle) -> _segment._Segment:
    kind, source, nbytes = handle
    if kind == "name":
        from . import _named

        return _named.adopt(source, nbytes)
    return _segment.attach(source.detach(), nbytes)


def reduce_tensor(t: Tensor):
    """The ForkingPickler reducer of a Tensor, Parameter or Buffer (module docstring)."""
    if t._requires_grad and t.grad_fn is not None:
        raise RuntimeError(_NON_LEAF)
    meta = (type(t), t.dtype, tuple(t._array.shape), t._requires_grad, _state(t))
    if _storage.storage_bounds(t._array)[1] == 0:
        return (rebuild_tensor, (meta, None, None))
    arr = _shared_array(t)  # (no local name may hold t._array before: see _sole_user)
    geometry = (_storage.strides(arr), _storage.storage_offset(arr))
    return (rebuild_tensor, (meta, _handle(_segment.segment_of(arr)), geometry))


def _state(t: Tensor):
    cls = type(t)
    if cls is Tensor:
        return None
    extra = dict(getattr(t, "__dict__", {}))
    if hasattr(t, "persistent"):
        extra["persistent"] = t.persistent
    return extra


def rebuild_tensor(meta, handle, geometry) -> Tensor:
    """The receiving side of ``reduce_tensor``: a tensor of the sent class over the segment."""
    cls, dtype, shape, requires_grad, state = meta
    if handle is None:
        arr = np.empty(shape, dtype.np)
    else:
        stride, offset = geometry
        arr = _segment.array_in(_attach(handle), shape, stride, offset, dtype.np)
    t = Tensor._make(arr)
    if cls is Tensor:
        t.requires_grad_(requires_grad)
        return t
    from ..nn._parameter_lazy import Buffer
    from ..nn.parameter import Parameter

    state = dict(state or {})
    if issubclass(cls, Parameter):
        out = cls(t, requires_grad)
    else:
        t.requires_grad_(requires_grad)
        out = cls(t, persistent=state.pop("persistent", True)) if issubclass(cls, Buffer) \
            else cls(t)
    state.pop("persistent", None)
    if state:
        out.__dict__.update(state)
    return out


def reduce_storage(storage):
    """The ForkingPickler reducer of an UntypedStorage or TypedStorage: the receiver's storage
    is a window over the same shared bytes (a private storage is sent as a shared copy)."""
    typed = isinstance(storage, _storage.TypedStorage)
    elems = storage._elems if typed else storage._bytes
    raw = elems.reshape(-1).view(np.uint8) if elems.size else np.empty(0, np.uint8)
    if raw.size == 0:
        return (_rebuild_storage, (None, 0, 0, storage.dtype if typed else None))
    seg = _segment.segment_of(raw)
    offset = _storage.storage_offset(raw)
    if seg is None:
        raw = _segment.moved_copy(raw)
        seg = _segment.segment_of(raw)
        _keep_until_started(seg)
    return (_rebuild_storage, (_handle(seg), offset, raw.size, storage.dtype if typed else None))


def _rebuild_storage(handle, offset, nbytes, dtype):
    if handle is None:
        raw = np.empty(0, np.uint8)
    else:
        raw = _attach(handle).bytes()[offset:offset + nbytes]
    if dtype is None:
        return _storage.UntypedStorage._wrap(raw)
    return _storage.TypedStorage._wrap(raw.view(dtype.np), dtype)


def init_reductions() -> None:
    """Register the reducers with multiprocessing's ForkingPickler
    (``torch.multiprocessing.reductions.init_reductions``); run once at import."""
    from ..nn._parameter_lazy import Buffer
    from ..nn.parameter import Parameter

    for cls in (Tensor, Parameter, Buffer):
        _mp_reduction.ForkingPickler.register(cls, reduce_tensor)
    for cls in (_storage.UntypedStorage, _storage.TypedStorage):
        _mp_reduction.ForkingPickler.register(cls, reduce_storage)

