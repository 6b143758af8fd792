"""The recorded graph: ``Node`` (a tensor's ``grad_fn``), ``SavedTensor``, ``AccumulateGrad``, hooks.

NOTE [Saved outputs]: a node that saves its own output must not hold that output Tensor (the output
holds the node as ``grad_fn``: a cycle that would keep every graph alive until the cyclic GC runs).
It keeps a detached alias sharing the buffer and version counter, and re-attaches itself as
``grad_fn`` when unpacked, so double backward still differentiates through the output.
"""

from __future__ import annotations

import itertools
import sys
import weakref

from .. import dtypes

_sequence = itertools.count()


class _Hooks:
    """Process-wide switches read on the hot path (one attribute test each when off)."""

    saved_tensor_hooks: list = []  # stack of (pack, unpack) from autograd.graph.saved_tensors_hooks
    record_source = False  # glass box: remember the user line that created each node


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters (``torch.utils.hooks``)."""

    __slots__ = ("_store", "_key")
    _ids = itertools.count()

    def __init__(self, store: dict):
        self._store = store
        self._key = next(RemovableHandle._ids)

    @property
    def id(self) -> int:
        return self._key

    def remove(self) -> None:
        self._store.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Node:
    """A recorded operation, seen from backward: ``y.grad_fn`` (``torch.autograd.graph.Node``).

    ``name()`` is PyTorch's (``MulBackward0``); ``next_functions`` holds one ``(node, output_nr)``
    edge per input (``None`` where the input needs no gradient). Leaves appear as ``AccumulateGrad``
    nodes whose ``variable`` is the leaf tensor.
    """

    __slots__ = (
        "next_functions", "_saved", "_attrs", "_seq", "_freed", "_in_meta", "_pre_hooks",
        "_post_hooks", "_tensor_hooks", "_retain", "_metadata", "source", "__weakref__",
    )
    _prim = None  # the Primitive whose backward this node runs (class attribute per subclass)
    _n_outputs = 1

    def __init__(self, next_functions, saved, attrs, in_meta):
        self.next_functions = next_functions
        self._saved = saved
        self._attrs = attrs
        self._in_meta = in_meta
        self._seq = next(_sequence)
        self._freed = False
        self._pre_hooks = None
        self._post_hooks = None
        self._tensor_hooks = None
        self._retain = None
        self._metadata = None
        self.source = None

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def saved_tensors(self) -> tuple:
        """The tensors saved for backward, unpacked (raises once they were freed)."""
        return tuple(self._unpack_saved())

    def _unpack_saved(self):
        if self._freed:
            raise RuntimeError(_second_time_message(self))
        return [s.unpack(self) if type(s) is SavedTensor else s for s in self._saved]

    def _run_backward(self, grads):
        """Compute gradients for the inputs from the gradients of the outputs (engine entry)."""
        prim = self._prim
        saved = self._unpack_saved() if self._saved else ()
        attrs = self._attrs
        if prim.wants_needs_input_grad:
            attrs = dict(attrs, needs_input_grad=tuple(e is not None for e in self.next_functions))
        out = prim.backward(grads[0], *saved, **attrs) if attrs else prim.backward(grads[0], *saved)
        return out

    def _release(self) -> None:
        if self._saved:
            self._saved = None
            self._freed = True

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after this node runs; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle

    def _add_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        store = self._tensor_hooks.setdefault(output_nr, {})
        handle = RemovableHandle(store)
        store[handle.id] = fn
        return handle

    def __call__(self, *grads):
        out = self._run_backward(list(grads))
        return out[0] if len(out) == 1 else out


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds incoming gradients into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        Node.__init__(self, (), None, None, None)
        self._seq = sys.maxsize  # NOTE: a ready leaf accumulates first, as in PyTorch
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"


class SavedTensor:
    """One tensor saved for backward, with the version it had when saved.

    Unpacking checks the version (PyTorch's in-place error) and applies pack/unpack hooks.
    """

    __slots__ = ("_tensor", "_version", "_is_output", "_unpack_hook", "_packed")

    def __init__(self, tensor, is_output: bool):
        self._version = tensor._vc[0]
        self._is_output = is_output
        hooks = _Hooks.saved_tensor_hooks
        if hooks:
            pack, unpack = hooks[-1]
            self._packed = pack(tensor)
            self._unpack_hook = unpack
            self._tensor = None
            return
        self._unpack_hook = None
        self._packed = None
        # NOTE [Saved outputs]
        self._tensor = tensor._alias() if is_output else tensor

    @property
    def tensor(self):
        return self._tensor

    def unpack(self, node):
        if self._unpack_hook is not None:
            out = self._unpack_hook(self._packed)
            if self._is_output and out.grad_fn is None and out.requires_grad is False:
                out = out._alias()
                out._requires_grad = True
                out.grad_fn = node
            return out
        t = self._tensor
        if t._vc[0] != self._version:
            raise RuntimeError(_inplace_message(t, self._version, node if self._is_output else None))
        if self._is_output:
            out = t._alias()
            out._requires_grad = True
            out.grad_fn = node
            return out
        return t


def _inplace_message(t, saved_version: int, producer) -> str:
    producer = producer if producer is not None else t.grad_fn
    where = f", which is output 0 of {producer.name()}," if producer is not None else ""
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{dtypes.type_name(t.dtype)} {list(t.shape)}]{where} is at version "
        f"{t._vc[0]}; expected version {saved_version} instead. Hint: the backtrace further "
        "above shows the operation that failed to compute its gradient. The variable in question "
        "was changed in there or anywhere later. Good luck!\n"
        "glassgrad: a tensor was saved for backward and then changed in place "
        f"({t._vc[0] - saved_version} in-place write(s) since). Use .clone() before the in-place "
        "op, or make it out of place (x = x * 2 instead of x *= 2). An optimizer.step() between a "
        "forward and its backward is the usual cause in GAN loops: run every backward that uses "
        "the forward first, then step."
    )


def _second_time_message(node) -> str:
    return (
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward.\n"
        f"glassgrad: {node.name()}"
        + (f" (created at {node.source})" if node.source else "")
        + " already released its saved tensors in an earlier backward. If two losses share this "
        "graph (a GAN's discriminator and generator losses), pass retain_graph=True to the first "
        "backward only; or detach the shared tensor (fake.detach()) for the loss that must not "
        "reach it; or recompute the forward."
    )


def grad_accumulator(tensor) -> AccumulateGrad:
    """The one AccumulateGrad node of a leaf, cached weakly as PyTorch does."""
    ref = tensor._grad_acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._grad_acc = weakref.ref(acc)
    return acc
