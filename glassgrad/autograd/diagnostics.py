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
"""

from __future__ import annotations

import sys
import warnings
import weakref

from numpy import ndarray

from . import graph as _graph
from .graph import AccumulateGrad, SavedTensor, _Hooks

DATA_WRITE = 1 << 32  # added to a watched version counter by a write through ``.data``
VERSION_MASK = DATA_WRITE - 1
_PACKAGE_DIR = _graph._PACKAGE_DIR
_TENSOR_FILE = _PACKAGE_DIR + "/tensor.py"


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
    if key in _warned:
        return
    _warned.add(key)
    filename, _, line = (where or "").rpartition(":")
    if filename and line.isdigit():
        warnings.warn_explicit(message, UserWarning, filename, int(line), module="glassgrad")
    else:
        warnings.warn(message, UserWarning, stacklevel=3)


def reset() -> None:
    """Forget which diagnostics already warned and zero the counters (for tests)."""
    _warned.clear()
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
    """The arrays ``node`` keeps for backward (hook-packed ones when they are arrays or Tensors)."""
    out = []
    for s in node._saved or ():
        if type(s) is SavedTensor:
            if s._unpack_hook is None:
                out.append(s._tensor._array)
                continue
            s = s._packed
        for p in s if isinstance(s, (tuple, list)) else (s,):
            if isinstance(p, ndarray):
                out.append(p)
            elif hasattr(p, "_array") and isinstance(p._array, ndarray):
                out.append(p._array)
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
                arr = s._tensor._array
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

    __slots__ = ("where",)

    def __init__(self, where: str) -> None:
        self.where = where

    def __repr__(self) -> str:
        return f"<backward at {self.where}>"


def backward_call() -> BackwardCall:
    """The record a non-retaining backward leaves in the nodes it frees (~1 us per backward)."""
    return BackwardCall(_user_frame())


def called_by_user() -> bool:
    """True when ``engine.backward``/``engine.grad`` was called by user code (directly or through
    ``Tensor.backward``), not by glassgrad itself (jacobian, gradcheck, func transforms)."""
    f = sys._getframe(2)
    if f.f_code.co_filename == _TENSOR_FILE:
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
        try:
            _graph_dropped(self)
        except Exception:  # noqa: BLE001 - interpreter shutdown: modules half torn down
            pass


_retained: dict = {}  # id(RetainedGraph) -> weakref to it, while any node of its graph lives
_growth: dict = {}  # backward line -> nodes of earlier retained graphs its last backward reached


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
_constants: dict = {}  # id(tensor) -> (weakref, where the gradient was taken)
_const_nodes: dict = {}  # id(node) -> (weakref, gradient's where, node's where)


def mark_grad_constants(tensors, where: str | None = None) -> None:
    """Mark the results of ``autograd.grad(create_graph=False)`` called by user code."""
    where = where or _user_frame()
    for t in tensors:
        if t is not None and id(t) not in _constants:
            _constants[id(t)] = (weakref.ref(t, _constant_died), where)
    _Hooks.grad_consts = len(_constants)


def _constant_died(ref) -> None:
    for key, (r, _) in list(_constants.items()):
        if r is ref:
            del _constants[key]
    _Hooks.grad_consts = len(_constants)


def pass_mark(result, inputs) -> None:
    """An op that recorded no node: its result is as constant as the marked gradient it read."""
    for t in inputs:
        entry = _constants.get(id(t))
        if entry is not None and entry[0]() is t:
            _constants[id(result)] = (weakref.ref(result, _constant_died), entry[1])
            _Hooks.grad_consts = len(_constants)
            return


def note_constant_inputs(node, inputs) -> None:
    """A recorded op read a marked gradient as a constant: remember the node for backward."""
    for t in inputs:
        entry = _constants.get(id(t))
        if entry is not None and entry[0]() is t and not t._requires_grad:
            ref = weakref.ref(node, _const_node_died)
            _const_nodes[id(node)] = (ref, entry[1], _user_frame())
            _Hooks.diagnose_backward += 1
            return


def _const_node_died(ref) -> None:
    for key, entry in list(_const_nodes.items()):
        if entry[0] is ref:
            del _const_nodes[key]
            _Hooks.diagnose_backward -= 1


def _check_constants(seen) -> None:
    for n in seen:
        entry = _const_nodes.get(id(n))
        if entry is None or entry[0]() is not n:
            continue
        Stats.grad_constants += 1
        _, grad_where, op_where = entry
        _warn_at(op_where, ("constant", grad_where), (
            f"glassgrad: a gradient returned by autograd.grad at {grad_where} without "
            f"create_graph=True feeds this backward as a constant, through {n.name()} at "
            f"{op_where}: no gradient flows back through it, so its effect (a gradient penalty, "
            "a MAML inner step) on the parameters is silently zero. Pass create_graph=True to "
            "autograd.grad to differentiate through the gradient; if a constant is intended "
            "(first-order MAML), use .detach() on it to say so."
        ))
        return


# --- version counters: in-place writes and .data --------------------------------------------------
class WriteLog:
    """``vc[1]`` of a watched version counter: the last in-place writes (version after, op, line),
    and for a ``.data`` tensor the counter of the tensor it was taken from."""

    __slots__ = ("data_of", "writes")

    def __init__(self, data_of=None) -> None:
        self.data_of = data_of
        self.writes = []

    def add(self, version: int, op: str, where: str) -> None:
        self.writes.append((version, op, where))
        if len(self.writes) > 8:
            del self.writes[0]


def data_version(vc) -> list:
    """The version counter ``.data`` hands out: its own, linked to the original's."""
    if len(vc) > 1 and vc[1] is not None and vc[1].data_of is not None:
        vc = vc[1].data_of
    return [0, WriteLog(vc)]


def note_write(t, op: str) -> None:
    """``Tensor._write`` on a watched counter (saved for backward, or taken by ``.data``)."""
    vc = t._vc
    log = vc[1]
    if log is None:
        log = vc[1] = WriteLog()
    where = _user_frame()
    log.add(vc[0], op + "_", where)
    orig = log.data_of
    if orig is not None and len(orig) > 1:
        orig[0] += DATA_WRITE
        if orig[1] is None:
            orig[1] = WriteLog()
        orig[1].add(orig[0], op + "_ through .data", where)


def accept_data_writes(t, saved, node) -> bool:
    """Slow path of the saved-tensor version check: True (after a warning) when only writes through
    ``.data`` changed the buffer, which PyTorch lets pass silently; False for a real in-place."""
    now = t._vc[0]
    diff = now - saved._version
    if diff <= 0 or diff & VERSION_MASK:
        return False
    saved._version = now
    Stats.data_writes += 1
    writes = _writes_since(t._vc, now - diff)
    where = writes[-1][2] if writes else None
    at = f" ({writes[-1][1]} at {where})" if writes else ""
    _warn_at(where or node.source, ("data", where, node.name()), (
        f"glassgrad: the {_describe(t)} tensor saved by {node.name()}"
        + (f" (created at {node.source})" if node.source else "")
        + f" was overwritten through .data{at} after it was saved. Autograd cannot see writes "
        "through .data (PyTorch says nothing), so this backward uses the new values and its "
        "gradients do not belong to the forward that ran. Write to the tensor itself under "
        "torch.no_grad() (backward then raises if the graph still needs the old values), or "
        "clone() it before the forward."
    ))
    return True


def _writes_since(vc, version: int) -> list:
    log = vc[1] if len(vc) > 1 else None
    if log is None:
        return []
    return [w for w in log.writes if w[0] > version]


def _describe(t) -> str:
    from .. import dtypes

    return f"{list(t._array.shape)} {dtypes._FROM_NP[t._array.dtype]}".replace("glassgrad.", "")


def inplace_explanation(t, saved_version: int, node, is_output: bool) -> str:
    """glassgrad's part of the in-place error: the saved tensor as the user made it (variable,
    creator, line), the in-place writes since it was saved (op, line), and the fix."""
    if is_output:
        creator, what = node, "its output"
    else:
        creator = t.grad_fn
        while creator is not None and creator._seq > node._seq and creator.next_functions:
            creator = creator.next_functions[0][0]  # back through the in-place ops' history
        what = "an input"
    names = _user_names(t)
    made = "a leaf tensor" if creator is None or type(creator) is AccumulateGrad else (
        f"the output of {creator.name()}" + (f" at {creator.source}" if creator.source else ""))
    if not is_output and creator is None:
        made = "a leaf tensor (a parameter?)" if t._requires_grad else "a tensor with no history"
    text = (f"glassgrad: {node.name()}" + (f" (created at {node.source})" if node.source else "")
            + f" saved {what}: {_describe(t)}{names}, {made}. ")
    writes = _writes_since(t._vc, saved_version)
    if writes:
        text += "It was then changed in place by " + "; ".join(
            f"{op} at {where} (now version {v & VERSION_MASK})" for v, op, where in writes[:3])
        text += ". "
    else:
        step = _optimizer_of(t)
        count = (t._vc[0] - saved_version) & VERSION_MASK
        text += (f"It was then changed in place {count} time(s)"
                 + (f", by {step}" if step else " (by an optimizer step, x[...] = ..., or code "
                    "outside glassgrad's in-place ops)") + ". ")
    return text + (
        "Use .clone() before the in-place op, or make it out of place (x = x * 2 instead of "
        "x *= 2). An optimizer.step() between a forward and its backward is the usual cause in "
        "GAN loops: run every backward that uses the forward first, then step."
    )


def _user_frames(limit: int = 4):
    f = sys._getframe(2)
    while f is not None and limit:
        if not f.f_code.co_filename.startswith(_PACKAGE_DIR):
            yield f
            limit -= 1
        f = f.f_back


def _user_names(t) -> str:
    """The user's names for ``t`` (a local variable, or a module's parameter), from the frames
    that called backward. Read only when an error is being explained."""
    from ..tensor import Tensor

    vc = t._vc
    found = []
    for f in _user_frames():
        for name, value in f.f_locals.items():
            if isinstance(value, Tensor) and value._vc is vc and value._array is t._array:
                found.append(f"`{name}`")
            elif hasattr(value, "named_parameters") and hasattr(value, "_parameters"):
                for pname, p in value.named_parameters():
                    if p._vc is vc:
                        found.append(f"`{name}.{pname}`")
        if found:
            break
    return " (" + ", ".join(dict.fromkeys(found)) + ")" if found else ""


def _optimizer_of(t) -> str | None:
    vc = t._vc
    for f in _user_frames():
        for name, value in f.f_locals.items():
            groups = getattr(value, "param_groups", None)
            if isinstance(groups, list) and hasattr(value, "step"):
                for g in groups:
                    if any(getattr(p, "_vc", None) is vc for p in g.get("params", ())):
                        return f"`{name}.step()` ({type(value).__name__} updates its parameters in place)"
    return None


# --- the second backward --------------------------------------------------------------------------
def second_time_explanation(node) -> str:
    """glassgrad's part of "Trying to backward through the graph a second time": the node, the
    backward that freed it, and (same line: a loop) the tensor carried across iterations."""
    freed_by = node._freed if isinstance(node._freed, BackwardCall) else None
    head = (f"glassgrad: {node.name()}" + (f" (created at {node.source})" if node.source else "")
            + " already released its saved tensors in an earlier backward"
            + (f" (the backward at {freed_by.where})" if freed_by else "") + ". ")
    now = _user_frame()
    if freed_by is not None and freed_by.where == now:
        carried = _carried_tensor(node)
        return head + (
            "That backward is on the same line as this one: this iteration's graph reaches into "
            "the previous iteration's graph through a tensor carried across iterations (an RNN "
            f"hidden state, a running total){carried}. Detach it at the start of each iteration "
            "(h = h.detach()) rather than passing retain_graph=True: retaining would make every "
            "backward run through all earlier iterations and keep their memory alive, so the "
            "graph would grow without bound."
        )
    return head + (
        "If two losses share this graph (a GAN's discriminator and generator losses), pass "
        "retain_graph=True to the first backward only; or detach the shared tensor "
        "(fake.detach()) for the loss that must not reach it; or recompute the forward."
    )


def _carried_tensor(node) -> str:
    """Shape of ``node``'s output as this backward's graph consumes it (from the engine's walk)."""
    from . import engine

    code = engine.run.__code__
    f = sys._getframe(1)
    while f is not None and f.f_code is not code:
        f = f.f_back
    if f is None:
        return ""
    for consumer in f.f_locals.get("seen", ()):
        for k, (nxt, _) in enumerate(consumer.next_functions):
            if nxt is node and consumer._in_meta:
                shape, dtype = consumer._in_meta[k]
                src = f" made at {node.source}" if node.source else ""
                return f": here the {list(shape)} {dtype} tensor from {node.name()}{src}"
    return ""
