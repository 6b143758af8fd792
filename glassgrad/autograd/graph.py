"""The recorded graph: ``Node`` (a tensor's ``grad_fn``), ``SavedTensor``, ``AccumulateGrad``, hooks.

NOTE [Saved outputs]: a node that saves its own output must not hold that output Tensor (the output
holds the node as ``grad_fn``: a cycle that would keep every graph alive until the cyclic GC runs).
It keeps the output's array and version counter (no Tensor: one object less per op), and unpacks
them as a Tensor with itself as ``grad_fn``, so double backward still differentiates through the
output; a first-order backward on arrays (engine_arrays.py) reads the array itself.
"""

from __future__ import annotations

import itertools
import sys
import weakref
from types import FunctionType
from typing import ClassVar

from numpy import dtype as _np_dtype
from numpy import ndarray as _ndarray

from .grad_mode import _state

_sequence = itertools.count()
# a node's _in_meta entry for a 0-d float32 / float64 input, one object each: the fast path
# records these, and array backward knows a matching NumPy scalar gradient by identity
ZERO_D_META = (((), _np_dtype("float32")), ((), _np_dtype("float64")))
_make_tensor = None  # Tensor._make, bound by tensor.py (the graph never imports the tensor module)


def own_code(fn):
    """``fn`` with a code object of its own (same closure, globals and defaults).

    NOTE [Own code]: CPython 3.11 specialises attribute access per code object and per type. A
    function shared by every op (``Node.__init__``, a fast-path closure made per primitive) sees
    every op's node class at one site and falls back to the generic lookup (~35 ns an access);
    a copy per primitive or node class sees one class and keeps the specialised form.
    """
    return FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__,
                        fn.__closure__)


class _HooksMeta(type):
    """Keeps ``_Hooks.any_on`` true exactly while a switch that recording must see is on: every
    assignment to a switch recomputes it (the stack of saved-tensor hooks is reassigned, never
    mutated, for that reason); ``watch_ops`` likewise, while diagnostics or a tracer look at ops
    that record nothing."""

    def __setattr__(cls, name, value):
        super().__setattr__(name, value)
        if name in ("saved_tensor_hooks", "record_source", "grad_consts", "trace", "profiling"):
            super().__setattr__("watch_ops", bool(cls.grad_consts or cls.trace is not None))
            super().__setattr__("any_on", bool(cls.saved_tensor_hooks or cls.record_source
                                               or cls.watch_ops or cls.profiling))


class _Hooks(metaclass=_HooksMeta):
    """Process-wide switches read on the hot path (one attribute test each when off)."""
    saved_tensor_hooks: ClassVar[tuple] = ()  # (pack, unpack) stack from saved_tensors_hooks
    record_source = False  # glass box: remember the user line that created each node
    # NOTE [Diagnostics] in diagnostics.py: nonzero only while something there is being watched
    grad_consts = 0  # live tensors marked as autograd.grad results taken without create_graph
    diagnose_backward = 0  # live retained graphs and nodes that read such constants
    trace = None  # NOTE [Tracing ops] (onnx/tracer.py): trace(cls, result, inputs, attrs)
    watch_ops = False  # grad_consts or trace: ops that record nothing look at their inputs
    profiling = False  # NOTE [Profiling] in profiler.py: ops' forwards are wrapped and timed
    any_on = False  # saved_tensor_hooks, record_source, watch_ops, profiling: the fast path's test
    forward_ad = None  # NOTE [Forward AD] in forward_ad.py: the op hook while a dual level is open


class _Anomaly:
    """Anomaly detection switches (``set_detect_anomaly``); the engine tests ``enabled``."""

    enabled = False
    check_nan = True


class InferenceVersion(list):
    """The version counter of inference tensors. Its type is the "made under inference_mode" flag:
    marking a tensor is one store, and views and ``detach()`` share it. PyTorch's inference tensors
    track no version, so all of them share the one instance ``INFERENCE_VERSION``."""

    __slots__ = ()


INFERENCE_VERSION = InferenceVersion([0])


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters (``torch.utils.hooks``)."""

    __slots__ = ("_key", "_store")
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


# the nodes the running backward executes when it was given inputs (autograd.grad), else None;
# engine.run sets it for its duration (and restores it: backward may run inside backward)
_NEEDED: list = [None]


class Node:
    """A recorded operation, seen from backward: ``y.grad_fn`` (``torch.autograd.graph.Node``).

    ``name()`` is PyTorch's (``MulBackward0``); ``next_functions`` holds one ``(node, output_nr)``
    edge per input (``None`` where the input needs no gradient). Leaves appear as ``AccumulateGrad``
    nodes whose ``variable`` is the leaf tensor.
    """

    # NOTE [Node fields]: every node sets the slots; the fields below them are rarely anything but
    # their class default (hooks, retain_grad, metadata, diagnostics), so a node made on the hot
    # path does not store them and the first one set lands in the instance __dict__. (A node's
    # class is its op's, so attribute sites that see many ops run CPython's unspecialised
    # lookup, ~35 ns per access: each store skipped is worth it.)
    __slots__ = ("__dict__", "__weakref__", "_attrs", "_freed", "_in_meta", "_saved", "_seq",
                 "next_functions")
    _pre_hooks = None  # {handle id: fn(grad_outputs)}
    _post_hooks = None  # {handle id: fn(grad_inputs, grad_outputs)}
    _tensor_hooks = None  # {output_nr: {handle id: fn(grad)}}: the output tensors' hooks
    _retain = None  # {output_nr: tensor}: outputs that retain_grad()
    _metadata = None
    _retained = None  # NOTE [Diagnostics]: the retain_graph=True backward that kept it
    source = None  # the user's line that made it (when anomaly mode records lines)
    _hooked = False  # True once any of the four hook/retain fields above was set: one test in backward
    _prim = None  # the Primitive whose backward this node runs (class attribute per subclass)
    _n_outputs = 1
    _frees_attrs = False  # freed by backward even with no saved tensors (Primitive.frees_attrs)
    _np = None  # NOTE [Array backward] in engine_arrays.py: the primitive's backward_np, if any
    _np_needs = False  # _np takes needs_input_grad=
    _np_simple = False  # _np takes (grad, one saved value or none, **attrs): no needs, one output,
    # at most one saved tensor
    # NOTE [Simple nodes] in engine_arrays.py: (_np, _frees_attrs) for a _np_simple class, None
    # otherwise and on any node with a hook or retain_grad (set with _hooked)
    _np_fast = None

    def __init__(self, next_functions, saved, attrs, in_meta):
        self.next_functions = next_functions
        self._saved = saved
        self._attrs = attrs
        self._in_meta = in_meta
        self._seq = next(_sequence)
        self._freed = False

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    def __dir__(self):
        # the class's SavedAttribute names cover every node of the op: list only this node's
        own = {n for n in super().__dir__() if not n.startswith("_saved_")}
        return sorted(own | {"_saved_" + k for k in _saved_keys(self)})

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    # NOTE: no ``saved_tensors`` here: torch's built-in nodes have none (only a custom
    # Function's node, function.py), and tools test for it (torchviz draws what a node with
    # ``saved_tensors`` holds); built-in nodes show theirs as ``_saved_<name>``, as torch's do
    def _unpack_saved(self):
        if self._freed:
            raise RuntimeError(_second_time_message(self))
        return [s.unpack(self) if type(s) is SavedTensor else s for s in self._saved]

    def _run_backward(self, grads):
        """Compute gradients for the inputs from the gradients of the outputs (engine entry)."""
        # a pre-hook that returned only None gradients: the rule does not run (PyTorch)
        if grads[0] is None and all(g is None for g in grads):
            return [None] * len(self.next_functions)
        prim = self._prim
        saved = self._saved
        if saved:
            if self._freed:
                raise RuntimeError(_second_time_message(self))
            if _state.enabled:
                saved = [s.unpack(self) if type(s) is SavedTensor else s for s in saved]
            elif len(saved) == 1 and type(saved[0]) is SavedTensor:
                saved = (saved[0]._unpack_plain(self),)
            else:  # NOTE: first order records nothing, so saved outputs need no history
                saved = [s._unpack_plain(self) if type(s) is SavedTensor else s for s in saved]
        else:
            saved = ()
        grad = tuple(grads) if prim.multi_output else grads[0]
        if prim.wants_needs_input_grad:
            # an edge is (node, nr); (None, 0) marks an input that needs no gradient, and so does
            # one that leads to none of autograd.grad's inputs (_NEEDED, set by the engine)
            needed = _NEEDED[0]
            if needed is None:
                needs = tuple([e[0] is not None for e in self.next_functions])
            else:
                needs = tuple([e[0] is not None and e[0] in needed for e in self.next_functions])
            return prim.backward(grad, *saved, needs_input_grad=needs, **self._attrs)
        return prim.backward(grad, *saved, **self._attrs)

    def _release(self, by=True) -> None:
        """Drop the saved tensors; ``by`` (the freeing ``BackwardCall``) is what ``_freed`` keeps."""
        if self._saved or self._frees_attrs:
            self._saved = None
            self._freed = by

    def _retain_grad_of(self, tensor, output_nr: int) -> None:
        """Set ``tensor.grad`` from this node's ``output_nr`` gradient in backward."""
        if self._retain is None:
            self._retain = {}
            self._mark_hooked()
        self._retain[output_nr] = weakref.ref(tensor)

    def _mark_hooked(self) -> None:
        # NOTE [Simple nodes] in engine_arrays.py: backward's one test must see the hook
        self._hooked = True
        self._np_fast = None

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after this node runs; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
            self._mark_hooked()
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
            self._mark_hooked()
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle

    def _add_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
            self._mark_hooked()
        store = self._tensor_hooks.setdefault(output_nr, {})
        handle = RemovableHandle(store)
        store[handle.id] = fn
        return handle

    def __call__(self, *grads):
        if len(grads) != self._n_outputs:  # a node takes one gradient per forward output
            raise TypeError(f"expected {self._n_outputs} arguments, got {len(grads)} instead\n"
                            f"glassgrad: {self.name()} takes one gradient per output of its op.")
        out = self._run_backward(list(grads))
        return out[0] if len(out) == 1 else out


def move_retain(tensor, new, new_nr: int = 0) -> None:
    """``tensor`` (which retains grad) gets ``new`` as its grad_fn from an in-place write:
    retain_grad follows it, as PyTorch moves its retains-grad hook (tensor hooks stay with the
    old node: they see the gradient of the value they were registered on)."""
    old = tensor.grad_fn
    if old is not None and old._retain is not None:
        ref = old._retain.get(tensor._output_nr)
        if ref is not None and ref() is tensor:
            del old._retain[tensor._output_nr]
    new._retain_grad_of(tensor, new_nr)


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

    # _tensor: the saved input Tensor (None for an output: NOTE [Saved outputs] keeps its _array
    # and version counter _vc instead)
    __slots__ = ("_array", "_is_output", "_output_nr", "_packed", "_tensor", "_unpack_hook", "_vc",
                 "_version")

    def __init__(self, tensor, is_output: bool, output_nr: int = 0):
        if tensor._vc.__class__ is InferenceVersion:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors created "
                "in inference mode in computation tracked by autograd. To work around this, you "
                "can make a clone to get a normal tensor and use it in autograd, or use "
                "`torch.no_grad()` instead of `torch.inference_mode()`.\n"
                f"glassgrad: the tensor of shape {list(tensor.shape)} was made under "
                "inference_mode(); clone() it outside inference_mode, or make it under no_grad()."
            )
        vc = tensor._vc
        self._version = vc[0]
        if len(vc) == 1:
            vc.append(None)  # NOTE [Diagnostics]: watched; in-place writes now record their line
        self._is_output = is_output
        self._output_nr = output_nr
        hooks = _Hooks.saved_tensor_hooks
        if hooks:
            pack, unpack = hooks[-1]
            self._packed = _without_grad(pack, tensor)
            self._unpack_hook = unpack
            # the history to re-attach on unpack, so double backward still reaches the input
            self._tensor = None
            if not is_output and tensor._requires_grad:
                self._tensor = (tensor.grad_fn, tensor._output_nr,
                                None if tensor.grad_fn is not None else grad_accumulator(tensor))
            return
        self._unpack_hook = None
        self._packed = None
        if is_output:  # NOTE [Saved outputs]
            self._tensor = None
            self._array = tensor._array
            self._vc = vc
        else:
            self._tensor = tensor

    @property
    def tensor(self):
        """The saved Tensor as stored (an output comes back without history)."""
        if self._tensor is None and self._unpack_hook is None:
            return self._output_alias()
        return self._tensor

    def _peek(self):
        """The saved array, unchecked (memory accounting and drawing; no hooks ran)."""
        t = self._tensor
        return self._array if t is None else t._array

    def _output_alias(self):
        """The saved output as a Tensor without history (same buffer and version counter)."""
        out = _make_tensor(self._array)
        out._vc = self._vc
        return out

    def unpack(self, node):
        if self._unpack_hook is not None:
            out = _without_grad(self._unpack_hook, self._packed)
            if out.grad_fn is None and not out._requires_grad:
                if self._is_output:
                    out = out._alias()
                    out._requires_grad = True
                    out.grad_fn = node
                    out._output_nr = self._output_nr
                elif self._tensor is not None:
                    fn, nr, acc = self._tensor
                    out = out._alias()
                    out._requires_grad = True
                    out.grad_fn = fn
                    out._output_nr = nr
                    if acc is not None:
                        out._grad_acc = weakref.ref(acc)
            return out
        t = self._tensor
        if t is None:  # NOTE [Saved outputs]
            t = self._output_alias()
            if self._vc[0] != self._version and not _diagnostics.accept_data_writes(t, self, node):
                raise RuntimeError(_inplace_message(t, self._version, node, True,
                                                    self._output_nr))
            t._requires_grad = True
            t.grad_fn = node
            t._output_nr = self._output_nr
            return t
        if t._vc[0] != self._version and not _diagnostics.accept_data_writes(t, self, node):
            raise RuntimeError(_inplace_message(t, self._version, node, self._is_output,
                                                self._output_nr))
        return t

    def _unpack_array(self, node):
        """The saved array for a first-order backward on arrays (NOTE [Array backward]); a 0-d one
        as a NumPy scalar (the same value; scalar arithmetic is 5x faster)."""
        if self._unpack_hook is None:
            t = self._tensor
            if t is None:
                if self._vc[0] == self._version:
                    a = self._array
                    return a[()] if type(a) is _ndarray and not a.shape else a
            elif t._vc[0] == self._version:
                a = t._array
                return a[()] if type(a) is _ndarray and not a.shape else a
        a = self._unpack_plain(node)._array
        return a[()] if type(a) is _ndarray and not a.shape else a

    def _unpack_plain(self, node):
        """``unpack`` for a backward that records nothing (first order): a saved output comes
        back as the stored alias, without a fresh history-carrying alias per use."""
        if self._unpack_hook is not None or not self._is_output:
            return self.unpack(node)
        t = self._output_alias()
        if self._vc[0] != self._version and not _diagnostics.accept_data_writes(t, self, node):
            raise RuntimeError(_inplace_message(t, self._version, node, True, self._output_nr))
        return t


def _without_grad(hook, value):
    """Saved-tensor hooks run with grad mode off, as in PyTorch (their ops record nothing)."""
    prev = _state.enabled
    _state.enabled = False
    try:
        return hook(value)
    finally:
        _state.enabled = prev


def _inplace_message(*args) -> str:  # (diagnostics imports this module: bound at call time)
    return _diagnostics.inplace_message(*args)


def _saved_keys(node) -> list:
    """The ``_saved_*`` names ``node`` answers (PyTorch's ``grad_fn._saved_self`` & co.): its
    attributes, its saved inputs under glassgrad's names and PyTorch's (``self`` for input 0,
    ``other`` for input 1), and ``result`` for a saved output."""
    prim = node._prim
    if prim is None:
        return []
    return list(node._attrs or ()) + _saved_value_keys(prim, listed=True)


def _saved_value_keys(prim, listed: bool = False) -> list:
    """The ``_saved_*`` names of ``prim``'s saved inputs and outputs, in ``saves`` order.
    ``listed``: only the names ``dir()`` shows, PyTorch's where it has one (input 0 and 1 are
    ``self``/``other`` there; glassgrad's own name still answers), so tools that walk ``dir()``
    (torchviz's ``show_saved``) see each saved tensor once."""
    keys = []
    names = prim._input_names
    for i in prim._save_idx:
        if i < 0:
            keys.append("result" if i == -1 else f"result{-1 - i}")
        else:
            if not (listed and i < 2):
                keys.append(names[i])
            if i < 2:
                keys.append(("self", "other")[i])
    return keys


def _saved_attribute(node, key):
    """(found, value) for ``node._saved_<key>``; a freed saved tensor raises PyTorch's error."""
    prim = node._prim
    attrs = node._attrs or {}
    if key in attrs:
        value = attrs[key]
        # NOTE [Freed attributes] in ops/primitive.py: an index kept for backward went with it
        if node._freed and node._frees_attrs and (type(value) is _ndarray or type(value) is tuple
                                                  and any(type(v) is _ndarray for v in value)):
            raise RuntimeError(_second_time_message(node))
        return True, value
    names = prim._input_names
    for pos, i in enumerate(prim._save_idx):
        if i < 0:
            match = key == ("result" if i == -1 else f"result{-1 - i}")
        else:
            match = key == names[i] or (i < 2 and key == ("self", "other")[i])
        if match:
            if node._freed or node._saved is None:
                raise RuntimeError(_second_time_message(node))
            s = node._saved[pos]
            return True, s.unpack(node) if type(s) is SavedTensor else s
    return False, None


class SavedAttribute:
    """``node._saved_<key>`` (PyTorch's ``grad_fn._saved_self`` & co.), a descriptor that each
    primitive's node class carries for the names it can answer (``saved_attribute_names``).

    NOTE: a ``__getattr__`` on Node would do the same with less code, but CPython 3.11 then
    stops specialising every attribute read on every node (~20 ns each, ~0.5 us per node in
    backward); descriptors leave the node classes' attribute access generic and fast.
    """

    __slots__ = ("key",)

    def __init__(self, key: str):
        self.key = key

    def __get__(self, node, owner=None):
        if node is None:
            return self
        found, value = _saved_attribute(node, self.key)
        if found:
            return value
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '_saved_{self.key}'")


def saved_attribute_names(prim, attr_names) -> set:
    """Every ``<key>`` of ``_saved_<key>`` that nodes of ``prim`` may answer: its attributes
    (``attr_names``: its forward's parameter names, which every attribute is passed as) and its
    saved inputs/outputs."""
    return set(attr_names) | set(_saved_value_keys(prim))


def no_accumulator() -> None:
    """The ``_grad_acc`` of a view made with grad mode off from a tensor that requires grad: it
    requires grad (PyTorch's view requires grad through its base) yet, having no grad_fn and no
    requires_grad of its own, no gradient reaches it (its edge is PyTorch's (None, 0))."""


def grad_accumulator(tensor) -> AccumulateGrad:
    """The one AccumulateGrad node of a leaf, cached weakly as PyTorch does."""
    ref = tensor._grad_acc
    acc = ref() if ref is not None else None
    if acc is None:
        if ref is no_accumulator:  # a no_grad view: requires grad through its base, gets none
            return None
        acc = AccumulateGrad(tensor)
        tensor._grad_acc = weakref.ref(acc)
    return acc


_PACKAGE_DIR = __file__.rsplit("/autograd/", 1)[0]


def _user_frame() -> str:
    """file:line of the first frame outside glassgrad (the user's line that made a node)."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
    if f is None:
        return "<unknown>"
    return f"{f.f_code.co_filename}:{f.f_lineno}"


from . import diagnostics as _diagnostics  # it reads the classes above


def _second_time_message(node) -> str:  # (diagnostics imports this module: bound at call time)
    return _diagnostics.second_time_message(node)


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` runs when an op saves a tensor for backward and
    ``unpack_hook(packed)`` when backward needs it (``torch.autograd.graph.saved_tensors_hooks``).

    Example: keep saved activations as float16 with ``pack=lambda t: t.half()``.
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _Hooks.saved_tensor_hooks = (*_Hooks.saved_tensor_hooks, (self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _Hooks.saved_tensor_hooks = _Hooks.saved_tensor_hooks[:-1]


# PyTorch's public helpers and the ledger; graph_hooks.saved_tensors_hooks subclasses the one above
# (it adds disable_saved_tensors_hooks' check)
from .graph_hooks import (  # noqa: F401,F811
    GradientEdge,
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    get_gradient_edge,
    increment_version,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
)
from .graph_inspect import format_summary, summary, to_dict  # noqa: F401
# issue 19, lane whynone
from .graph_diff import diff, GraphDiff  # noqa: F401,E402
from .why_alive import why_alive  # noqa: F401,E402
