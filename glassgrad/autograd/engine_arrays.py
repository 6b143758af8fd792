"""First-order backward on raw arrays: the engine's loop when nothing records (``create_graph=False``).

NOTE [Array backward]: a first-order backward needs no history on its gradients, so wrapping each
of them in a Tensor (and running Tensor-level ops that test grad mode, promote and wrap again) is
pure overhead, about half of a scalar op's backward. Here gradients travel as NumPy arrays (0-d
ones as NumPy scalars, whose arithmetic is 5x faster) and a node whose primitive declares
``backward_np`` (the same derivative rule on arrays, built from the array functions the Tensor
rule's primitives run, so the numbers are the same) runs without a single Tensor. Everything
user-visible stays Tensor: hooks, ``retain_grad``, captured ``autograd.grad`` results and
``.grad`` see Tensors (wrapped at that point), and a node without ``backward_np`` (custom
Functions, module hooks, rare ops) runs its Tensor backward on wrapped gradients. Scheduling,
freeing and errors are ``engine.run``'s, line for line.

NOTE [Simple nodes]: a node's class is its op's, so in this loop, which sees every op, each read
of a node attribute is CPython's unspecialised lookup (~35 ns; NOTE [Own code] in graph.py). The
commonest node (an array rule taking the gradient, at most one saved value and the attributes;
one output; no hook) is therefore told by one read, ``node._np_fast``: ``(backward_np,
frees_attrs)`` on such a class, None on any other and on a node given a hook or retain_grad
(``Node._mark_hooked``). Everything else goes through ``_general``.

``run_arrays`` is entered from ``engine.run`` after its set-up; it must keep the reference pattern
``_accumulate`` calibrates against (NOTE in engine._calibrate_exclusive): the gradient list popped
from ``buffers`` holds the only reference to a fresh gradient.
"""

from __future__ import annotations

from heapq import heappop, heappush
from sys import getrefcount

from numpy import empty as _np_empty
from numpy import float32 as _f32
from numpy import float64 as _f64
from numpy import generic as _generic
from numpy import ndarray as _ndarray

from .. import dtypes
from .graph import ZERO_D_META, AccumulateGrad, SavedTensor, _second_time_message

_M32, _M64 = ZERO_D_META
# NOTE [Sparse gradients] in sparse/_coo.py: the stand-in array type of a sparse gradient and
# its AccumulateGrad, bound by glassgrad.sparse
_sparse_grad_type = None
_sparse_accumulate = None


def run_arrays(eng, heap, counter, buffers, deps, targets, needed, captured, accumulate, release):
    """Run the graph with array gradients; ``eng`` is the engine module (its helpers and its
    late-bound ``_Tensor``/``_reduce_batched_grad``)."""
    wrap = eng._Tensor._make
    reduce_batched = eng._reduce_batched_grad
    sparse_t = _sparse_grad_type  # NOTE [Sparse gradients] in sparse/_coo.py
    g = None
    held = None  # the gradients of the node that runs next, kept out of `buffers` (a chain's case)
    node = heappop(heap)[2] if heap else None
    while node is not None:
        if held is not None:
            grads = held
            held = None
        else:
            grads = buffers.pop(node, None)
        out = None
        if grads is not None:
            if type(node) is AccumulateGrad:
                # NOTE: the list keeps the only reference (see the module docstring)
                if grads[0] is not None:
                    grads[0] = wrap(grads[0]) if type(grads[0]) is not sparse_t \
                        else grads[0].tensor
                if node.variable._hooks or node._pre_hooks:
                    grads = eng._pre_hooks(node, grads, False, accumulate)
                if targets is not None and node in targets:
                    eng._capture(captured, targets[node], grads)
                if accumulate and grads[0] is not None and (targets is None or node in targets):
                    if grads[0]._sparse or node.variable._grad is not None \
                            and node.variable._grad._sparse:
                        _sparse_accumulate(node.variable, grads[0])
                    else:
                        eng._accumulate(node.variable, grads[0], False)
                if node._post_hooks and accumulate:  # (grad() runs no AccumulateGrad)
                    eng._accumulate_post_hooks(node, grads)
            else:
                fast = node._np_fast  # NOTE [Simple nodes]: one read says "nothing else to do"
                if fast is not None and (targets is None or node not in targets):
                    bnp, frees_attrs = fast
                    saved = node._saved
                    if saved is None:  # released (Node._release sets both)
                        if node._freed:
                            raise RuntimeError(_second_time_message(node))
                        saved = ()
                    try:
                        if saved:  # NOTE [Hot path]: one saved tensor, one output, inlined
                            s = saved[0]
                            if type(s) is SavedTensor:
                                # SavedTensor._unpack_array's commonest cases, inlined: an
                                # output (its array) or an input (its tensor), unchanged since
                                t = s._tensor
                                if s._unpack_hook is None and (
                                        s._vc[0] == s._version if t is None
                                        else t._vc[0] == s._version):
                                    s = s._array if t is None else t._array
                                    if type(s) is _ndarray and not s.shape:
                                        s = s[()]
                                else:
                                    s = s._unpack_array(node)
                                t = None  # (so the saved input is freed with _saved below)
                            attrs = node._attrs  # (a call with **{} costs a dict and a tuple)
                            out = bnp(grads[0], s, **attrs) if attrs else bnp(grads[0], s)
                        else:
                            attrs = node._attrs
                            out = bnp(grads[0], **attrs) if attrs else bnp(grads[0])
                    except Exception as exc:  # noqa: BLE001 - see _tensor_rule
                        out = _tensor_rule(node, grads, wrap, exc)
                    if release is not None and (saved or frees_attrs):
                        node._saved = None  # Node._release, inlined
                        node._freed = release
                else:
                    out = _general(eng, node, grads, targets, needed, captured, release, wrap,
                                   accumulate)
        meta = node._in_meta
        ready = None
        k = -1  # (a counter, not enumerate(): no (k, edge) tuple to build and unpack per edge)
        for nxt, nr in node.next_functions:
            k += 1
            if nxt is None or (needed is not None and nxt not in needed):
                continue
            left = deps[nxt] - 1
            deps[nxt] = left
            if out is not None:
                g = out[k]
                if g is not None:
                    m = meta[k] if meta else None
                    cls = type(g)  # NOTE: a batched array says its __class__ is ndarray
                    # a NumPy scalar of a 0-d input's own dtype (the shared entries for 0-d
                    # inputs: ZERO_D_META): nothing to check
                    if not (m is _M32 and cls is _f32 or m is _M64 and cls is _f64):
                        shape, np_dtype = m if m is not None else (None, None)
                        if cls is not _ndarray and cls is not _f32 and cls is not _f64 \
                                and reduce_batched is not None and not isinstance(g, _generic) \
                                and cls is not sparse_t:
                            g = reduce_batched(wrap(g), shape)._array
                        if shape is not None and g.shape != shape:
                            g = eng._reduce_grad(node, k, wrap(g), shape)._array
                        if np_dtype is not None and g.dtype is not np_dtype \
                                and g.dtype != np_dtype:
                            g = wrap(g).to(dtypes._FROM_NP[np_dtype])._array
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = [None] * nxt._n_outputs
                        buf[nr] = g
                        if left == 0 and ready is None:
                            held = buf  # nxt is ready: it may well run next (below)
                        else:
                            buffers[nxt] = buf
                    else:
                        old = buf[nr]
                        if old is None:
                            buf[nr] = g
                        elif type(old) is _ndarray and old.base is None \
                                and getrefcount(old) <= _OWNED and old.shape == g.shape \
                                and old.dtype is g.dtype and old.flags.writeable:
                            old += g  # NOTE: only the buffer holds it: add in place, no copy
                        else:
                            buf[nr] = old + g
                        old = None
                    g = None  # NOTE: no stale reference for _accumulate's exclusivity test
                    buf = None
            if left == 0:
                if ready is None:
                    ready = nxt
                else:
                    heappush(heap, (-nxt._seq, counter, nxt))
                    counter += 1
        out = None
        if ready is not None and not heap:
            node = ready
        else:
            if ready is not None:
                if held is not None:
                    buffers[ready] = held
                    held = None
                heappush(heap, (-ready._seq, counter, ready))
                counter += 1
            node = heappop(heap)[2] if heap else None


# True in the test suite (tests/conftest.py): an array rule that fails on plain arrays is a bug
# there, which the fallback to the Tensor rule would otherwise hide behind the right numbers
STRICT = False


def _batched(grads) -> bool:
    return any(a is not None and type(a) is not _ndarray and not isinstance(a, _generic)
               for a in grads)


def _owned_refs() -> int:
    """``getrefcount(old)`` in ``run_arrays``'s accumulation for an array only a gradient buffer
    holds (buffer list + local + argument), measured rather than assumed."""
    buf = [_np_empty(1)]
    old = buf[0]
    return getrefcount(old)


_OWNED = _owned_refs()


def _tensor_rule(node, grads, wrap, exc):
    """The node's Tensor backward, run when its array rule raised ``exc``: vmap's batched arrays
    may need the primitives' batching rules (NOTE [Batched arrays]); a real error is raised there
    again. In the test suite (``STRICT``) an array rule failing on plain arrays raises ``exc``."""
    if STRICT and not _batched(grads):
        raise exc  # a broken array rule must not hide behind the Tensor rule's right numbers
    tg = [None if a is None else wrap(a) for a in grads]
    try:
        return [None if t is None else t._array for t in node._run_backward(tg)]
    except Exception as again:  # noqa: BLE001
        # the Tensor rule raised the real error: shown once, not chained behind the array rule's copy
        raise again from None


def _general(eng, node, grads, targets, needed, captured, release, wrap, accumulate):
    """One node that is not simple (NOTE [Simple nodes]): hooks, autograd.grad's targets, array
    rules with other signatures, or only a Tensor rule. Returns its input gradients, or None
    when it does not run."""
    hk = node._hooked
    hooked = hk and (node._tensor_hooks or node._retain or node._pre_hooks)
    target = targets is not None and node in targets
    runs = needed is None or eng._runs(node, targets, needed, accumulate)
    if hooked or target:
        tg = [None if a is None else wrap(a) for a in grads]
        if target:  # NOTE [Captures] in engine.py
            tg = eng._target_hooks(node, tg, False, runs, accumulate, captured, targets[node])
        else:
            tg = eng._pre_hooks(node, tg, False, runs)
        grads = [None if t is None else t._array for t in tg]
    if not runs:
        return None
    bnp = node._np
    if bnp is not None and not (hk and node._post_hooks):
        if node._freed:
            raise RuntimeError(_second_time_message(node))
        try:
            out = _backward_np(node, bnp, grads, needed)
        except Exception as exc:  # noqa: BLE001 - see _tensor_rule
            out = _tensor_rule(node, grads, wrap, exc)
        if release is not None:
            node._release(release)
        return out
    tg = [None if a is None else wrap(a) for a in grads]
    if node._post_hooks:
        out = eng._call(node, tg, release)
    else:
        if node._freed:
            raise RuntimeError(_second_time_message(node))
        out = node._run_backward(tg)
        if release is not None:
            node._release(release)
    return [None if t is None else t._array for t in out]


def _backward_np(node, bnp, grads, needed):
    # a pre-hook that returned only None gradients: the rule does not run (PyTorch)
    if grads[0] is None and all(g is None for g in grads):
        return [None] * len(node.next_functions)
    saved = node._saved
    if saved:
        if len(saved) == 1 and type(saved[0]) is SavedTensor:
            args = (saved[0]._unpack_array(node),)
        else:
            args = [s._unpack_array(node) if type(s) is SavedTensor else s for s in saved]
    else:
        args = ()
    grad = tuple(grads) if node._prim.multi_output else grads[0]
    if node._np_needs:
        if needed is None:
            needs = tuple([e[0] is not None for e in node.next_functions])
        else:
            needs = tuple([e[0] is not None and e[0] in needed for e in node.next_functions])
        return bnp(grad, *args, needs_input_grad=needs, **node._attrs)
    return bnp(grad, *args, **node._attrs)
