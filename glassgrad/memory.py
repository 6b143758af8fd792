"""Memory of live tensor buffers on the CPU, with PyTorch's ``torch.cuda.memory_*`` names.

``memory_allocated()``, ``max_memory_allocated()``, ``reset_peak_memory_stats()``,
``memory_stats()`` and ``memory_summary()`` count the bytes of live tensor buffers, each buffer once
(views, ``detach()``, ``.data``, saved aliases and broadcasts share their base's bytes), with a
breakdown into parameters, gradients, optimizer state, saved-for-backward and other.
``forecast(fn, *shapes)`` predicts the peak of one forward + backward and the bytes each module
saves. The same names are under ``glassgrad.cuda`` so the article's
``torch.cuda.memory_allocated()`` runs unchanged.

NOTE [Memory accounting]: counting costs nothing while nobody asks. The first call of any function
here turns tracking on: one ``gc`` walk finds the live tensors (tens of ms, once), then
``Tensor._make`` (and ``primitive._make``, its alias on the op path) is swapped for a version that
registers each new buffer: a weak reference to the buffer's owning array (``root_buffer``) whose
callback subtracts its bytes when NumPy frees it. ``memory_allocated()`` is then a counter read,
and the peak is exact: it moves when a buffer is registered, not at sampled points. While tracking
is on, each new tensor costs about half a microsecond more; ``set_tracking(False)`` swaps the plain
``_make`` back. The breakdown (``memory_stats``) walks the live objects once per call (a ``gc``
walk, milliseconds): parameters (Parameters, tensors in a Module's ``_parameters`` or an optimizer's
``param_groups``) > gradients (``.grad``) > optimizer state > saved for backward (buffers graph nodes
keep) > other; a buffer in several roles counts in the first.

Limits: only buffers that became Tensors are counted (a NumPy array kept in an op's attributes is
not; NumPy's temporaries inside one op are not); buffers inside ``vmap``'s batched arrays are not
counted; buffers made before tracking started are found only while a Tensor still holds them; the
peak covers the time since tracking started or the last ``reset_peak_memory_stats()``.

``record_timeline()`` and ``torch.cuda.memory._record_memory_history`` add a history of every
registration and free, with its op and line (NOTE [Memory timeline] in _memory_timeline.py).
"""

from __future__ import annotations

import gc
import weakref
from collections import OrderedDict

from numpy import ndarray

from .autograd import diagnostics as _diag
from .autograd.diagnostics import format_bytes, root_buffer, saved_arrays
from .autograd.graph import Node
from .ops import primitive as _primitive
from .tensor import Tensor

_ORIGINAL_MAKE = Tensor.__dict__["_make"]
_make_plain = _ORIGINAL_MAKE.__func__


class _Track:
    """Counters of the registry (class attributes: one lookup each)."""

    on = False
    current = 0  # bytes of live registered buffers
    peak = 0
    buffers = 0  # number of live registered buffers
    peak_buffers = 0
    allocated = 0  # bytes registered since tracking started
    freed = 0
    n_allocated = 0
    n_freed = 0


class _BufferRef(weakref.ref):
    __slots__ = ("key", "nbytes")


_live: dict = {}  # id(root buffer) -> _BufferRef
# the memory history (_memory_timeline.py) while one records: told of every registration and free
_listener: list = [None]


def _buffer_freed(ref) -> None:
    if _live.get(ref.key) is ref:
        del _live[ref.key]
        _Track.current -= ref.nbytes
        _Track.buffers -= 1
        _Track.freed += ref.nbytes
        _Track.n_freed += 1
        if _listener[0] is not None:
            _listener[0].free(ref.key, ref.nbytes)


def _register(root) -> None:
    key = id(root)
    if key in _live:
        return
    n = root.nbytes
    ref = _BufferRef(root, _buffer_freed)
    ref.key = key
    ref.nbytes = n
    _live[key] = ref
    t = _Track
    t.current += n
    t.buffers += 1
    t.allocated += n
    t.n_allocated += 1
    t.peak = max(t.peak, t.current)
    t.peak_buffers = max(t.peak_buffers, t.buffers)
    if _listener[0] is not None:
        _listener[0].alloc(root, n)


def _tracking_make(cls, arr):
    # NOTE [Memory accounting]: the one addition to Tensor creation while tracking is on
    t = _make_plain(cls, arr)
    a = t._array
    if type(a) is ndarray:  # NOTE: not a.__class__: vmap's BatchedArray claims to be an ndarray
        _register(a if a.base is None else root_buffer(a))
    return t


def _subclasses(cls) -> set:
    out = {cls}
    stack = [cls]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in out:
                out.add(sub)
                stack.append(sub)
    return out


def set_tracking(enabled: bool) -> None:
    """Turn buffer tracking on (one ``gc`` walk registers what is alive) or off (tensor creation is
    plain again). The memory functions turn it on by themselves; glassgrad's addition."""
    if enabled == _Track.on:
        return
    if not enabled and _listener[0] is not None:
        raise RuntimeError("set_tracking(False): a memory history is recording (NOTE [Memory "
                           "timeline]); stop it first with "
                           "torch.cuda.memory._record_memory_history(enabled=None)")
    _live.clear()
    for name in ("current", "peak", "buffers", "peak_buffers", "allocated", "freed",
                 "n_allocated", "n_freed"):
        setattr(_Track, name, 0)
    _Track.on = enabled
    if enabled:
        types = _subclasses(Tensor)
        for o in gc.get_objects():
            if type(o) in types and type(o._array) is ndarray:
                _register(root_buffer(o._array))
        Tensor._make = classmethod(_tracking_make)
    else:
        Tensor._make = _ORIGINAL_MAKE
    _primitive._make = Tensor._make


def is_tracking() -> bool:
    """True while tensor buffers are being counted (``set_tracking``)."""
    return _Track.on


def _ensure(peak: bool = False) -> None:
    if not _Track.on:
        set_tracking(True)
        if peak:
            _diag._warn_at(_diag._user_frame(), ("peak", _diag._user_frame()), (
                "glassgrad: memory counting starts with this call, so the peak is the current "
                "value. Call glassgrad.reset_peak_memory_stats() (or memory_allocated()) before "
                "the code to measure (NOTE [Memory accounting] in glassgrad/memory.py)."
            ))


def memory_allocated(device=None) -> int:
    """Bytes of live tensor buffers, each buffer once (``torch.cuda.memory_allocated``).

    The first call starts counting (NOTE [Memory accounting] in this module). ``device`` is accepted
    for PyTorch's signature; glassgrad has one device, the CPU.

    Example::

        >>> x = glassgrad.zeros(1000)          # 4000 bytes more
        >>> glassgrad.memory_allocated() >= 4000
        True
    """
    _ensure()
    return _Track.current


def max_memory_allocated(device=None) -> int:
    """The peak of ``memory_allocated()`` since counting started or the last
    ``reset_peak_memory_stats()`` (``torch.cuda.max_memory_allocated``); exact, not sampled.
    The first memory call starts counting: called first, it warns that the peak is the current
    value."""
    _ensure(peak=True)
    return _Track.peak


def reset_peak_memory_stats(device=None) -> None:
    """Set the peak to the current value (``torch.cuda.reset_peak_memory_stats``)."""
    _ensure()
    _Track.peak = _Track.current
    _Track.peak_buffers = _Track.buffers


def reset_max_memory_allocated(device=None) -> None:
    """``reset_peak_memory_stats()`` under PyTorch's older name."""
    reset_peak_memory_stats(device)


def memory_reserved(device=None) -> int:
    """Same as ``memory_allocated()``: NumPy returns memory to the system, nothing is cached."""
    return memory_allocated(device)


def max_memory_reserved(device=None) -> int:
    """Same as ``max_memory_allocated()`` (nothing is cached)."""
    return max_memory_allocated(device)


def empty_cache() -> None:
    """Nothing to do: glassgrad keeps no cache of freed buffers (``torch.cuda.empty_cache``)."""


CATEGORIES = ("parameters", "gradients", "optimizer_state", "saved_for_backward", "other")


def breakdown() -> dict:
    """Live bytes by role: ``{"parameters", "gradients", "optimizer_state", "saved_for_backward",
    "other"}`` (summing to ``memory_allocated()``), each buffer once, in the first role that holds
    it. One walk over the live objects (milliseconds); glassgrad's addition."""
    out = dict.fromkeys(CATEGORIES, 0)
    for rank, root in role_map().values():
        if rank < 4:
            out[CATEGORIES[rank]] += root.nbytes
    out["other"] = max(_Track.current - sum(out.values()), 0)
    return out


def role_map() -> dict:
    """``{id(root buffer): [rank, root buffer]}`` of every buffer a live tensor, gradient, module,
    optimizer or graph node holds; ``rank`` indexes ``CATEGORIES`` (4: a tensor with no other
    role). The walk behind ``breakdown``; it registers what it finds (tracking on)."""
    _ensure()
    from .nn.module import Module
    from .nn.parameter import Parameter
    from .optim.optimizer import Optimizer

    kinds = {}
    for k, cls in enumerate((Tensor, Node, Module, Optimizer)):
        for sub in _subclasses(cls):
            kinds[sub] = k
    found = ([], [], [], [])
    for o in gc.get_objects():
        k = kinds.get(type(o))
        if k is not None:
            found[k].append(o)
    tensors, nodes, modules, optimizers = found
    roles: dict = {}  # id(root) -> [rank, root]

    def put(arr, rank) -> None:
        if type(arr) is not ndarray:
            return
        root = root_buffer(arr)
        entry = roles.get(id(root))
        if entry is None:
            roles[id(root)] = [rank, root]
            _register(root)
        elif rank < entry[0]:
            entry[0] = rank

    for t in tensors:
        put(t._array, 0 if isinstance(t, Parameter) else 4)
        if t._grad is not None:
            put(t._grad._array, 1)
    for m in modules:
        for p in m.__dict__.get("_parameters", {}).values():
            if p is not None:
                put(p._array, 0)
    for opt in optimizers:
        for group in getattr(opt, "param_groups", ()):
            for p in group.get("params", ()):
                put(p._array, 0)
        for state in getattr(opt, "state", {}).values():
            for v in state.values() if isinstance(state, dict) else ():
                if isinstance(v, Tensor):
                    put(v._array, 2)
    for n in nodes:
        for arr in saved_arrays(n):
            put(arr, 3)
    return roles


def memory_stats(device=None) -> OrderedDict:
    """Counters as a dict with PyTorch's keys (``torch.cuda.memory_stats``):
    ``allocated_bytes.all.{current,peak,allocated,freed}``, ``allocation.all.*`` (buffer counts),
    plus glassgrad's ``breakdown.<role>`` bytes and ``retained_graphs.*`` diagnostics (backward
    calls that retained, graphs reached again, graphs dropped unused and the bytes they kept)."""
    _ensure(peak=True)
    parts = breakdown()
    t = _Track
    stats = {
        "allocated_bytes.all.current": t.current,
        "allocated_bytes.all.peak": t.peak,
        "allocated_bytes.all.allocated": t.allocated,
        "allocated_bytes.all.freed": t.freed,
        "allocation.all.current": t.buffers,
        "allocation.all.peak": t.peak_buffers,
        "allocation.all.allocated": t.n_allocated,
        "allocation.all.freed": t.n_freed,
        "active_bytes.all.current": t.current,
        "active_bytes.all.peak": t.peak,
        "reserved_bytes.all.current": t.current,
        "reserved_bytes.all.peak": t.peak,
        "num_alloc_retries": 0,
        "num_ooms": 0,
    }
    for name, value in parts.items():
        stats[f"breakdown.{name}"] = value
    live = _diag.live_retained()
    s = _diag.Stats
    stats.update({
        "retained_graphs.calls": s.retained,
        "retained_graphs.live": len(live),
        "retained_graphs.live_bytes": sum(b for _, b, _ in live),
        "retained_graphs.reached_again": s.reached_again,
        "retained_graphs.dropped_unused": s.dropped_unused,
        "retained_graphs.dropped_unused_bytes": s.dropped_unused_bytes,
        "retained_graphs.growing": s.growing,
        "diagnostics.data_writes": s.data_writes,
        "diagnostics.grad_constants": s.grad_constants,
    })
    return OrderedDict(sorted(stats.items()))


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A readable report of ``memory_stats()`` (``torch.cuda.memory_summary``): current and peak
    bytes, the breakdown by role, and the retained-graph diagnostics (graphs kept by
    ``retain_graph=True`` that no later backward used, with the bytes they held)."""
    s = memory_stats(device)
    rule = "=" * 72

    def row(label, *cells) -> str:
        return f"{label:<30}" + "".join(f"{c:>14}" for c in cells)

    lines = [rule, f"{'glassgrad memory summary (CPU, live tensor buffers)':^72}", rule,
             row("", "current", "peak", "buffers"),
             row("allocated", format_bytes(s["allocated_bytes.all.current"]),
                 format_bytes(s["allocated_bytes.all.peak"]), s["allocation.all.current"])]
    if not abbreviated:
        # totals since counting started, one row each (no signs: never a "-0 B")
        lines.append(row("allocated since counting", format_bytes(
            s["allocated_bytes.all.allocated"]), "", s["allocation.all.allocated"]))
        lines.append(row("freed since counting", format_bytes(
            s["allocated_bytes.all.freed"]), "", s["allocation.all.freed"]))
    lines += [rule, "by role (each buffer once):"]
    total = s["allocated_bytes.all.current"] or 1
    for name in CATEGORIES:
        b = s[f"breakdown.{name}"]
        lines.append(row("  " + name.replace("_", " "), format_bytes(b), f"{100 * b / total:.1f}%"))
    lines += [
        rule, "retain_graph=True diagnostics:",
        row("  backward calls that retained", s["retained_graphs.calls"]),
        row("  retained graphs alive", s["retained_graphs.live"]) + "   holding "
        + format_bytes(s["retained_graphs.live_bytes"]),
        row("  reached again by a backward", s["retained_graphs.reached_again"]),
        row("  dropped, never used again", s["retained_graphs.dropped_unused"]) + "   kept "
        + format_bytes(s["retained_graphs.dropped_unused_bytes"]) + " for nothing",
        row("  growing across iterations", s["retained_graphs.growing"]),
    ]
    if not abbreviated:
        for where, nbytes, reached in _diag.live_retained()[:10]:
            lines.append(f"    alive: {format_bytes(nbytes)} from the backward at {where}"
                         f" (reached again {reached}x)")
    lines.append(rule)
    return "\n".join(lines)


from ._memory_forecast import Forecast, forecast  # noqa: F401
from ._memory_timeline import MemoryTimeline, record_timeline  # noqa: F401,E402
