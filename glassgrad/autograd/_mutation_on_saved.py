"""``torch.autograd.graph.allow_mutation_on_saved_tensors``: saved tensors may be written in place.

NOTE [Copy on write of saved tensors]: as in PyTorch, nothing is copied when a tensor is saved.
The pack hook files the tensor under a handle (the object the graph keeps) and records which
buffer and version it holds; the first in-place write to that buffer at that version copies the
old values (``explain.note_write`` calls ``_before_write`` while a block is active, and every
tensor saved for backward has a watched version counter, so other writes pay nothing). Unpacking
returns the copy when there is one. The context's dictionaries are weak on the handle, so a copy
lives exactly as long as the graph that saved it: ``ctx.cloned`` counts the copies alive.

glassgrad keys a buffer by its version counter, which a base and all its views share, so a write
through any view copies what the graph saved (PyTorch keys by ``data_ptr`` and so sees only views
that start at the base's first element).
"""

from __future__ import annotations

import contextlib
import weakref
from collections import defaultdict


class _Handle:
    """What the graph holds for a saved tensor under the block (PyTorch's is an empty object too)."""

    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block: ``original`` and ``cloned``
    (handle -> tensor, weak on the handle), ``tid_to_weakhandle`` ((tensor, buffer, version) ->
    handle, weak on the handle) and ``sid_to_tid`` ((buffer, version) -> tensor keys)."""

    def __init__(self) -> None:
        self.original: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.cloned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.sid_to_tid: defaultdict = defaultdict(set)
        self.active = True

    def clear(self) -> None:
        self.active = False
        self.original.clear()
        self.cloned.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def pack(self, t) -> _Handle:
        sid = (id(t._vc), t._vc[0])
        tid = (id(t), *sid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = _Handle()
            self.tid_to_weakhandle[tid] = handle
            self.sid_to_tid[sid].add(tid)
        self.original[handle] = t
        return handle

    def unpack(self, handle: _Handle):
        if not self.active:
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in "
                "which the graph was originally recorded.\nglassgrad: run the forward and the "
                "backward inside the same block.")
        found = self.cloned.get(handle)
        return found if found is not None else self.original[handle]

    def before_write(self, t) -> None:
        """Copy what the graph saved from ``t``'s buffer at its current version, once."""
        tids = self.sid_to_tid.get((id(t._vc), t._vc[0]))
        if not tids:
            return
        from ..tensor import Tensor

        for tid in tids:
            handle = self.tid_to_weakhandle.get(tid)
            if handle is None or handle in self.cloned:
                continue
            saved = self.original.pop(handle)
            self.cloned[handle] = Tensor._make(saved._array.copy())


_active: list = [None]


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which tensors saved for backward may be changed in place: backward
    sees the values they had when saved (``torch.autograd.graph.allow_mutation_on_saved_tensors``).
    Yields the block's context (``ctx.cloned``: the copies alive, NOTE [Copy on write of saved
    tensors]). Raises RuntimeError when nested; a backward through the graph after the block
    ended raises AssertionError.

    >>> with glassgrad.autograd.graph.allow_mutation_on_saved_tensors():
    ...     b = a.clone(); out = (b ** 2).sum(); b.sin_(); out.backward()
    """
    from . import explain
    from .graph_hooks import saved_tensors_hooks

    if _active[0] is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _active[0] = _AllowMutationOnSavedContext()
    explain.before_write[0] = ctx.before_write
    try:
        with saved_tensors_hooks(ctx.pack, ctx.unpack):
            yield ctx
    finally:
        explain.before_write[0] = None
        _active[0] = None
        ctx.clear()
