"""Profiler results: ``FunctionEvent``, ``FunctionEventAvg``, ``EventList`` (``torch.autograd.profiler_util``).

Times are microseconds (floats), as in PyTorch. glassgrad runs on the CPU only, so every device
time is 0 and ``device_type`` is ``DeviceType.CPU``.
"""

from __future__ import annotations

import enum
import json
import os
from collections import defaultdict


class DeviceType(enum.IntEnum):
    """Where an event ran (``torch.autograd.DeviceType``; same members and values)."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


class Interval:
    """``[start, end]`` in microseconds (``FunctionEvent.time_range``)."""

    def __init__(self, start, end) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


def _format_time(time_us) -> str:
    """``1.710ms``, ``107.575us``, ``2.000s``: PyTorch's table format of a time in us."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


class _Times:
    """Averages and formatted times shared by events and their aggregates."""

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cuda_time = device_time

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)


class FunctionEvent(_Times):
    """One profiled range: an op (``aten::mul``) or a ``record_function`` block.

    ``cpu_time_total`` is its duration; ``self_cpu_time_total`` that less its children's
    (``cpu_children``, set by ``EventList._populate_cpu_children``). Keyword arguments beyond
    PyTorch's first ones are accepted as attributes for its constructor's signature.
    """

    def __init__(self, id, name, thread, start_us, end_us, overload_name=None, fwd_thread=None,
                 input_shapes=None, stack=None, scope=0, use_device=None, cpu_memory_usage=0,
                 device_memory_usage=0, is_async=False, is_remote=False, sequence_nr=-1,
                 node_id=-1, device_type=DeviceType.CPU, device_index=0,
                 device_resource_id=None, is_legacy=False, flops=None, trace_name=None,
                 concrete_inputs=None, kwinputs=None, is_user_annotation=False, **more) -> None:
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name if trace_name is not None else name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs or {}
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = device_resource_id if device_resource_id is not None else thread
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        for k, v in more.items():
            setattr(self, k, v)

    def append_cpu_child(self, child) -> None:
        """Make ``child`` (a FunctionEvent) a direct child of this one."""
        if not isinstance(child, FunctionEvent):
            raise TypeError(f"append_cpu_child: expected a FunctionEvent, got {type(child).__name__}")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent) -> None:
        self.cpu_parent = parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    device_time_total = self_device_time_total = 0
    cuda_time_total = self_cuda_time_total = 0
    self_device_memory_usage = 0

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
                f"node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"is_legacy={self.is_legacy} scope={self.scope}>")


_SUMMED = ("cpu_time_total", "device_time_total", "self_cpu_time_total",
           "self_device_time_total", "cpu_memory_usage", "device_memory_usage",
           "self_cpu_memory_usage", "self_device_memory_usage")


class FunctionEventAvg(_Times):
    """The sum of events with one key (``key_averages``, ``total_average``): totals add up,
    ``cpu_time`` is the total over ``count``. ``add`` takes a FunctionEvent or another
    FunctionEventAvg of the same key (the first one added sets the key)."""

    def __init__(self) -> None:
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops = 0
        for name in _SUMMED:
            setattr(self, name, 0)

    def add(self, other) -> FunctionEventAvg:
        if self.key is None:
            self.key = other.key
            for name in ("node_id", "is_async", "is_remote", "use_device", "input_shapes",
                         "overload_name", "stack", "scope", "device_type", "is_legacy",
                         "is_user_annotation", "cpu_parent"):
                setattr(self, name, getattr(other, name))
            self.cpu_children = other.cpu_children
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise TypeError("FunctionEventAvg.add: expected a FunctionEvent or FunctionEventAvg, "
                            f"got {type(other).__name__}")
        if other.key != self.key:
            raise ValueError(f"FunctionEventAvg.add: key {other.key!r} is not {self.key!r}")
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.count += other.count
        if other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of FunctionEvents (``profile.function_events``) or of their averages
    (``key_averages``), with PyTorch's table, aggregation and Chrome-trace export."""

    def __init__(self, *args, **kwargs) -> None:
        self._use_device = kwargs.pop("use_device", None)
        self._profile_memory = kwargs.pop("profile_memory", False)
        self._with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)

    def _populate_cpu_children(self) -> None:
        """Link each event to the innermost event of its thread whose range contains it (sorted
        by start, longer first, so of two ranges starting together the longer is the parent)."""
        by_thread = defaultdict(list)
        for evt in self:
            if not evt.is_async and evt.device_type == DeviceType.CPU:
                by_thread[evt.thread].append(evt)
        for events in by_thread.values():
            events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
            stack = []
            for evt in events:
                while stack and not (stack[-1].time_range.start <= evt.time_range.start
                                     and evt.time_range.end <= stack[-1].time_range.end):
                    stack.pop()
                if stack:
                    stack[-1].append_cpu_child(evt)
                    evt.set_cpu_parent(stack[-1])
                stack.append(evt)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False) -> EventList:
        """One FunctionEventAvg per name (and per input shapes, stack prefix or overload name
        when asked), in order of first appearance."""
        groups: dict = {}
        for evt in self:
            key = (evt.key, evt.node_id, evt.device_type, evt.is_legacy,
                   str(evt.input_shapes) if group_by_input_shape else None,
                   tuple((evt.stack or [])[:group_by_stack_n]) if group_by_stack_n else None,
                   evt.overload_name if group_by_overload_name else None)
            groups.setdefault(key, FunctionEventAvg()).add(evt)
        return EventList(groups.values(), use_device=self._use_device,
                         profile_memory=self._profile_memory, with_flops=self._with_flops)

    def total_average(self) -> FunctionEventAvg:
        """Every event summed into one FunctionEventAvg whose key is ``"Total"``."""
        total = FunctionEventAvg()
        for evt in self:
            total.add(evt)
            total.key = None
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None) -> str:
        """PyTorch's text table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
        avg, # of Calls, and Input Shapes when some event has them; sorted descending by the
        attribute ``sort_by`` names; at most ``row_limit`` rows (all when it is not positive);
        CPU Mem and Self CPU Mem columns for a profile(profile_memory=True), Total FLOPs (scaled
        to the largest: KFLOPs, MFLOPs...) for with_flops=True."""
        from ._profiler_table import build_table
        return build_table(self, sort_by, row_limit, max_name_column_width,
                           max_shapes_column_width, header, top_level_events_only, time_unit,
                           self._profile_memory, self._with_flops)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path, metadata: dict | None = None) -> None:
        """Write the events to ``path`` as Chrome trace JSON, the object form PyTorch writes
        (``{"traceEvents": [...]}``, complete events ``"ph": "X"`` of category ``cpu_op``,
        ``user_annotation`` or, for module spans, ``python_function``; a ``fwdbwd`` flow arrow
        from each forward op to its node's backward event, by ``Sequence number``), readable by
        chrome://tracing and Perfetto. ``metadata``: more top-level keys (torch.profiler's)."""
        pid = os.getpid()
        trace = []
        starts: dict = {}  # sequence number -> the forward op's event
        for i, e in enumerate(x for x in self if isinstance(x, FunctionEvent)):
            args = {"External id": e.id, "Ev Idx": i}
            if e.sequence_nr >= 0:
                args["Sequence number"] = e.sequence_nr
                args["Fwd thread id"] = e.fwd_thread
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            cat = ("user_annotation" if e.is_user_annotation else
                   "python_function" if e.name.startswith("nn.Module: ") else "cpu_op")
            event = {"ph": "X", "cat": cat, "name": e.trace_name, "pid": pid, "tid": e.thread,
                     "ts": e.time_range.start, "dur": e.time_range.elapsed_us(), "args": args}
            trace.append(event)
            if e.sequence_nr >= 0 and cat == "cpu_op":
                first = starts.setdefault(e.sequence_nr, event)
                if first is not event and e.fwd_thread:  # the node's backward: draw the arrow
                    for ph, at in (("s", first), ("f", event)):
                        flow = {"ph": ph, "id": e.sequence_nr, "pid": pid, "tid": at["tid"],
                                "ts": at["ts"], "cat": "fwdbwd", "name": "fwdbwd"}
                        if ph == "f":
                            flow["bp"] = "e"
                        trace.append(flow)
        doc = {"schemaVersion": 1, "displayTimeUnit": "ms"}
        doc.update(metadata or {})
        doc["traceEvents"] = trace
        with open(path, "w") as f:
            json.dump(doc, f)
