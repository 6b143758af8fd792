"""The backward engine: ``backward`` and ``grad`` over the recorded graph (PyTorch's semantics).

Walks are iterative (a chain of a million nodes is fine). Ready nodes run in reverse creation
order, as PyTorch's; leaves are reached through ``AccumulateGrad``. Broadcasting is undone here, in
one place: each gradient is summed to its input's shape and cast to its dtype when delivered.

NOTE [Freeing]: without ``retain_graph`` each node drops its saved tensors right after it runs and
is marked freed; running it again raises "Trying to backward through the graph a second time". A
node that saved nothing (``x.sum()``, ``x + 1``, views) has nothing to free, so a second backward
through only such nodes succeeds and accumulates again, exactly as in PyTorch. Nodes themselves
stay linked until their outputs die; Python frees a long chain iteratively (no recursion limit).
"""

from __future__ import annotations

import heapq
import itertools
import sys
from collections import deque
from sys import getrefcount

import numpy as np
from numpy import ndarray as _ndarray

from .. import dtypes
from . import _grad_layout as _layout, diagnostics as _diag
from . import forward_ad as _forward_ad
from .engine_arrays import run_arrays
from .engine_hooks import (  # noqa: F401 - engine_arrays reaches them through this module
    _accumulate_post_hooks,
    _apply_tensor_hooks,
    _hook_value,
    _hook_values,
    _pre_hooks,
)
from .grad_mode import _state
from .graph import (
    _NEEDED,
    AccumulateGrad,
    _Anomaly,
    _Hooks,
    _second_time_message,
    grad_accumulator,
)
from .._user_warning import warn_user

_this = sys.modules[__name__]
_Tensor = None  # bound by tensor.py (the engine never imports the tensor or op modules)
_reduce_batched_grad = None  # NOTE [Dead levels] in func/_batching.py; bound when func is imported
_TASK_IDS = itertools.count()  # one per run(): its local "task" names the backward (graph task)


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _Tensor) or _is_edge(x):
        return (x,)
    return tuple(x)


def _is_edge(x) -> bool:  # a GradientEdge (graph_hooks' NamedTuple: the engine does not import it)
    return isinstance(x, tuple) and hasattr(x, "output_nr")


def _seeds(outputs, grad_outputs, what: str):
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{what}: got {len(grad_outputs)} gradients for {len(outputs)} outputs")
    seeds = []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(t, _Tensor):
            raise TypeError(f"{what}: expected Tensors as outputs, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn\n"
                "glassgrad: nothing that this output was computed from requires grad, or it was "
                "computed under no_grad()/inference_mode(), or from a .detach()ed tensor. A gradient "
                "taken without create_graph=True cannot be differentiated again."
            )
        if g is None:
            if t._array.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got torch.{t.dtype.name}\nglassgrad: reduce it to a real "
                                   "loss first (output.abs().sum(), output.real) or pass gradient=.")
            if t._array.size != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs\n"
                    f"glassgrad: output {i} has shape {list(t.shape)}; pass gradient= (backward) or "
                    "grad_outputs= (autograd.grad) of that shape, e.g. ones_like(output), or reduce "
                    "it to a scalar first (output.sum())."
                )
            g = _Tensor._make(_ones(t._array))
        elif not isinstance(g, _Tensor):
            g = _Tensor._make(_ones(t._array) * g)
        elif g._array.shape != t._array.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of glassgrad.Size("
                f"{list(g.shape)}) and output[{i}] has a shape of glassgrad.Size({list(t.shape)})."
            )
        elif g._array.dtype != t._array.dtype:
            g = g.to(t.dtype)
        seeds.append(g)
    return seeds


def _ones(arr):
    return np.ones(arr.shape, dtype=arr.dtype)


def _edge(t):
    if _is_edge(t):
        return (t.node, t.output_nr)
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (grad_accumulator(t), 0)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``torch.autograd.backward``: accumulate gradients of ``tensors`` into leaves' ``.grad``."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    seeds = _seeds(tensors, grad_tensors, "backward")
    # NOTE: with create_graph=True, retain_graph=True is the default; passing it changes nothing,
    # so the "remove retain_graph=True" advice would be wrong (the article's WGAN-GP penalty)
    user_retain = retain_graph is True and not create_graph and _diag.called_by_user()
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warn_user(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this function, "
            "make sure to reset the .grad fields of your parameters to None after use to break the "
            "cycle and avoid the leak.",
            UserWarning,
            stacklevel=3,
        )
    if inputs is not None:
        for t in inputs:
            if not _is_edge(t) and not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    with np.errstate(all="ignore"):  # NOTE [NumPy warnings] in ops/_numpy_warnings.py
        captured = run(tensors, seeds, retain_graph, create_graph, inputs, accumulate=True,
                       user_retain=user_retain)
    if inputs is not None:
        for t, g in zip(inputs, captured):
            if _is_edge(t):  # a GradientEdge has no .grad to fill
                continue
            # NOTE: a retain_grad tensor got its .grad from its retain hook already (PyTorch
            # stores it once, the hooked value)
            if t.grad_fn is not None and g is not None and not t._retains_grad:
                _store_grad(t, g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """``torch.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs``, returned not stored.

    Returns a tuple with one Tensor (or None with ``allow_unused``) per input. With
    ``create_graph=True`` the results are differentiable (higher-order derivatives).
    """
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in inputs_t:
        if _is_edge(t):  # the gradient that the edge's node receives
            continue
        if not isinstance(t, _Tensor):
            raise TypeError(f"grad: expected Tensors as inputs, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(
                "One of the differentiated Tensors does not require grad\n"
                f"glassgrad: input of shape {list(t.shape)} has requires_grad=False; call "
                ".requires_grad_() on it before the forward."
            )
    # NOTE: with create_graph=True, retain_graph=True is the default; passing it changes nothing,
    # so the "remove retain_graph=True" advice would be wrong (the article's WGAN-GP penalty)
    user_retain = retain_graph is True and not create_graph and _diag.called_by_user()
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        from .engine_batched import batched_grad  # NOTE: imports this module

        return batched_grad(outputs, inputs_t, grad_outputs, create_graph, allow_unused,
                            materialize_grads, retain_graph)
    seeds = _seeds(outputs, grad_outputs, "grad")
    with np.errstate(all="ignore"):  # NOTE [NumPy warnings] in ops/_numpy_warnings.py
        captured = run(outputs, seeds, retain_graph, create_graph, inputs_t, accumulate=False,
                       user_retain=user_retain)
    result = []
    for i, (t, g) in enumerate(zip(inputs_t, captured)):
        if g is None:
            if materialize_grads and _is_edge(t):
                raise RuntimeError("materialize_grads cannot be used when the given input is a "
                                   "GradientEdge")
            if materialize_grads:  # zeros, differentiable with create_graph (as torch's)
                g = _Tensor._make(_ones(t._array) * 0)
                g._requires_grad = create_graph
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.\n"
                    f"glassgrad: no path leads from the outputs back to input {i} "
                    f"({t.node.name() if _is_edge(t) else f'shape {list(t.shape)}'}); was it "
                    "detached, or replaced by a copy?"
                )
        result.append(g)
    if not create_graph and _diag.called_by_user():
        _diag.mark_grad_constants(result)  # NOTE [Diagnostics]: the first-order MAML trap
    return tuple(result)


def run(roots, seeds, retain_graph, create_graph, inputs, accumulate, user_retain=False):
    """Execute the graph behind ``roots``. With ``inputs``, run only what leads to them and return
    the gradient arriving at each input (captured after its hooks). ``user_retain``: user code
    passed ``retain_graph=True`` (NOTE [Diagnostics] records the graph)."""
    if _Hooks.forward_ad is not None:  # NOTE [Forward transforms] in func/_forward.py
        _forward_ad._State.backward_runs += 1
    root_edges = [_edge(t) for t in roots]
    # NOTE [Hot path]: deps doubles as the set of nodes seen; roots start at 0 consumers
    deps: dict = {e[0]: 0 for e in root_edges}
    # the first new node found goes on at once, the others wait on the stack: a chain's walk
    # never touches it (a deque: a list emptied and refilled reallocates each time)
    stack = deque(deps)
    pop = stack.pop
    push = stack.append
    node = pop() if stack else None
    while node is not None:
        walk = None
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                if walk is None:
                    walk = nxt
                else:
                    push(nxt)
        node = walk if walk is not None else pop() if stack else None
    # every node reached; its keys stay while deps' counts change (NOTE: graph_hooks reads it
    # as this frame's local "seen", to tell which nodes this backward runs)
    seen = deps
    task = next(_TASK_IDS)  # noqa: F841 - read from this frame by graph_hooks._engine_task
    if _Anomaly.enabled and _Anomaly.check_nan:
        from .anomaly import check_graph

        check_graph(roots, seen)
    if _Hooks.diagnose_backward or user_retain:
        _diag.before_run(seen, user_retain)
    # NOTE [Freeing]: nodes remember which backward freed them, for the second-backward error
    release = None if retain_graph else _diag.backward_call()

    targets = needed = None
    captured = None
    if inputs is not None:
        targets = {}
        for i, t in enumerate(inputs):
            node, nr = _edge(t)
            targets.setdefault(node, []).append((nr, i))
        needed = _nodes_leading_to(seen, targets)
        deps = {}
        for node in needed:
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt in needed:
                    deps[nxt] = deps.get(nxt, 0) + 1
        captured = [None] * len(inputs)

    buffers: dict = {}
    heap = []
    counter = 0
    for (node, nr), g in zip(root_edges, seeds):
        if needed is not None and node not in needed:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    for node in buffers:
        if deps.get(node, 0) == 0:
            heapq.heappush(heap, (-node._seq, counter, node))
            counter += 1

    heappop = heapq.heappop
    heappush = heapq.heappush
    plain = not _Anomaly.enabled  # NOTE: _call handles anomaly mode and post hooks
    prev_mode = _state.enabled
    _state.enabled = create_graph
    prev_needed = _NEEDED[0]
    _NEEDED[0] = needed
    if plain and not create_graph:  # NOTE [Array backward] in engine_arrays.py
        for buf in buffers.values():
            for i, t in enumerate(buf):
                if t is not None:
                    buf[i] = t._array
        try:
            run_arrays(_this, heap, counter, buffers, deps, targets, needed, captured, accumulate,
                       release)
        finally:
            _state.enabled = prev_mode
            _NEEDED[0] = prev_needed
        return captured
    try:
        node = heappop(heap)[2] if heap else None
        while node is not None:
            grads = buffers.pop(node, None)
            out = None
            if grads is not None:
                if type(node) is AccumulateGrad:  # (no edges: the loop below does nothing)
                    g = None  # NOTE: no stale reference to a gradient _accumulate may take over
                    if node.variable._hooks or node._pre_hooks:
                        grads = _pre_hooks(node, grads, create_graph, accumulate)
                    if targets is not None and node in targets:
                        _capture(captured, targets[node], grads)
                    if accumulate and grads[0] is not None and (targets is None or node in targets):
                        _accumulate(node.variable, grads[0], create_graph)
                    if node._post_hooks and accumulate:  # (grad() runs no AccumulateGrad)
                        _accumulate_post_hooks(node, grads)
                else:
                    # NOTE [Captures]: an input of autograd.grad whose node runs on (an input
                    # lies beyond it) is captured before its hooks, one whose node stops there
                    # after its tensor hooks, without the node's pre-hooks (PyTorch's order)
                    runs = needed is None or _runs(node, targets, needed, accumulate)
                    if targets is not None and node in targets:
                        grads = _target_hooks(node, grads, create_graph, runs, accumulate,
                                              captured, targets[node])
                    elif node._tensor_hooks or node._retain or node._pre_hooks:
                        grads = _pre_hooks(node, grads, create_graph, runs)
                    if runs:
                        if plain and not node._post_hooks:
                            if node._freed:
                                raise RuntimeError(_second_time_message(node))
                            out = node._run_backward(grads)
                            if release is not None and (node._saved or node._frees_attrs):
                                node._saved = None  # Node._release, inlined
                                node._freed = release
                        else:
                            out = _call(node, grads, release)
            meta = node._in_meta
            ready = None
            k = -1  # (a counter, not enumerate(): no (k, edge) tuple per edge)
            for nxt, nr in node.next_functions:
                k += 1
                if nxt is None or (needed is not None and nxt not in needed):
                    continue
                if out is not None:
                    g = out[k]
                    if g is not None:
                        shape, np_dtype = meta[k] if meta else (None, None)
                        arr = g._array
                        if type(arr) is not _ndarray and _reduce_batched_grad is not None:
                            g = _reduce_batched_grad(g, shape)
                            arr = g._array
                        if shape is not None and arr.shape != shape:
                            g = _reduce_grad(node, k, g, shape)
                        if np_dtype is not None and arr.dtype is not np_dtype \
                                and arr.dtype != np_dtype:
                            g = g.to(dtypes._FROM_NP[np_dtype])
                        buf = buffers.get(nxt)
                        if buf is None:
                            buf = buffers[nxt] = [None] * nxt._n_outputs
                            buf[nr] = g
                        else:
                            buf[nr] = g if buf[nr] is None else buf[nr] + g
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    if ready is None:
                        ready = nxt
                    else:
                        heappush(heap, (-nxt._seq, counter, nxt))
                        counter += 1
            # the next node: the ready one with the highest sequence number (PyTorch's order);
            # a lone ready node with nothing else waiting (a chain) skips the heap
            if ready is not None and not heap:
                node = ready
            else:
                if ready is not None:
                    heappush(heap, (-ready._seq, counter, ready))
                    counter += 1
                node = heappop(heap)[2] if heap else None
    finally:
        _state.enabled = prev_mode
        _NEEDED[0] = prev_needed
    return captured


def _capture(captured, entries, grads) -> None:
    for nr, i in entries:
        g = grads[nr]
        captured[i] = g if captured[i] is None or g is None else captured[i] + g


def _runs(node, targets, needed, accumulate) -> bool:
    # a target's own node runs only if something further down is also wanted, or in
    # backward(inputs=...) (PyTorch executes an input's node there: its hooks fire)
    if accumulate or node not in targets:
        return True
    return any(nxt is not None and nxt in needed for nxt, _ in node.next_functions)


def _target_hooks(node, grads, create_graph, runs, accumulate, captured, slot):
    """NOTE [Captures]: the hooks of the node of an input of grad()/backward(inputs=), and the
    capture of its gradient: grad() takes it before the hooks when the node runs on, after its
    tensor hooks (no pre-hooks) when it stops there; backward(inputs=) after the tensor hooks and
    before the node's pre-hooks, as PyTorch's retains_grad hook sees it."""
    late = accumulate or not runs
    if not late:
        _capture(captured, slot, grads)
    if node._tensor_hooks or node._retain or node._pre_hooks:
        return _pre_hooks(node, grads, create_graph, runs, (captured, slot) if late else None)
    if late:
        _capture(captured, slot, grads)
    return grads


def _nodes_leading_to(seen, targets) -> set:
    parents: dict = {}
    for node in seen:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                parents.setdefault(nxt, []).append(node)
    needed = {t for t in targets if t in seen}
    stack = list(needed)
    while stack:
        node = stack.pop()
        for p in parents.get(node, ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed


def _call(node, grads, release):
    if _Anomaly.enabled:
        from .anomaly import run_checked

        out = run_checked(node, grads)
    else:
        if node._freed:
            raise RuntimeError(_second_time_message(node))
        out = node._run_backward(grads)
    if node._post_hooks:
        # PyTorch passes None for inputs that need no gradient, and each gradient summed to its
        # input's shape (a broadcasting op's hook sees what the input receives)
        meta = node._in_meta
        out = tuple(None if e[0] is None or g is None
                    else g if not meta or g._array.shape == meta[k][0] or meta[k][0] is None
                    else _reduce_grad(node, k, g, meta[k][0])
                    for k, (e, g) in enumerate(zip(node.next_functions, out)))
        for hook in list(node._post_hooks.values()):
            new = hook(out, tuple(grads))
            if new is not None:
                out = tuple(_hook_values(hook, out, new))
    if release is not None:
        node._release(release)
    return out


def _reduce_grad(node, k, g, shape):
    """Sum a broadcast gradient to its input's shape; PyTorch's error when it cannot be."""
    got = g._array.shape
    lead = len(got) - len(shape)
    if lead < 0 or any(s != 1 and s != got[lead + i] for i, s in enumerate(shape)):
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {k} - got "
            f"{list(got)} but expected shape compatible with {list(shape)}\n"
            f"glassgrad: input {k} of {node.name()} has shape {list(shape)}; its gradient must "
            "have that shape (or one that broadcasting from it produces)."
        )
    return g.sum_to_size(shape)


def _accumulate(variable, g, create_graph: bool) -> None:
    """``AccumulateGrad``: the first gradient is stored (a copy unless nothing else holds it: it
    may alias another), later ones add."""
    old = variable._grad
    if old is None:  # NOTE [Gradient layout] in _grad_layout.py
        if create_graph or _exclusive(g) and _layout.may_steal(variable._array):
            variable._grad = g
        else:
            variable._grad = _Tensor._make(_layout.grad_copy(g._array, variable._array))
    elif create_graph or old._requires_grad or not old._array.flags.writeable:
        variable._grad = old + g
    else:
        old._array += g._array
        old._vc[0] += 1
    if variable._post_acc_hooks:
        for hook in list(variable._post_acc_hooks.values()):
            if hook(variable) is not None:
                raise RuntimeError("hooks should return None.\nglassgrad: a post-accumulate-grad "
                                   "hook works by side effect (e.g. an optimizer step).")


def _exclusive(g, measure: bool = False):
    """True when only the engine holds ``g`` and its (C-contiguous) array, or the buffer that array
    views (an op's fresh result): it becomes ``.grad`` without a copy, as PyTorch's AccumulateGrad
    steals a gradient nobody else uses. ``measure``: the reference counts instead (calibration)."""
    arr = g._array
    base = arr.base
    if measure:
        return getrefcount(g), getrefcount(arr), getrefcount(base)
    if type(arr) is not _ndarray or g._base is not None or not arr.flags.c_contiguous:
        return False
    if getrefcount(g) > _EXCLUSIVE_REFS[0] or getrefcount(arr) > _EXCLUSIVE_REFS[1]:
        return False
    return base is None or (type(base) is _ndarray and getrefcount(base) <= _EXCLUSIVE_REFS[2])


class _Probe:
    __slots__ = ("_array", "_base")


def _calibrate_exclusive() -> tuple:
    """The reference counts ``_exclusive`` sees for a gradient (a view of a fresh buffer) held
    only by the engine's buffer list, measured in the very call pattern of ``run`` ->
    ``_accumulate`` -> ``_exclusive`` (so no interpreter's counting convention is assumed)."""

    def accumulate(variable, g, create_graph):
        return create_graph or _exclusive(g, True)

    probe = _Probe()
    probe._array, probe._base = np.empty(2)[:1], None
    grads = [probe]
    del probe
    return accumulate(None, grads[0], False)


_EXCLUSIVE_REFS = _calibrate_exclusive()


def _store_grad(t, g, create_graph: bool) -> None:
    """``backward(inputs=[non_leaf])`` fills that tensor's ``.grad`` as PyTorch does."""
    old = t._grad
    if old is None:
        t._grad = g if create_graph else _Tensor._make(g._array.copy())
    else:
        t._grad = old + g
