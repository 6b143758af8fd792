"""``Primitive``: an op declared once (forward on arrays, backward on Tensors) and ``apply``, the hot path.

A primitive subclass declares::

    class Exp(Primitive):
        saves = ("result",)              # forward parameter names, or "result" for the output

        @staticmethod
        def forward(xp, x):              # positional = input arrays, keyword-only = attributes
            return xp.exp(x)

        @staticmethod
        def backward(grad, result):      # Tensors in, a tuple of Tensors (or None) out, one per input
            return (grad * result,)

NOTE [Hot path]: ``apply`` runs once per op. Everything that can be known per class is computed in
``__init_subclass__``; per call there is one grad-mode test and, only when recording, the node.
One- and two-input calls are spelled out (no list building: ~0.3 us per op), and so is recording
a one-input op. Measured by ``make bench`` and kept by tests/test_overhead_budget.py.

Multi-output primitives (``multi_output = True``) return a tuple of arrays from forward; ``apply``
returns a tuple of Tensors (one node, ``output_nr`` 0, 1, ...); backward receives the tuple of
output gradients, ``None`` where an output got none; ``saves`` names outputs ``result`` (output
0), ``result1``, ``result2``...
"""

from __future__ import annotations

import inspect

from ..autograd import diagnostics as _diagnostics
from ..autograd import forward_ad as _forward_ad
from ..autograd.grad_mode import _state
from ..autograd.graph import (
    INFERENCE_VERSION,
    Node,
    SavedAttribute,
    SavedTensor,
    _Anomaly,
    _Hooks,
    _user_frame,
    grad_accumulator,
    move_retain,
    own_code,
    saved_attribute_names,
)
from ..backend import xp
from . import _forward_errors, _numpy_warnings, _view_meta
from ._view_meta import CREATION_META

_new = object.__new__

_NO_EDGE = (None, 0)
_NO_ATTRS: dict = {}  # NOTE: shared by attribute-less nodes; nothing writes to a node's _attrs
_make = None  # Tensor._make, bound by tensor.py (ops never import tensor.py: it imports ops)
REGISTRY: dict = {}
_vmap_fallback = None  # glassgrad.func._batched_rules.batched_forward, bound by glassgrad.func


class VmapFallback(RuntimeError):
    """Raised inside ``vmap`` when NumPy code needs a plain array of a batched one: ``apply`` then
    retries the forward (NOTE [Batched arrays] in func/_batched_array.py); any other exception is
    re-raised unchanged."""


class Primitive:
    """Base class of every op with a derivative. See the module docstring for the declaration."""

    saves: tuple = ()
    # NOTE [Saved when needed]: {"x": ("y",)} saves x only when y requires grad (when recorded):
    # PyTorch saves a tensor only for the gradients that will be computed, so `x @ w_frozen`
    # keeps w alone, and an in-place write to x afterwards is no error. A backward rule that
    # declares this receives None for an unsaved value and must only use it for an input's
    # gradient that is needed (needs_input_grad, or an edge that is None)
    saved_for: dict | None = None
    node_name: str | None = None  # default: f"{ClassName}Backward0"
    wants_needs_input_grad = False  # backward(..., needs_input_grad=(bool, ...)) when True
    once_differentiable = False
    multi_output = False  # forward returns a tuple of arrays (see the module docstring)
    # one more edge (None, 0) after the inputs: the Python number operand of `x * 2`, which PyTorch
    # wraps as a tensor, so next_functions reads as PyTorch's
    scalar_edge = False
    # NOTE [Freed attributes]: PyTorch frees every tensor a node saved (SavedVariable) when
    # backward is done with it, so a second backward through the node raises "Trying to backward
    # through the graph a second time" even when what it saved is only an index or a mask (or
    # the wrapped number of `x * 2`); a node that saved none (`x.sum()`, `x + 1`) may run again.
    # glassgrad keeps such arrays as attributes: True makes this node freed the same way; a
    # wrapper clears it on one node with ``keep_attrs`` where PyTorch saves the index only for
    # an input's gradient that nobody needs (index_add, scatter_add with a constant source)
    frees_attrs = False
    node_cls: type = Node
    _save_idx: tuple = ()
    _save_when = None  # per entry of _save_idx: None (always) or the input positions it serves
    _saves_input0 = False
    _save1 = 0
    _input_names: tuple = ()
    scalar_attr = "other"  # the one attribute apply_scalar passes
    zero_d_as_scalar = True  # NOTE [Fast path]: forward may get a 0-d input as a NumPy scalar
    # NOTE [Fast path]: what the fast path may call instead of forward (no xp, no attributes):
    # ufunc(x) of a one-input op whose forward is that NumPy ufunc; scalar_op(x, number) of a
    # number op, for a 0-d x (a NumPy scalar) and a Python float or int: forward's numbers
    # (NEP 50 converts the number as forward's `constant` does; tests/test_fast_path.py checks)
    ufunc = None
    scalar_op = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        params = list(inspect.signature(cls.forward).parameters.values())[1:]
        inputs = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
        cls._input_names = tuple(inputs)  # for Node's _saved_* attributes (graph.py)
        if any(_output_index(p.name) is not None for p in params):
            raise TypeError(f"{cls.__name__}.forward: 'result' is reserved for the output")
        idx = []
        for name in cls.saves:
            k = _output_index(name)
            if k is not None and (k == 0 or cls.multi_output):
                idx.append(-1 - k)
            elif name in inputs:
                idx.append(inputs.index(name))
            else:
                raise TypeError(f"{cls.__name__}.saves names unknown input {name!r}")
        cls._save_idx = tuple(idx)
        cls._saves_input0 = 0 in idx
        if cls.saved_for:  # NOTE [Saved when needed]
            cls._save_when = tuple(
                tuple(inputs.index(n) for n in cls.saved_for[name]) if name in cls.saved_for
                else None for name in cls.saves)
        # _record1's case: 0 saves nothing, 1 the output, 2 the input, 3 anything else
        cls._save1 = {(): 0, (-1,): 1, (0,): 2}.get(cls._save_idx, 3) if not cls.multi_output else 3
        slots = ("_n_outputs",) if cls.multi_output else ()
        ns = {"__slots__": slots, "_prim": cls, "_frees_attrs": cls.frees_attrs,
              # NOTE [Own code]: each node class specialises its own attribute access
              "__init__": own_code(Node.__init__), "_run_backward": own_code(Node._run_backward)}
        # attributes are passed to forward by name, so its parameter names cover them all
        attr_names = [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for key in saved_attribute_names(cls, attr_names):
            ns["_saved_" + key] = SavedAttribute(key)
        # NOTE [Array backward] in autograd/engine_arrays.py: only the class that declares the
        # backward in use may declare its array twin (a subclass's new backward drops it)
        owner = next(c for c in cls.__mro__ if "backward" in c.__dict__)
        if owner.__dict__.get("backward_np") is not None:
            ns["_np"] = staticmethod(cls.backward_np)
            ns["_np_needs"] = cls.wants_needs_input_grad
            ns["_np_simple"] = not (cls.wants_needs_input_grad or cls.multi_output
                                    or len(cls._save_idx) > 1)
            if ns["_np_simple"]:
                ns["_np_fast"] = (ns["_np"].__func__, cls.frees_attrs)
        cls.node_cls = type(cls.node_name or cls.__name__ + "Backward0", (Node,), ns)
        REGISTRY[cls.__name__] = cls

    @staticmethod
    def forward(xp, *arrays, **attrs):
        raise NotImplementedError

    @staticmethod
    def backward(grad, *saved, **attrs):
        raise NotImplementedError

    # NOTE [Array backward] in autograd/engine_arrays.py: optionally, ``backward`` on arrays
    # (same arguments, arrays in and out), run by a first-order backward instead of ``backward``
    backward_np = None

    @classmethod
    def apply(cls, *inputs, **attrs):
        """Run forward on the inputs' arrays; record a node when grad mode is on and an input
        requires grad. Inputs are Tensors of one dtype (callers promote); attributes are plain."""
        try:
            n = len(inputs)
            if n == 1:
                out = cls.forward(xp, inputs[0]._array, **attrs)
            elif n == 2:
                out = cls.forward(xp, inputs[0]._array, inputs[1]._array, **attrs)
            else:
                out = cls.forward(xp, *[t._array for t in inputs], **attrs)
        except Exception as exc:  # noqa: BLE001 - NOTE: NumPy may wrap a VmapFallback
            out = _forward_failed(cls, inputs, attrs, exc)
        if cls.multi_output:
            return _apply_multi(cls, out, inputs, attrs)
        result = _make(out)
        if _state.enabled:
            if n == 1:
                if inputs[0]._requires_grad:
                    _record1(cls, result, inputs[0], attrs)
                elif _Hooks.watch_ops:  # NOTE [Diagnostics] in autograd/diagnostics.py
                    _unrecorded(cls, result, inputs, attrs)
                return result
            for t in inputs:
                if t._requires_grad:
                    _record(cls, result, inputs, attrs)
                    break
            else:
                if _Hooks.watch_ops:  # NOTE [Diagnostics] in autograd/diagnostics.py
                    _unrecorded(cls, result, inputs, attrs)
        elif _state.inference:
            result._vc = INFERENCE_VERSION
        elif _Hooks.forward_ad is not None:  # NOTE [Forward AD] in autograd/forward_ad.py
            _Hooks.forward_ad(cls, result, inputs, attrs)
        return result

    # NOTE [Hot path]: `apply` for one or two inputs and no attributes, spelled out (no argument
    # packing: ~0.3 us less per op); the operators and unary methods of Tensor call these
    @classmethod
    def apply_unary(cls, x):
        try:
            out = cls.forward(xp, x._array)
        except Exception as exc:  # noqa: BLE001 - NOTE: NumPy may wrap a VmapFallback
            out = _forward_failed(cls, (x,), {}, exc)
        result = _make(out)
        if _state.enabled:
            if x._requires_grad:
                _record1(cls, result, x, _NO_ATTRS)
            elif _Hooks.watch_ops:
                _unrecorded(cls, result, (x,), _NO_ATTRS)
        elif _state.inference:
            result._vc = INFERENCE_VERSION
        elif _Hooks.forward_ad is not None:
            _Hooks.forward_ad(cls, result, (x,), _NO_ATTRS)
        return result

    @classmethod
    def apply_binary(cls, x, y):
        try:
            out = cls.forward(xp, x._array, y._array)
        except Exception as exc:  # noqa: BLE001 - NOTE: NumPy may wrap a VmapFallback
            out = _forward_failed(cls, (x, y), {}, exc)
        result = _make(out)
        if _state.enabled:
            if x._requires_grad or y._requires_grad:
                _record(cls, result, (x, y), {})
            elif _Hooks.watch_ops:
                _unrecorded(cls, result, (x, y), _NO_ATTRS)
        elif _state.inference:
            result._vc = INFERENCE_VERSION
        elif _Hooks.forward_ad is not None:
            _Hooks.forward_ad(cls, result, (x, y), _NO_ATTRS)
        return result

    @classmethod
    def apply_scalar(cls, x, other):
        """``apply(x, other=other)`` spelled out, for the Python-number operators (the attribute
        is named by ``scalar_attr``: ``x ** 2`` is ``PowScalar.apply(x, exponent=2)``)."""
        attrs = {cls.scalar_attr: other}
        try:
            out = cls.forward(xp, x._array, **attrs)
        except Exception as exc:  # noqa: BLE001 - NOTE: NumPy may wrap a VmapFallback
            out = _forward_failed(cls, (x,), attrs, exc)
        result = _make(out)
        if _state.enabled:
            if x._requires_grad:
                _record1(cls, result, x, attrs)
            elif _Hooks.watch_ops:
                _unrecorded(cls, result, (x,), attrs)
        elif _state.inference:
            result._vc = INFERENCE_VERSION
        elif _Hooks.forward_ad is not None:
            _Hooks.forward_ad(cls, result, (x,), attrs)
        return result

    @classmethod
    def apply_inplace(cls, target, *others, **attrs):
        """``target.op_(*others)``: write the result into target's buffer, bump its version, and
        rebase target's history onto this op (through its base when target is a view)."""
        inputs = (target, *others)
        recording = _state.enabled and any(t._requires_grad for t in inputs)
        if recording:
            _check_inplace_leaf(target)
            if cls._saves_input0 and (cls._save_when is None
                                      or _needed(cls, inputs, cls._save_idx.index(0))):
                inputs = (target._snapshot(), *others)
        elif _state.enabled and target._base is not None and target._base._requires_grad:
            _check_inplace_leaf(target)  # NOTE: a view of a tensor that requires grad
        tangent = _Hooks.forward_ad and _forward_ad.inplace_begin(cls, target, inputs, attrs)
        try:
            out = cls.forward(xp, *[t._array for t in inputs], **attrs)
        except Exception as exc:  # noqa: BLE001 - NOTE: NumPy may wrap a VmapFallback
            if tangent is not None:
                _forward_ad.inplace_end(target, None)
            out = _forward_failed(cls, inputs, attrs, exc)
        if recording:
            read_at = [t._vc[0] for t in inputs]
        target._write(out, cls.__name__.lower())
        if recording:
            node = _record(cls, target, inputs, attrs)
            # NOTE: inputs are saved as they were read, so `y.mul_(y)` (or an input sharing y's
            # version counter, a view) fails at backward as in PyTorch: the write changed it.
            for saved, i in zip(node._saved, cls._save_idx):
                if i >= 0 and saved is not None:
                    saved._version = read_at[i]
            target._rebase_history()
        elif _Hooks.trace is not None:  # NOTE [Tracing ops] in onnx/tracer.py
            _Hooks.trace(cls, target, inputs, attrs)
        if tangent is not None:  # NOTE [Forward AD] in autograd/forward_ad.py
            _forward_ad.inplace_end(target, tangent)
        return target


def keep_attrs(result):
    """``result``'s node (just recorded) keeps its attributes through backward: NOTE [Freed
    attributes], for the call where PyTorch saves nothing."""
    if result.grad_fn is not None:
        result.grad_fn._frees_attrs = False
    return result


def _unrecorded(cls, result, inputs, attrs) -> None:
    """An op that recorded no node, while ``_Hooks.watch_ops``: diagnostics pass their marks on,
    a tracer sees the op (NOTE [Tracing ops] in onnx/tracer.py)."""
    if _Hooks.grad_consts:  # NOTE [Diagnostics] in autograd/diagnostics.py
        _diagnostics.pass_mark(result, inputs)
    if _Hooks.trace is not None and not cls.multi_output:
        _Hooks.trace(cls, result, inputs, attrs)


def _forward_failed(cls, inputs, attrs, exc):
    """A forward raised: retry it under vmap (NOTE [Batched arrays] in func/_batched_array.py), or
    explain NumPy's error (NOTE [Forward errors] in ops/_forward_errors.py)."""
    arrays = [t._array for t in inputs]
    if isinstance(exc, RuntimeWarning):  # NOTE [NumPy warnings] in ops/_numpy_warnings.py
        return _numpy_warnings.retry_quietly(cls.forward, xp, *arrays, **attrs)
    if _vmap_fallback is not None:
        try:
            return _vmap_fallback(cls, arrays, attrs, exc)
        except Exception as again:
            if again is not exc:
                raise
    raise _forward_errors.explain(cls, arrays, attrs, exc) from None


def _output_index(name: str):
    """``result`` -> 0, ``result1`` -> 1, ...; None for any other name."""
    if name == "result":
        return 0
    if name.startswith("result") and name[6:].isdigit():
        return int(name[6:])
    return None


def _apply_multi(cls, outs, inputs, attrs) -> tuple:
    results = tuple([_make(o) for o in outs])
    if _state.enabled:
        if any(t._requires_grad for t in inputs):
            node = _record(cls, results[0], inputs, attrs, results)
            node._n_outputs = len(results)
            for i, r in enumerate(results):
                r._requires_grad = True
                r.grad_fn = node
                r._output_nr = i
    elif _state.inference:
        for r in results:
            r._vc = INFERENCE_VERSION
    if _Hooks.trace is not None:  # NOTE [Tracing ops] in onnx/tracer.py
        _Hooks.trace(cls, results, inputs, attrs)
    return results


def _record1(cls, result, x, attrs):
    """NOTE [Hot path]: ``_record`` for one input that requires grad (most ops), straight."""
    fn = x.grad_fn
    edge = (fn, x._output_nr) if fn is not None else (grad_accumulator(x), 0)
    arr = x._array
    if cls.scalar_edge:
        edges = (edge, _NO_EDGE)
        meta = ((arr.shape, arr.dtype), ((), arr.dtype))
    else:
        edges = (edge,)
        meta = ((arr.shape, arr.dtype),)
    how = cls._save1
    if how == 0:
        saved = ()
    elif how == 1 and not _Hooks.saved_tensor_hooks:  # the output (NOTE [Saved outputs])
        saved = (_save_output(result),)
    elif how == 2:
        saved = (SavedTensor(x, False),)
    else:
        return _record(cls, result, (x,), attrs)
    node = cls.node_cls(edges, saved, attrs, meta)
    if _Hooks.record_source or _Hooks.watch_ops:
        _record_extras(node, result, (x,), attrs)
    result._requires_grad = True
    if result._retains_grad:  # an in-place write to a tensor that retains grad
        move_retain(result, node)
    result.grad_fn = node
    return node


def _save_output(result):
    """``SavedTensor(result, True)`` for a fresh single output, without the checks that cannot
    fail there (no inference tensor, no hooks: the caller tested)."""
    s = _new(SavedTensor)
    vc = result._vc
    vc.append(None)  # NOTE [Diagnostics]: watched (a fresh output's counter is [0])
    s._version = 0
    s._is_output = True
    s._output_nr = 0
    s._unpack_hook = None
    s._packed = None
    s._tensor = None
    s._array = result._array
    s._vc = vc
    return s


def _record_extras(node, result, inputs, attrs) -> None:
    if _Hooks.record_source:
        node.source = _user_frame()
        if _Anomaly.enabled:
            from ..autograd.anomaly import check_forward, note_source

            note_source(node, node.source)
            if _Anomaly.check_nan:
                check_forward(node, result, inputs, attrs)
    if _Hooks.grad_consts:  # NOTE [Diagnostics] in autograd/diagnostics.py
        _diagnostics.note_constant_inputs(node, inputs)
    if _Hooks.trace is not None and not node._prim.multi_output:  # NOTE [Tracing ops]
        _Hooks.trace(node._prim, result, inputs, attrs)


def _record(cls, result, inputs, attrs, results=None):
    # NOTE [Hot path]: two inputs spelled out (the backward primitives of a create_graph backward
    # come here); a lone input that records is _record1's, or the fast path's
    if len(inputs) == 2:
        x, y = inputs
        fn = x.grad_fn
        if fn is not None:
            edge_x = (fn, x._output_nr)
        elif x._requires_grad:
            edge_x = (grad_accumulator(x), 0)
        else:
            edge_x = _NO_EDGE
        fn = y.grad_fn
        if fn is not None:
            edge_y = (fn, y._output_nr)
        elif y._requires_grad:
            edge_y = (grad_accumulator(y), 0)
        else:
            edge_y = _NO_EDGE
        edges = (edge_x, edge_y)
        a, b = x._array, y._array
        meta = ((a.shape, a.dtype), (b.shape, b.dtype))
    else:
        edges = []
        meta = []
        for t in inputs:
            fn = t.grad_fn
            if fn is not None:
                edges.append((fn, t._output_nr))
            elif t._requires_grad:
                edges.append((grad_accumulator(t), 0))
            else:
                edges.append(_NO_EDGE)
            arr = t._array
            meta.append((arr.shape, arr.dtype))
        if cls.scalar_edge:  # the Python number's (None, 0) edge, as PyTorch shows it
            edges.append(_NO_EDGE)
            meta.append(((), inputs[0]._array.dtype))
        edges = tuple(edges)
        meta = tuple(meta)
    idx = cls._save_idx
    if not idx:
        saved = ()
    elif cls._save_when is not None:
        saved = _saved_when_needed(cls, result, inputs, results)
    elif len(idx) == 1 and results is None:
        i = idx[0]
        saved = (SavedTensor(result, True) if i < 0 else SavedTensor(inputs[i], False),)
    elif results is None:
        saved = tuple([
            SavedTensor(result, True) if i < 0 else SavedTensor(inputs[i], False) for i in idx
        ])
    else:
        saved = tuple([
            SavedTensor(results[-1 - i], True, -1 - i) if i < 0 else SavedTensor(inputs[i], False)
            for i in idx
        ])
    node = cls.node_cls(edges, saved, attrs, meta)
    if _Hooks.record_source or _Hooks.watch_ops:
        _record_extras(node, result, inputs, attrs)
    result._requires_grad = True
    if result._retains_grad:  # an in-place write to a tensor that retains grad
        move_retain(result, node)
    result.grad_fn = node
    result._output_nr = 0
    return node


def _needed(cls, inputs, k) -> bool:
    """Whether entry ``k`` of ``cls.saves`` is saved for these inputs (NOTE [Saved when needed])."""
    when = cls._save_when[k]
    return when is None or any(inputs[j]._requires_grad for j in when)


def _saved_when_needed(cls, result, inputs, results) -> tuple:
    """The saved values of a node whose class declares ``saved_for``: None for each one that no
    input requiring grad needs (NOTE [Saved when needed])."""
    out = []
    for k, i in enumerate(cls._save_idx):
        if not _needed(cls, inputs, k):
            out.append(None)
        elif i >= 0:
            out.append(SavedTensor(inputs[i], False))
        else:
            out.append(SavedTensor(result if results is None else results[-1 - i], True, -1 - i))
    return tuple(out)


def _check_inplace_leaf(target) -> None:
    """PyTorch's checks before a recorded in-place write to ``target``; also run for a write
    that records nothing to a view whose base requires grad: PyTorch's view then requires grad
    through its base (``b = a[:]; a.requires_grad = True; b.add_(5)`` is refused there)."""
    if CREATION_META:  # NOTE [View creation] in _view_meta.py
        _view_meta.check(target)
    if target.grad_fn is None and target._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.\n"
            f"glassgrad: the leaf has shape {list(target.shape)}. Update parameters under "
            "`with glassgrad.no_grad():`, or clone it first (x = x.clone())."
        )
    base = target._base
    if base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation.\n"
            f"glassgrad: the leaf has shape {list(base.shape)}; write to it under no_grad, or "
            "write into a clone."
        )


def check_view_write(target) -> None:
    """``_check_inplace_leaf`` for a write that records nothing (a view whose base requires
    grad; see there)."""
    base = target._base
    if base is not None and base._requires_grad and _state.enabled:
        _check_inplace_leaf(target)
