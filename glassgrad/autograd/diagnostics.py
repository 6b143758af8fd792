"""Diagnostics that name the cause of autograd mistakes; each costs nothing unless it fires.

NOTE [Diagnostics]: the op path and the engine only test flags or lengths; the work happens here, at
the rare moments there is something to say.

- Second backward through a freed graph: ``Node._freed`` holds the ``BackwardCall`` (file:line) that
  freed it. When the failing backward runs on that same line, the graph of this iteration reaches
  into the previous one through a tensor carried across iterations (an RNN hidden state): the error
  says to ``detach()`` it, not to retain the graph.
- In-place error: saving a tensor marks its version counter as watched (``vc`` grows from ``[v]``
  to ``[v, None]``); an in-place write to a watched counter records its op and line in a
  ``WriteLog`` at ``vc[1]``. The error then names the write, the tensor's creator, and the user's
  variable (looked up in the calling frames, at error time only).
- Writes through ``.data``: ``.data`` hands out a counter ``[0, WriteLog(data_of=vc)]``. A write
  through it adds ``DATA_WRITE`` to the original counter when that one is watched, so the saved
  tensor's version check fails on its slow path, which warns instead of raising (PyTorch is silent).
  ``Tensor._version`` masks the offset off.
- ``retain_graph=True`` passed by user code (and no create_graph): the backward becomes a
  ``RetainedGraph`` record that each node of its graph holds (``node._retained``). While records
  live, each backward notes the records it reaches (counted; a graph growing across iterations at
  one backward line is warned about once); a record dies with the last node of its graph, and one
  that no later backward reached is counted as kept for nothing (warned about once per line).
- ``autograd.grad(create_graph=False)`` results called from user code are marked; ops that record
  nothing pass the mark on; a recorded op taking a marked constant notes its node; a backward that
  reaches such a node warns once (the first-order MAML / WGAN-GP trap).

Costs while nothing fires: one length test per saved tensor (plus one append the first time a
counter is saved) and per in-place write; one flag test per recorded op; per backward, the file:line
of the call (about 1 us) and one flag test. A backward with ``retain_graph=True`` also counts the
saved bytes of its graph (about 10% of that backward); while retained graphs or marked gradients
are alive, each backward looks at its nodes once (tens of ns each) and ops that record nothing look
at their inputs. Measured on ``benchmarks/run.py --only chain``: within noise (under 1%).
"""

from __future__ import annotations

import contextlib
import sys
import warnings
import weakref

from numpy import ndarray

from .. import _warn_always
from . import graph as _graph
from .graph import AccumulateGrad, SavedTensor, _Hooks
from .._user_warning import warn_user

_PACKAGE_DIR = _graph._PACKAGE_DIR
_TENSOR_FILE = _PACKAGE_DIR + "/tensor.py"
_INSPECT_DIR = _PACKAGE_DIR + "/inspect/"


class Stats:
    """Counters reported by ``glassgrad.memory.memory_stats()`` / ``memory_summary()``."""

    retained = 0  # backward calls made with retain_graph=True by user code
    reached_again = 0  # times a later backward went through a retained graph
    dropped_unused = 0  # retained graphs dropped without any later backward through them
    dropped_unused_bytes = 0  # saved bytes those graphs kept alive for nothing
    growing = 0  # backward lines whose retained graph grew across iterations
    data_writes = 0  # saved tensors found overwritten through .data
    grad_constants = 0  # backwards that used an autograd.grad result as a constant


_warned: set = set()


def _user_frame() -> str:
    """file:line of the user's code running now (``graph._user_frame``, safe at shutdown)."""
    try:
        return _graph._user_frame()
    except ValueError:  # a callback run from a shallow stack
        return "<unknown>"


def _warn_at(where: str | None, key, message: str) -> None:
    """Warn once per ``key``, attributed to the user's line ``where`` ("file:line")."""
    if key in _warned and not _warn_always.ALWAYS[0]:  # NOTE [Warn always]
        return
    _warned.add(key)
    filename, _, line = (where or "").rpartition(":")
    if filename and line.isdigit():
        warnings.warn_explicit(message, UserWarning, filename, int(line), module="glassgrad")
    else:
        warn_user(message, UserWarning, stacklevel=3)


def reset() -> None:
    """Forget which diagnostics already warned and zero the counters (for tests)."""
    _warned.clear()
    _growth.clear()
    _needed_lines.clear()
    for name, value in vars(Stats).items():
        if not name.startswith("_") and isinstance(value, int):
            setattr(Stats, name, 0)


# --- buffers ------------------------------------------------------------------------------------
def root_buffer(arr):
    """The array that owns the memory ``arr`` looks at (through views and ``as_strided`` windows)."""
    while True:
        base = arr.base
        if base is None:
            return arr
        if not isinstance(base, ndarray):
            base = getattr(base, "base", None)  # NumPy's DummyArray behind as_strided
            if not isinstance(base, ndarray):
                return arr
        arr = base


def saved_arrays(node):
    """The NumPy arrays ``node`` keeps for backward (hook-packed ones when they are arrays or
    Tensors; ``vmap``'s batched arrays are left out)."""
    out = []
    for s in node._saved or ():
        if type(s) is SavedTensor:
            if s._unpack_hook is None:
                s = s._peek()
            else:
                s = s._packed
        for p in s if isinstance(s, (tuple, list)) else (s,):
            p = getattr(p, "_array", p)
            if type(p) is ndarray:
                out.append(p)
    return out


def saved_bytes(nodes, exclude_leaves: bool = True) -> int:
    """Bytes of the buffers ``nodes`` saved, each buffer once; leaves' own buffers (parameters)
    excluded when asked, since the graph does not keep those alive."""
    leaves = []
    bufs = {}
    for n in nodes:
        saved = n._saved
        if not saved:
            if type(n) is AccumulateGrad:
                leaves.append(n.variable._array)
            continue
        for s in saved:
            if type(s) is SavedTensor and s._unpack_hook is None:
                arr = s._peek()
                if type(arr) is not ndarray:
                    continue
                if arr.base is not None:
                    arr = root_buffer(arr)
                bufs[id(arr)] = arr.nbytes
            elif s is not None:
                for arr in saved_arrays(_One(s)):
                    arr = root_buffer(arr)
                    bufs[id(arr)] = arr.nbytes
    if exclude_leaves:
        for arr in leaves:
            bufs.pop(id(root_buffer(arr)), None)
    return sum(bufs.values())


class _One:
    """A stand-in node holding one saved entry, for ``saved_arrays``."""

    __slots__ = ("_saved",)

    def __init__(self, saved) -> None:
        self._saved = (saved,)


def format_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


# --- who called -----------------------------------------------------------------------------------
class BackwardCall:
    """One backward call as nodes remember it: the user's line that made it."""

    __slots__ = ("roots", "where")

    def __init__(self, where: str, roots=()) -> None:
        self.where = where
        self.roots = roots  # weak references to the root nodes this backward started from

    def __repr__(self) -> str:
        return f"<backward at {self.where}>"


def backward_call() -> BackwardCall:
    """The record a non-retaining backward leaves in the nodes it frees (~1 us per backward)."""
    edges = sys._getframe(1).f_locals.get("root_edges", ())
    return BackwardCall(_user_frame(), tuple(weakref.ref(n) for n, _ in edges if n is not None))


def same_roots(call: BackwardCall, nodes) -> bool:
    """True when a backward starts again from a root node that ``call`` started from."""
    old = {id(r()) for r in call.roots if r() is not None}
    return any(id(n) in old for n in nodes)


def called_by_user() -> bool:
    """True when ``engine.backward``/``engine.grad`` was called by user code (directly or through
    ``Tensor.backward``), not by glassgrad itself (jacobian, gradcheck, func transforms).
    ``glassgrad inspect``'s wrapper of ``Tensor.backward`` passes the user's call through."""
    f = sys._getframe(2)
    if f.f_code.co_filename == _TENSOR_FILE:
        f = f.f_back
    while f is not None and f.f_code.co_filename.startswith(_INSPECT_DIR):
        f = f.f_back
    return f is not None and not f.f_code.co_filename.startswith(_PACKAGE_DIR)


# --- retained graphs ------------------------------------------------------------------------------
class RetainedGraph:
    """What a backward with ``retain_graph=True`` kept: every node of its graph holds it in
    ``node._retained``, so it dies with the last of them (``__del__`` then reports a graph that no
    later backward went through), with the saved bytes and how often a later backward reached it."""

    __slots__ = ("__weakref__", "nbytes", "reached", "where")

    def __init__(self, where: str, nbytes: int) -> None:
        self.where = where
        self.nbytes = nbytes
        self.reached = 0

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: modules half torn down
            _graph_dropped(self)


_retained: dict = {}  # id(RetainedGraph) -> weakref to it, while any node of its graph lives
_growth: dict = {}  # backward line -> nodes of earlier retained graphs its last backward reached
# backward lines whose retained graph a later backward did reach: retain_graph=True is needed
# there, so the last graph of such a loop (a Hessian's rows, one backward per output) dying
# unreached is not reported
_needed_lines: set = set()


def before_run(seen: set, user_retain: bool) -> None:
    """Engine hook, called after the graph walk when diagnostics are active or the user passed
    ``retain_graph=True``: count retained graphs reached again, warn on growth and on autograd.grad
    constants, then record this backward's graph if it retains."""
    where = _user_frame()
    if _retained:
        _note_reached(seen, where)
    if _const_nodes:
        _check_constants(seen)
    if user_retain:
        _record_retained(seen, where)


def _note_reached(seen, where) -> None:
    reached: dict = {}
    for n in seen:
        rec = getattr(n, "_retained", None)
        if rec is not None:
            reached[rec] = reached.get(rec, 0) + 1
    old_same_line = 0
    for rec, count in reached.items():
        rec.reached += 1
        Stats.reached_again += 1
        _needed_lines.add(rec.where)
        if rec.where == where:
            old_same_line += count
    last = _growth.get(where, 0)
    _growth[where] = old_same_line
    if 0 < last < old_same_line:
        Stats.growing += 1
        held = saved_bytes([n for n in seen if type(n) is AccumulateGrad or (
            getattr(n, "_retained", None) is not None and n._retained.where == where)])
        _warn_at(where, ("growing", where), (
            f"glassgrad: the backward at {where} (retain_graph=True) runs through a graph that "
            f"keeps growing across iterations: this call went through {old_same_line} nodes made "
            f"by earlier iterations (up from {last}), which hold {format_bytes(held)} of saved "
            "tensors. A tensor carried from one iteration to the next (an RNN hidden state, a "
            "running total) links each new graph to all the old ones, so memory and backward time "
            "grow every iteration. Detach it at the start of each iteration (h = h.detach()) and "
            "drop retain_graph=True; use gradient accumulation if you meant to sum gradients."
        ))


def _record_retained(seen, where) -> None:
    Stats.retained += 1
    nbytes = saved_bytes(seen)
    if not nbytes:
        return  # nothing saved, nothing kept
    rec = RetainedGraph(where, nbytes)
    for n in seen:
        if type(n) is not AccumulateGrad:
            n._retained = rec
    _retained[id(rec)] = weakref.ref(rec)
    _Hooks.diagnose_backward += 1


def _graph_dropped(rec) -> None:
    if _retained.pop(id(rec), None) is None:
        return
    _Hooks.diagnose_backward -= 1
    if rec.reached:
        return
    Stats.dropped_unused += 1
    Stats.dropped_unused_bytes += rec.nbytes
    if _user_frame() == rec.where:
        return  # a temporary graph (loss(...).backward(retain_graph=True)) died at once
    if rec.where in _needed_lines:
        return  # the last turn of a loop whose other turns needed it
    _warn_at(rec.where, ("unused", rec.where), (
        f"glassgrad: backward at {rec.where} passed retain_graph=True, but no later backward went "
        f"through that graph before it was dropped: {format_bytes(rec.nbytes)} of saved tensors "
        "were kept alive for nothing (and every such call repeats it). Remove retain_graph=True "
        "there; keep it only on a backward whose graph a second backward must reach (a GAN's "
        "shared forward, a gradient penalty). glassgrad.memory_summary() counts these."
    ))


def live_retained() -> list:
    """(line, saved bytes, times reached again) of each retained graph still alive."""
    recs = [ref() for ref in _retained.values()]
    return [(rec.where, rec.nbytes, rec.reached) for rec in recs if rec is not None]


# --- gradients used as constants ------------------------------------------------------------------
class _Mark(weakref.ref):
    """A weak reference to a marked tensor (or a node that read one), with where it came from."""

    __slots__ = ("key", "op_where", "where")


_constants: dict = {}  # id(tensor) -> _Mark: gradients taken without create_graph, and ops on them
_const_nodes: dict = {}  # id(node) -> _Mark: recorded ops that read one of those as a constant


def _mark(store: dict, obj, callback, where: str, op_where: str | None = None) -> None:
    ref = _Mark(obj, callback)
    ref.key = id(obj)
    ref.where = where
    ref.op_where = op_where
    store[ref.key] = ref


def mark_grad_constants(tensors, where: str | None = None) -> None:
    """Mark the results of ``autograd.grad(create_graph=False)`` called by user code."""
    where = where or _user_frame()
    for t in tensors:
        if t is not None and id(t) not in _constants:
            _mark(_constants, t, _constant_died, where)
    _Hooks.grad_consts = len(_constants)


def _constant_died(ref) -> None:
    if _constants.get(ref.key) is ref:
        del _constants[ref.key]
    _Hooks.grad_consts = len(_constants)


def _marked(t):
    ref = _constants.get(id(t))
    return ref if ref is not None and ref() is t else None


def pass_mark(result, inputs) -> None:
    """An op that recorded no node: its result is as constant as the marked gradient it read."""
    for t in inputs:
        ref = _marked(t)
        if ref is not None:
            _mark(_constants, result, _constant_died, ref.where)
            _Hooks.grad_consts = len(_constants)
            return


def note_constant_inputs(node, inputs) -> None:
    """A recorded op read a marked gradient as a constant: remember the node for backward."""
    for t in inputs:
        ref = _marked(t)
        if ref is not None and not t._requires_grad:
            if id(node) not in _const_nodes:
                _Hooks.diagnose_backward += 1
            _mark(_const_nodes, node, _const_node_died, ref.where, _user_frame())
            return


def _const_node_died(ref) -> None:
    if _const_nodes.get(ref.key) is ref:
        del _const_nodes[ref.key]
        _Hooks.diagnose_backward -= 1


def _check_constants(seen) -> None:
    for n in seen:
        ref = _const_nodes.get(id(n))
        if ref is None or ref() is not n:
            continue
        Stats.grad_constants += 1
        _warn_at(ref.op_where, ("constant", ref.where), (
            f"glassgrad: a gradient returned by autograd.grad at {ref.where} without "
            f"create_graph=True feeds this backward as a constant, through {n.name()} at "
            f"{ref.op_where}: no gradient flows back through it, so its effect (a gradient "
            "penalty, a MAML inner step) on the parameters is silently zero. Pass "
            "create_graph=True to autograd.grad to differentiate through the gradient; if a "
            "constant is intended (first-order MAML), use .detach() on it to say so."
        ))
        return


# the error explanations, re-exported for graph.py and tensor.py
from .explain import (  # noqa: F401
    DATA_WRITE,
    DETACHED,
    VERSION_MASK,
    WriteLog,
    accept_data_writes,
    data_version,
    inplace_explanation,
    inplace_message,
    note_write,
    second_time_explanation,
    second_time_message,
)
