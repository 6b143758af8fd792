"""The memory history of the CPU: every tensor buffer's allocation and free, with its op and line.

NOTE [Memory timeline]: while a history records, ``memory._register`` and the weak-reference
callback that frees a buffer (NOTE [Memory accounting] in memory.py) tell ``_History`` of each
event. An allocation reads the Python stack once (a few microseconds): the innermost primitive
(``aten::addmm``), the backward node the engine is running (``AddmmBackward0``), the phase
(``forward`` under grad mode, ``no_grad``, ``backward`` inside the engine, ``optimizer`` inside
``glassgrad/optim``) and the user's frames. A buffer's *kind* is decided by walks over the live
objects (``memory.role_map``, milliseconds) at the moments roles settle: when the phase of the
allocations changes (the end of forward, of backward, of the optimizer step) and at the ends of a
recorded window. A walk gives each buffer one role, the first of parameters > gradients >
optimizer state > saved for backward that holds it; one with none is an *activation* when a
forward op made it during the window, else *other* (inputs, data, backward temporaries and the
gradients of non-leaves, which PyTorch's memory profiler calls AUTOGRAD_DETAIL). The first walk
after a buffer is made gives its kind from its allocation on; a later walk that finds another role
moves its bytes there from that moment (a ``retype`` event: an input saved by forward is *saved*
until backward frees the graph, then *other* again). Between walks, kinds are those of the last
walk: a role taken and dropped between two walks is not seen.

PyTorch's CUDA names map onto it (``glassgrad.cuda.memory``): ``_record_memory_history`` starts
and stops this history; ``_snapshot()`` returns PyTorch's snapshot dict, where each live NumPy
buffer is one segment holding one ``active_allocated`` block (NumPy has no caching allocator: no
``inactive`` blocks, no ``segment_alloc``/``segment_free``, no ``free_requested`` or ``oom``
entries), ``device_traces[0]`` the ``alloc`` / ``free_completed`` entries with the user's
``frames``; ``_dump_snapshot`` pickles that dict as PyTorch does. Each entry also carries
glassgrad's ``op``, ``phase`` and ``kind``. ``record_timeline()`` cuts one window (a training step)
out of the history as a ``MemoryTimeline``: live bytes over time by kind, the peaks with their op
and line, a PNG (``plot``) and the data the inspect report draws.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
from collections import deque

from . import memory as _memory
from .autograd.grad_mode import _state
from .autograd.profiler import aten_name

KINDS = ("parameters", "gradients", "optimizer_state", "saved_for_backward", "activations", "other")
_PKG = os.path.dirname(os.path.abspath(__file__))
_ENGINES = (os.path.join(_PKG, "autograd", "engine.py"),
            os.path.join(_PKG, "autograd", "engine_arrays.py"))
_OPTIM = os.path.join(_PKG, "optim") + os.sep
_APPLY = {"apply", "apply_unary", "apply_binary", "apply_scalar", "apply_inplace", "_apply_multi"}
_DEPTH = 16  # user frames kept per allocation (PyTorch keeps the whole stack)


def _where(frames_wanted: bool) -> tuple:
    """(op, phase, user frames innermost first) of the allocation being registered now."""
    try:
        f = sys._getframe(3)
    except ValueError:  # a free run from a shallow stack (a callback at the top of a thread)
        f = None
    prim = node = phase = api = stepper = None
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        if not fn.startswith(_PKG):
            break
        name = code.co_name
        if fn in _ENGINES:
            phase = phase or "backward"
            if node is None:  # the node the engine runs (run, run_arrays, _call call it so)
                node = getattr(f.f_locals.get("node"), "name", None)
        elif prim is None and name in _APPLY:
            c = f.f_locals.get("cls")
            prim = c if isinstance(c, type) else None
        elif fn.startswith(_OPTIM):
            phase = phase or "optimizer"
            if name == "step" and stepper is None:
                stepper = type(f.f_locals.get("self")).__name__  # Adam.step, not just step
        if api is None and not name.startswith(("_", "<")) and name != "wrapper":
            api = name  # the innermost public function (randn, zeros_like)
        f = f.f_back
    frames = []
    while f is not None and len(frames) < (_DEPTH if frames_wanted else 1):
        frames.append({"filename": f.f_code.co_filename, "line": f.f_lineno,
                       "name": f.f_code.co_name})
        f = f.f_back
    if node is not None:
        op = node()
    elif prim is not None:
        op = aten_name(prim)
    elif api == "step" and stepper is not None:
        op = f"{stepper}.step"
    else:
        op = api or "?"
    return op, phase or ("forward" if _state.enabled else "no_grad"), frames


class _History:
    """The process's allocation history while ``_record_memory_history`` is on."""

    def __init__(self, trace: bool, context, max_entries: int, skip=()):
        self.events: deque = deque()  # (t, action, block, frames of a free or a retype's ranks)
        self.configure(trace, context, max_entries, skip)
        self.live: dict = {}  # id(root buffer) -> block
        self.t = 0
        self.phase = None
        self.busy = False  # a role walk registers what it finds: no walk inside a walk
        self.tag = None  # () -> the module running now (the inspect report), or None

    def configure(self, trace: bool, context, max_entries: int, skip=()) -> tuple:
        """Set what is kept (a later ``_record_memory_history`` call changes it, as in
        PyTorch); return the settings it replaced."""
        old = getattr(self, "config", None)
        self.config = (trace, context, max_entries, tuple(skip))
        self.keep_trace = trace
        self.frames = context in ("alloc", "all", "state")
        self.free_frames = context == "all"
        self.skip = set(skip)
        # "state" keeps no history: PyTorch's allocator then keeps max_entries=1
        maxlen = None if trace and max_entries >= sys.maxsize else max(int(max_entries), 1) \
            if trace else 1
        if maxlen != self.events.maxlen:
            self.events = deque(self.events, maxlen=maxlen)
        return old

    def seed(self) -> None:
        for key, ref in list(_memory._live.items()):
            root = ref()
            if root is not None and key not in self.live:
                self.live[key] = self._block(root, ref.nbytes, "(alive when recording began)",
                                             "before", [])

    def _block(self, root, n, op, phase, frames) -> dict:
        self.t += 1
        return {"addr": root.__array_interface__["data"][0], "size": n, "op": op,
                "phase": phase, "frames": frames, "t": self.t, "rank": 9, "first": 9,
                "module": None if self.tag is None else self.tag(),
                "time_us": time.perf_counter_ns() // 1000}

    def alloc(self, root, n) -> None:
        if self.busy:
            block = self._block(root, n, "(found by a role walk)", self.phase or "before", [])
        else:
            op, phase, frames = _where(self.frames)
            if phase != self.phase:
                if self.phase is not None:
                    self.classify()  # the previous phase ended: its buffers' roles settled
                self.phase = phase
            block = self._block(root, n, op, phase, frames)
        self.live[id(root)] = block
        self.events.append((block["t"], "alloc", block, None))

    def free(self, key, n) -> None:
        block = self.live.pop(key, None)
        if block is None:
            return
        self.t += 1
        frames = None
        if self.free_frames and not self.busy:
            frames = _where(True)[2]
        self.events.append((self.t, "free_completed", block, frames))

    def classify(self) -> None:
        """One walk over the live objects: each live buffer's role now. The first walk a buffer
        sees gives its kind since it was made; a later change is a "retype" event then."""
        if self.busy:
            return
        self.busy = True
        try:
            roles = _memory.role_map()
        finally:
            self.busy = False
        for key, block in self.live.items():
            r = roles.get(key)
            rank = r[0] if r is not None else 4
            if block["first"] == 9:
                block["first"] = block["rank"] = rank
            elif rank != block["rank"]:
                self.t += 1
                self.events.append((self.t, "retype", block, (block["rank"], rank)))
                block["rank"] = rank

    def live_ranks(self) -> list:
        """(block, its rank now) of every live buffer: where a window starts."""
        return [(b, b["rank"]) for b in self.live.values()]


_HISTORY: list = [None]
_TRACKING_BEFORE: list = [True]  # whether buffer tracking was on before the history started it


def _start(enabled="all", context="all", max_entries: int = sys.maxsize,
           clear_history: bool = False, skip_actions=()) -> _History:
    h = _HISTORY[0]
    if h is None or clear_history:
        if h is None:
            _TRACKING_BEFORE[0] = _memory.is_tracking()
        _memory._ensure()
        h = _History(enabled == "all", context, max_entries, skip_actions)
        h.seed()
        _HISTORY[0] = h
        _memory._listener[0] = h
    else:
        h.configure(enabled == "all", context, max_entries, skip_actions)
    return h


def _full() -> tuple:
    """(the history, whether this call started it, the settings to restore or None): a history
    that keeps every event, for a window cut out of it (``record_timeline``, the inspect
    report); a running one that keeps fewer is widened until the window ends."""
    h = _HISTORY[0]
    if h is None:
        return _start(), True, None
    if h.config[0] and h.config[2] >= sys.maxsize:
        return h, False, None
    return h, False, h.configure(True, h.config[1] or "alloc", sys.maxsize, h.config[3])


def _stop() -> None:
    _HISTORY[0] = None
    _memory._listener[0] = None
    if not _TRACKING_BEFORE[0]:
        # a history turned tracking on: turn it off again, so that recording one step does not
        # leave every later tensor creation paying for the accounting (NOTE [Memory accounting])
        _memory.set_tracking(False)


def kind_of(block: dict, t0: int = 0, rank=None) -> str:
    """The kind of a recorded buffer whose role is ``rank`` (by default its role at the last
    walk; NOTE [Memory timeline]); ``t0``: the event number where the window starts."""
    rank = block["rank"] if rank is None else rank
    if rank < 4:
        return KINDS[rank]
    if block["t"] > t0 and block["phase"] == "forward":
        return "activations"
    return "other"


def _source(frames) -> str | None:
    return f"{frames[0]['filename']}:{frames[0]['line']}" if frames else None


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize,
                           device=None, clear_history=False, compile_context=False,
                           global_record_annotations=False, skip_actions=None) -> None:
    """Record every tensor buffer's allocation and free with the user's stack
    (``torch.cuda.memory._record_memory_history``; NOTE [Memory timeline] in this module).

    ``enabled``: ``"all"`` keeps the history of events, ``"state"`` only what is alive, ``None``
    stops recording. ``context``: ``None`` records no frames, ``"state"``/``"alloc"`` frames of
    allocations, ``"all"`` also of frees. ``max_entries`` bounds the kept events (oldest dropped).
    ``skip_actions`` leaves those actions out of ``_snapshot``'s trace. ``clear_history`` drops
    the events kept so far; a second call while recording changes what is kept, as in PyTorch.
    ``stacks`` (``"python"``/``"all"``: glassgrad has no C++ frames), ``device``,
    ``compile_context``, ``global_record_annotations`` are accepted for PyTorch's signature.
    Raises RuntimeError with PyTorch's words for an unknown ``enabled``, ``context`` or
    ``stacks`` (its allocator's TORCH_CHECKs)."""
    if enabled is not None and enabled not in ("state", "all"):
        raise RuntimeError("expected state to be 'state', 'all', or None")
    if context is not None and context not in ("state", "alloc", "all"):
        raise RuntimeError("expected context to be 'state', 'alloc', 'all', or None")
    if stacks not in ("python", "all"):
        raise RuntimeError("expected stacks to be 'python', or 'all'")
    if enabled is None:
        _stop()
        return
    _start(enabled, context, max_entries, clear_history, skip_actions or ())


def _snapshot(device=None, augment_with_fx_traces=False) -> dict:
    """PyTorch's memory snapshot dict (``torch.cuda.memory._snapshot``) for the CPU's buffers:
    ``{"segments": [...], "device_traces": [[...]]}`` (NOTE [Memory timeline]). Without a
    recording history the segments list what is alive now (no frames) and the trace is empty."""
    h = _HISTORY[0]
    if h is None:
        _memory._ensure()
        h = _History(False, None, 0)
        h.seed()
    else:
        h.classify()
    segments = []
    for block in h.live.values():
        size = block["size"]
        segments.append({
            "device": 0, "address": block["addr"], "total_size": size, "allocated_size": size,
            "active_size": size, "requested_size": size, "stream": 0,
            "segment_type": "large" if size > 1 << 20 else "small", "segment_pool_id": (0, 0),
            "is_expandable": False, "frames": [],
            "blocks": [{"address": block["addr"], "size": size, "requested_size": size,
                        "state": "active_allocated", "frames": block["frames"],
                        "op": block["op"], "kind": kind_of(block)}]})
    trace = []
    if h.keep_trace:
        for _, action, block, free_frames in h.events:
            if action == "retype" or action in h.skip:  # (retype: glassgrad's own event)
                continue
            trace.append({"action": action, "addr": block["addr"], "size": block["size"],
                          "stream": 0, "time_us": block["time_us"],
                          "frames": block["frames"] if action == "alloc" else free_frames or [],
                          "op": block["op"], "phase": block["phase"], "kind": kind_of(block)})
    return {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"backend": "numpy"}}


def _dump_snapshot(filename="dump_snapshot.pickle", augment_with_fx_traces=False) -> None:
    """Pickle ``_snapshot()`` to ``filename`` (``torch.cuda.memory._dump_snapshot``)."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


class MemoryTimeline:
    """Live tensor bytes over one recorded window, by kind (``KINDS``), with the peaks.

    ``t`` (event numbers) and ``series`` (kind -> bytes after each event) give the curve;
    ``peak`` is the highest point: its ``bytes``, ``op``, ``source`` ("file:line"), ``phase``,
    ``module`` (the module call that allocated, when the inspect report tags them), bytes
    ``by_kind`` and ``by_module``, and the ``top`` live buffers there with the op and line that
    made each; ``phase_peaks`` the highest point of each phase (forward, backward,
    optimizer...); ``events`` one dict per allocation, free or retype. Made by
    ``record_timeline()``; glassgrad's addition (for CUDA, PyTorch draws a timeline from the
    snapshot file, which ``_dump_snapshot`` writes here too)."""

    def __init__(self, label: str = "step"):
        self.label = label
        self.t: list = []
        self.series: dict = {k: [] for k in KINDS}
        self.events: list = []
        self.peak: dict = {}
        self.phase_peaks: list = []

    def _fill(self, start: list, events: list, t0: int) -> None:
        cur = dict.fromkeys(KINDS, 0)
        live = {}  # id(block) -> (block, its kind now)
        for b, rank in start:
            k = kind_of(b, t0, rank)
            cur[k] += b["size"]
            live[id(b)] = (b, k)
        self.baseline = dict(cur)
        self._point(t0, cur)
        best = {"bytes": sum(cur.values()), "t": t0, "op": None, "source": None,
                "phase": "start", "module": None, "live": dict(live)}
        per_phase: dict = {}
        for t, action, block, extra in events:
            if action == "alloc":
                k = kind_of(block, t0, block["first"])
                cur[k] += block["size"]
                live[id(block)] = (block, k)
            elif id(block) not in live:
                continue
            elif action == "retype":
                old = live[id(block)][1]
                k = kind_of(block, t0, extra[1])
                cur[old] -= block["size"]
                cur[k] += block["size"]
                live[id(block)] = (block, k)
            else:
                k = live.pop(id(block))[1]
                cur[k] -= block["size"]
            self._point(t, cur)
            total = sum(cur.values())
            self.events.append({"t": t, "action": action, "bytes": block["size"], "kind": k,
                                "op": block["op"], "phase": block["phase"],
                                "module": block["module"], "source": _source(block["frames"]),
                                "total": total})
            if action == "alloc":
                ph = block["phase"]
                if total > per_phase.get(ph, {"bytes": -1})["bytes"]:
                    per_phase[ph] = {"phase": ph, "bytes": total, "t": t, "op": block["op"],
                                     "module": block["module"],
                                     "source": _source(block["frames"])}
                if total > best["bytes"]:
                    best = {"bytes": total, "t": t, "op": block["op"], "phase": ph,
                            "module": block["module"], "source": _source(block["frames"]),
                            "live": dict(live)}
        top = sorted(best.pop("live").values(), key=lambda bk: -bk[0]["size"])
        best["by_kind"] = {k: sum(b["size"] for b, bk in top if bk == k) for k in KINDS}
        best["top"] = [{"bytes": b["size"], "kind": k, "op": b["op"], "module": b["module"],
                        "source": _source(b["frames"])} for b, k in top[:8]]
        by_module: dict = {}  # what is alive at the peak, by the module call that made it
        for b, _ in top:
            by_module[b["module"]] = by_module.get(b["module"], 0) + b["size"]
        best["by_module"] = sorted(([m, v] for m, v in by_module.items()), key=lambda mv: -mv[1])
        self.peak = best
        self.phase_peaks = sorted(per_phase.values(), key=lambda p: p["t"])

    def _point(self, t, cur) -> None:
        self.t.append(t)
        for k in KINDS:
            self.series[k].append(cur[k])

    def total(self, i: int = -1) -> int:
        """Live bytes after the ``i``-th point of the curve."""
        return sum(self.series[k][i] for k in KINDS)

    def to_dict(self) -> dict:
        """JSON-ready: ``{"label", "t", "series", "baseline", "peak", "phase_peaks", "events"}``."""
        return {"label": self.label, "t": self.t, "series": self.series,
                "baseline": self.baseline, "peak": self.peak, "phase_peaks": self.phase_peaks,
                "events": self.events}

    def __str__(self) -> str:
        fb = _memory.format_bytes
        p = self.peak
        lines = [f"memory timeline of {self.label}: {len(self.events)} events, peak "
                 f"{fb(p['bytes'])} at {p['op']} ({p['source']}, {p['phase']})"]
        lines += [f"  {k:<20}{fb(v):>12}" for k, v in p["by_kind"].items()]
        for q in self.phase_peaks:
            lines.append(f"  {q['phase']} peak {fb(q['bytes'])} at {q['op']} ({q['source']})")
        return "\n".join(lines)

    def plot(self, path: str, title: str | None = None, dpi: int = 90) -> str:
        """Write the curve as a stacked-area PNG (needs matplotlib), the global peak marked with
        its op and line; return ``path``."""
        from ._memory_timeline_plot import plot
        return plot(self, path, title, dpi)


@contextlib.contextmanager
def record_timeline(label: str = "step"):
    """Context manager: the ``MemoryTimeline`` of the code inside it. Starts the memory history
    for its duration when none records (``_record_memory_history``) and stops it after.

    Example::

        >>> with glassgrad.memory.record_timeline() as tl:
        ...     opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); opt.step()
        >>> print(tl); tl.plot("step.png")
    """
    h, own, restore = _full()
    tl = MemoryTimeline(label)
    try:
        h.classify()
        h.phase = None
        t0 = h.t
        start = h.live_ranks()
        yield tl
    finally:
        h.classify()
        events = [e for e in h.events if e[0] > t0]
        if own:
            _stop()
        elif restore is not None:
            h.configure(*restore)
    tl._fill(start, events, t0)


def window(start: list, h: _History, t0: int, label: str, t1=None) -> MemoryTimeline:
    """The timeline of ``h``'s events after ``t0`` (up to ``t1``) from ``start``
    (``h.live_ranks()`` at ``t0``); the inspect report's steps."""
    tl = MemoryTimeline(label)
    tl._fill(start, [e for e in h.events if e[0] > t0 and (t1 is None or e[0] <= t1)], t0)
    return tl
