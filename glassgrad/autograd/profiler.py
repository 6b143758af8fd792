"""``torch.autograd.profiler``: ``profile`` and ``record_function`` on glassgrad's op dispatch.

NOTE [Profiling]: nothing on the op path tests for a profiler. While one is active, every
Primitive class in ``ops.primitive.REGISTRY`` has its ``forward`` replaced by a timed wrapper and
``_Hooks.profiling`` is on, which makes the fast path (``ops/fast_path.py``, whose closures hold
the unwrapped forward) step aside through the test it already makes (``_Hooks.any_on``); each
primitive's node class gets a timed ``_run_backward`` and loses its array rule for that time (the
Tensor rule runs instead, so backward's own ops are events, as PyTorch's are). When the last
profiler exits every attribute is put back. So an event is one primitive's forward on arrays,
named as PyTorch's ATen op (``aten::mul`` for ``Mul`` and ``MulScalar``); its time is that
forward's, not the node recording around it. A forward that records a node carries the node's
sequence number (``sequence_nr``), and so does the node's backward event (``MulBackward0``), as
in PyTorch; other events have -1. Composites made of several primitives show their parts.
Not produced: PyTorch's ``autograd::engine::evaluate_function:`` wrappers, AccumulateGrad and
factory events (``aten::empty``, ``aten::randn``: glassgrad's factories are not primitives).
"""

from __future__ import annotations

import contextlib
import enum
import re
import threading
import time
import traceback

from .graph import _Hooks
from .profiler_util import DeviceType, EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

_ACTIVE: list = []  # profiles now recording, outermost first
_SAVED: dict = {}  # Primitive class -> its own forward (None: inherited) while wrapped
_THREADS: dict = {}  # threading.get_ident() -> PyTorch-style small thread id (1, 2, ...)
_LOCK = threading.Lock()
_now = time.perf_counter_ns

# ATen names of primitives whose class name does not spell it (others: snake_case, less a
# _scalar / _dim / _tensor / _all suffix: MulScalar -> mul, SumDim -> sum, MaxAll -> max)
_ATEN = {"MatMul": "mm", "MatMulNT": "mm", "MatMulTN": "mm", "EinsumUnary": "einsum",
         "ToCopy": "_to_copy", "LSTMLayer": "lstm", "RPowScalar": "pow", "RSubScalar": "rsub",
         "Norm2": "linalg_vector_norm", "NormP": "linalg_vector_norm", "CopyFrom": "copy_",
         "MaxPoolWithIndices": "max_pool2d_with_indices", "AlphaMulScalar": "mul"}
_SUFFIX = re.compile(r"_(scalar|dim|dims|tensor|all|index)$")
_STEP = re.compile(r"^ProfilerStep#\d+$")


def _elementwise_flops(arrays, out):
    return out.size


def _matmul_flops(arrays, out):
    return 2 * out.size * arrays[0].shape[-1]  # (x's last dim is the contracted one)


def _conv_flops(arrays, out):
    w = arrays[1]
    return 2 * out.size * (w.size // w.shape[0])  # per output: Cin/groups * kernel products


# with_flops: PyTorch counts the ops it has a formula for (others have flops None, "--")
_FLOPS = {"Mul": _elementwise_flops, "MulScalar": _elementwise_flops,
          "Add": _elementwise_flops, "AddScalar": _elementwise_flops, "MatMul": _matmul_flops,
          "Bmm": _matmul_flops, "Linear": _matmul_flops, "Convolution": _conv_flops}


def aten_name(cls) -> str:
    """``"aten::mul"`` for ``Mul``: the event name of a primitive (see ``_ATEN``)."""
    name = _ATEN.get(cls.__name__)
    if name is None:
        name = _SUFFIX.sub("", re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", cls.__name__).lower())
    return "aten::" + name


class ProfilerState(enum.IntEnum):
    """``torch.autograd.ProfilerState``: glassgrad's profiler runs in ``CPU`` state."""

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


class ProfilerActivity(enum.IntEnum):
    """``torch.autograd.ProfilerActivity``: glassgrad records ``CPU`` activity only."""

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerConfig:
    """What a profile records (``torch.autograd.ProfilerConfig``; ``profile.config()``)."""

    def __init__(self, state, report_input_shapes, profile_memory, with_stack, with_flops,
                 with_modules, experimental_config=None, trace_id="") -> None:
        self.state = ProfilerState(state)
        self.report_input_shapes = bool(report_input_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.with_flops = bool(with_flops)
        self.with_modules = bool(with_modules)
        self.experimental_config = experimental_config
        self.trace_id = trace_id

    def __repr__(self) -> str:
        return (f"ProfilerConfig(state={self.state.name}, report_input_shapes="
                f"{self.report_input_shapes}, profile_memory={self.profile_memory}, "
                f"with_stack={self.with_stack})")


def _thread_id() -> int:
    ident = threading.get_ident()
    tid = _THREADS.get(ident)
    if tid is None:
        with _LOCK:
            tid = _THREADS.setdefault(ident, len(_THREADS) + 1)
    return tid


def _user_stack() -> list:
    """``file(line): function`` of the caller's frames outside glassgrad, innermost first."""
    pkg = __file__.rsplit("/autograd/", 1)[0]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(traceback.extract_stack())
            if not f.filename.startswith(pkg)]


def _shape(a) -> list:
    return list(getattr(a, "shape", ()))


def _timed(cls, name, forward):
    def timed(xp, *arrays, **attrs):
        start = _now()
        out = forward(xp, *arrays, **attrs)
        end = _now()
        for prof in _ACTIVE:
            prof._add(name, start, end, arrays, attrs, out, cls=cls)
        return out
    return staticmethod(timed)


def _numbered(cls, init):
    """``node_cls.__init__`` that gives the forward event just recorded for ``cls`` on this
    thread the node's sequence number (the node is made right after that forward, in apply)."""
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for prof in _ACTIVE:
            rec = prof._pending.pop(cls, None)
            if rec is not None:
                rec[8] = self._seq
                prof._fwd_threads[self._seq] = rec[4]
    return __init__


def _timed_backward(run):
    def _run_backward(self, grads):
        start = _now()
        out = run(self, grads)
        end = _now()
        for prof in _ACTIVE:
            prof._add(type(self).__name__, start, end, (), {}, None, seq=self._seq)
        return out
    return _run_backward


# while profiling, a node's array rule (NOTE [Array backward]) steps aside for its Tensor rule,
# so backward runs through _run_backward (one event per node) and its ops are events too
_NODE_ATTRS = ("__init__", "_run_backward", "_np", "_np_fast")


def _install() -> None:
    from ..ops.primitive import REGISTRY
    classes = list(REGISTRY.values())
    plain = {cls: cls.forward for cls in classes}  # read all before wrapping any (inheritance)
    for cls in classes:
        node = cls.node_cls
        _SAVED[cls] = cls.__dict__.get("forward")
        _SAVED[node] = {a: node.__dict__[a] for a in _NODE_ATTRS if a in node.__dict__}
        cls.forward = _timed(cls, aten_name(cls), plain[cls])
        node.__init__ = _numbered(cls, node.__init__)
        node._run_backward = _timed_backward(node._run_backward)
        node._np = node._np_fast = None
    _Hooks.profiling = True


def _uninstall() -> None:
    _Hooks.profiling = False
    for owner, own in _SAVED.items():
        if isinstance(own, dict):
            for a in _NODE_ATTRS:
                if a in own:
                    setattr(owner, a, own[a])
                else:
                    delattr(owner, a)
        elif own is None:
            del owner.forward
        else:
            owner.forward = own
    _SAVED.clear()


def _start_order(rec):
    # a module span over exactly one node's event is that event's parent: it sorts first
    return rec[1], -rec[2], not rec[0].startswith("nn.Module: ")


class profile:
    """Record the ops run inside ``with profile() as prof:`` (``torch.autograd.profiler.profile``).

    After the block, ``prof.function_events`` is an EventList of FunctionEvents (ops as
    ``aten::<name>``, ``record_function`` blocks by their name) in start order; ``table``,
    ``key_averages``, ``total_average``, ``export_chrome_trace`` and ``self_cpu_time_total`` as
    PyTorch's. ``record_shapes`` fills ``input_shapes`` (an array input's shape, ``[]`` for each
    non-tensor argument); ``profile_memory`` sets ``cpu_memory_usage`` to the bytes of the op's
    result; ``with_stack`` records the user frames. CPU only: a CUDA/device request warns, as
    PyTorch does without CUDA, and ``use_cpu=False`` without Kineto raises its AssertionError.
    Only the entering thread's ops are recorded, as in PyTorch. Not reentrant (RuntimeError).
    See NOTE [Profiling] for what an event measures.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None) -> None:
        self.enabled = enabled
        if not enabled:
            return
        if use_cuda or use_device not in (None, "cpu"):
            from .._user_warning import warn_user
            warn_user(f"{use_device or 'CUDA'} is not available, disabling "
                      f"{use_device or 'CUDA'} profiling (glassgrad runs on the CPU only)",
                      stacklevel=2)
        self.use_cuda = False
        self.use_device = None
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.use_kineto = use_kineto
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.experimental_config = experimental_config
        if not use_cpu:
            if not use_kineto:
                raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
            raise AssertionError("profile(use_cpu=False): glassgrad records CPU events only, and "
                                 "has no device to profile")
        self.entered = False
        self.function_events = None
        self._raw: list = []
        self._pending: dict = {}
        self._fwd_threads: dict = {}
        self._t0 = 0
        self._ident = None

    def config(self) -> ProfilerConfig:
        return ProfilerConfig(ProfilerState.CPU, self.record_shapes, self.profile_memory,
                              self.with_stack, self.with_flops, self.with_modules,
                              self.experimental_config)

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._raw = []
        self._pending = {}  # Primitive class -> its last forward event, until its node is made
        self._fwd_threads = {}  # sequence number -> thread of the forward that made the node
        self._t0 = _now()
        self._ident = threading.get_ident()
        with _LOCK:
            if not _ACTIVE:
                _install()
            _ACTIVE.append(self)
        self._modules = None
        if self.with_modules or self.with_stack:  # per-module spans (autograd/profiler_modules.py)
            from .profiler_modules import ModuleSpans

            self._modules = ModuleSpans(self, backward=self.with_modules)
            self._modules.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        if not self.enabled:
            return False
        with _LOCK:
            _ACTIVE.remove(self)
            if not _ACTIVE:
                _uninstall()
        if self._modules is not None:
            self._modules.stop()
            for name, start, end in self._modules.backward_spans(self._raw):
                self._add_span(name, start, end)
        events = EventList(
            # torch.profiler's step events: "ProfilerStep#3" in the trace, "ProfilerStep*" as a name
            (FunctionEvent(id=i, name=_STEP.sub("ProfilerStep*", r[0]), trace_name=r[0],
                           thread=r[4], start_us=r[1], end_us=r[2],
                           fwd_thread=r[9], input_shapes=r[3], stack=r[6],
                           cpu_memory_usage=r[7], is_user_annotation=r[5], sequence_nr=r[8],
                           flops=r[10])
             for i, r in enumerate(sorted(self._raw, key=_start_order))),
            use_device=None, profile_memory=self.profile_memory, with_flops=self.with_flops)
        events._populate_cpu_children()
        self.function_events = events
        return False

    def _add(self, name, start, end, arrays, attrs, out, annotation=False, cls=None,
             seq=-1) -> None:
        if threading.get_ident() != self._ident:
            return  # PyTorch's profile records the thread that entered it, no other
        shapes = ([_shape(a) for a in arrays] + [[] for _ in attrs]) if self.record_shapes else []
        mem = 0
        if self.profile_memory and out is not None:
            mem = sum(o.nbytes for o in (out if isinstance(out, tuple) else (out,))
                      if hasattr(o, "nbytes"))
        flops = None
        if self.with_flops and cls is not None and cls.__name__ in _FLOPS:
            flops = int(_FLOPS[cls.__name__](arrays, out))
        # fwd_thread: 0, but a node's backward has its forward's thread (when it ran here)
        rec = [name, (start - self._t0) / 1e3, (end - self._t0) / 1e3, shapes, _thread_id(),
               annotation, _user_stack() if self.with_stack else [], mem, seq,
               self._fwd_threads.get(seq, 0) if cls is None and seq >= 0 else 0, flops]
        self._raw.append(rec)
        if cls is not None:
            self._pending[cls] = rec

    def _clock(self) -> float:
        """Microseconds since the profile began (the events' time base)."""
        return (_now() - self._t0) / 1e3

    def _add_span(self, name, start, end) -> None:
        """A module span (``nn.Module: Linear_0``): not an op, not a user annotation."""
        self._raw.append([name, start, end, [], _thread_id(), False, [], 0, -1, 0, None])

    def _check_finish(self) -> None:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False) -> str:
        """``function_events.table(...)``: see EventList.table."""
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False) -> EventList:
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def total_average(self) -> FunctionEventAvg:
        self._check_finish()
        return self.function_events.total_average()

    def export_chrome_trace(self, path) -> None:
        self._check_finish()
        self.function_events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __str__(self) -> str:
        self._check_finish()
        return str(self.function_events)

    __repr__ = __str__


class record_function(contextlib.ContextDecorator):
    """Mark a block (``with record_function("name"):``) or a function (``@record_function("name")``)
    as one event of the active profilers (``torch.autograd.profiler.record_function``); nothing
    when none is active. ``args`` is kept as the event's ``concrete_inputs`` text, unused."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._open: list = []  # (start, profiles) per entry not yet exited (decorated recursion)

    def __enter__(self) -> record_function:
        self._open.append((_now(), tuple(_ACTIVE)))
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        if self._open:
            start, profs = self._open.pop()
            end = _now()
            for prof in profs:
                if prof in _ACTIVE:
                    prof._add(self.name, start, end, (), {}, None, annotation=True)
        return False
