"""torch.autograd.profiler on glassgrad (issue 15, lane prof), against torch's own profiler: event
names and order, record_function, shapes, aggregation, the table's columns, the trace file, errors;
and that no op pays for it once the profiler has exited (NOTE [Profiling])."""

from __future__ import annotations

import json
import threading

import pytest
import torch

import glassgrad

LIBS = pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _names(prof):
    return [e.name for e in prof.function_events]


def _subsequence(wanted, names):
    it = iter(names)
    return all(any(n == w for n in it) for w in wanted)


def _nested(lib):
    x = lib.randn(10, 10)
    with lib.autograd.profiler.profile() as p:
        with lib.autograd.profiler.record_function("outer"):
            y = x * 2 + 4
            with lib.autograd.profiler.record_function("inner"):
                y = y - 1
        y = y / 1
    return p


@LIBS
def test_op_names_and_record_function_order(lib):
    p = _nested(lib)
    assert _subsequence(["outer", "aten::mul", "aten::add", "inner", "aten::sub", "aten::div"],
                        _names(p))
    outer = next(e for e in p.function_events if e.name == "outer")
    assert outer.count == 1 and outer.is_user_annotation
    assert not next(e for e in p.function_events if e.name == "aten::mul").is_user_annotation


@LIBS
def test_children_and_self_time(lib):
    p = _nested(lib)
    ev = {e.name: e for e in p.function_events}
    outer, inner = ev["outer"], ev["inner"]
    kids = [c.name for c in outer.cpu_children]
    assert "aten::mul" in kids and "inner" in kids and "aten::div" not in kids
    assert ev["aten::sub"].cpu_parent is inner and outer.cpu_parent is None
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in outer.cpu_children))
    assert 0 <= outer.self_cpu_time_total <= outer.cpu_time_total
    assert p.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in p.function_events))


@LIBS
def test_record_function_decorator_and_no_profiler(lib):
    prof = lib.autograd.profiler

    @prof.record_function("my_func")
    def f(x, y):
        return x + y

    assert f(1, 2) == 3  # no profiler active: a plain call
    with prof.profile() as p:
        f(1, 2)
    assert "my_func" in str(p)
    rf = prof.record_function("outer")
    rf.__enter__()
    with prof.record_function("inner"):
        rf.__exit__(None, None, None)  # exiting out of order does not raise (torch's test)


@LIBS
def test_record_shapes_of_linear(lib):
    lib.manual_seed(0)
    l1, l2 = lib.nn.Linear(20, 30), lib.nn.Linear(30, 40)
    x = lib.randn(128, 20)
    with lib.autograd.profiler.profile(record_shapes=True) as p:
        l2(l1(x))
    shapes = [e.input_shapes for e in p.function_events if e.name == "aten::linear"]
    assert shapes == [[[128, 20], [30, 20], [30]], [[128, 30], [40, 30], [40]]]
    assert [e.input_shapes for e in p.function_events if e.name == "aten::linear"]
    with lib.autograd.profiler.profile() as q:
        l1(x)
    assert all(e.input_shapes == [] for e in q.function_events)


@LIBS
def test_key_averages_and_total(lib):
    x = lib.randn(4, 4)
    with lib.autograd.profiler.profile(record_shapes=True) as p:
        for _ in range(3):
            x * 2
        x[:2] * 2
    mul = [a for a in p.key_averages() if a.key == "aten::mul"]
    assert len(mul) == 1 and mul[0].count == 4
    assert mul[0].cpu_time == pytest.approx(mul[0].cpu_time_total / 4)
    by_shape = {str(a.input_shapes): a.count for a in p.key_averages(group_by_input_shape=True)
                if a.key == "aten::mul"}
    assert by_shape == {"[[4, 4], []]": 3, "[[2, 4], []]": 1}
    total = p.total_average()
    assert total.key == "Total" and total.count == len(p.function_events)
    assert isinstance(total, lib.autograd.profiler_util.FunctionEventAvg)


@LIBS
def test_function_event_avg(lib):
    util = lib.autograd.profiler_util
    avg = util.FunctionEventAvg()
    avg.add(util.FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
    avg.add(util.FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
    avg.add(avg)
    assert (avg.key, avg.count, avg.cpu_time_total, avg.self_cpu_time_total) == ("foo", 4, 30, 30)
    assert avg.cpu_time == 7.5 and avg.device_time_total == 0


@LIBS
def test_populate_cpu_children(lib):
    util = lib.autograd.profiler_util
    events = util.EventList()
    spans = [(1, 0, 1), (1, 1, 2), (0, 0, 2), (0, 1, 2), (0, 1, 3)]
    for i, (thread, start, end) in enumerate(spans, 1):
        events.append(util.FunctionEvent(id=i, node_id=0, name="", thread=thread,
                                         start_us=start, end_us=end))
    events._populate_cpu_children()
    assert [[c.id for c in e.cpu_children] for e in events] == [[], [], [], [], [4]]


@LIBS
def test_table_columns(lib):
    x = lib.randn(64)
    with lib.autograd.profiler.profile(record_shapes=True) as p:
        lib.einsum("i->", x)
        x * 3
    table = p.table()
    assert table == str(p)
    lines = table.splitlines()
    heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
             "# of Calls", "Input Shapes"]
    assert lines[1].split("  ") and all(h in lines[1] for h in heads)
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert lines[-1].startswith("Self CPU time total: ")
    assert "Input Shapes" not in _nested(lib).table()
    rows = p.table(sort_by="cpu_time_total", row_limit=1).splitlines()
    assert len(rows) == 6  # rule, head, rule, one row, rule, total
    top = max(p.function_events, key=lambda e: e.cpu_time_total)
    assert rows[3].split()[0] == top.name
    headed = p.key_averages().table(sort_by="self_cpu_time_total", header="TEST").splitlines()
    assert headed[1] == "TEST" and set(headed[0]) == {"="}


@LIBS
def test_profile_memory_columns(lib):
    x = lib.randn(100, 100)
    with lib.autograd.profiler.profile(profile_memory=True) as p:
        x * 2
    mul = next(e for e in p.function_events if e.name == "aten::mul")
    assert mul.cpu_memory_usage >= 40000 and mul.self_cpu_memory_usage >= 39996
    head = p.table().splitlines()[1]
    assert head.index("CPU time avg") < head.index("CPU Mem") < head.index("Self CPU Mem") \
        < head.index("# of Calls")
    row = next(r for r in p.table().splitlines() if "aten::mul" in r)
    assert "39.06 KB" in row
    assert "CPU Mem" not in _nested(lib).table()


@LIBS
def test_with_flops(lib):
    x, w = lib.randn(64, 32), lib.randn(16, 32)
    with lib.autograd.profiler.profile(with_flops=True) as p:
        x * 2
        x + x
        x @ w.t()
        lib.bmm(x[None], w.t()[None])
        lib.nn.functional.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3, 3))
    flops = {e.name: e.flops for e in p.function_events if e.flops}
    assert {k: flops[k] for k in ("aten::mul", "aten::add", "aten::mm", "aten::bmm")} == {
        "aten::mul": 2048, "aten::add": 2048, "aten::mm": 65536, "aten::bmm": 65536}
    assert 15552 in flops.values()  # the convolution (torch: on aten::conv2d)
    table = p.table().splitlines()
    assert table[1].rstrip().endswith("Total KFLOPs")
    assert next(r for r in table if "aten::bmm" in r).rstrip().endswith("65.536")


@LIBS
def test_export_chrome_trace(lib, tmp_path):
    p = _nested(lib)
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    complete = {e["name"]: e for e in trace if e.get("ph") == "X"}
    assert complete["aten::mul"]["cat"] == "cpu_op"
    assert complete["outer"]["cat"] == "user_annotation"
    assert complete["outer"]["dur"] >= complete["aten::mul"]["dur"]


@LIBS
def test_errors(lib):
    prof = lib.autograd.profiler
    p = prof.profile()
    with p:
        pass
    with pytest.raises(RuntimeError, match="Profiler context manager is not reentrant"):
        with p:
            pass
    with pytest.raises(AssertionError, match="Device-only events supported only with Kineto"):
        prof.profile(use_cpu=False)


@LIBS
def test_backward_ops_are_profiled(lib):
    a = lib.randn(3, 3, requires_grad=True)
    with lib.autograd.profiler.profile() as p:
        (a + a).sum().backward()
    names = _names(p)
    assert names.index("aten::add") < names.index("aten::sum")
    assert len(names) > 2  # backward ran ops too


@LIBS
def test_sequence_numbers_link_forward_and_backward(lib):
    with lib.autograd.profiler.profile() as p:
        x = lib.randn(4, 4, requires_grad=True)
        z = x + x.detach()
        (z * z).sum().backward()
    ev = p.function_events
    add = next(e for e in ev if e.name == "aten::add")
    mul = next(e for e in ev if e.name == "aten::mul")
    assert add.sequence_nr >= 0 and mul.sequence_nr > add.sequence_nr
    assert [e.sequence_nr for e in ev if e.name == "AddBackward0"] == [add.sequence_nr]
    assert [e.sequence_nr for e in ev if e.name == "MulBackward0"] == [mul.sequence_nr]
    assert add.fwd_thread == 0
    assert [e.fwd_thread for e in ev if e.name == "AddBackward0"] == [add.thread]
    inner = [e for e in ev if e.name == "aten::mul" and e.cpu_parent is not None
             and e.cpu_parent.name == "MulBackward0"]
    assert len(inner) == 2 and all(e.sequence_nr == -1 for e in inner)


@LIBS
def test_only_the_entering_thread_is_recorded(lib):
    x = lib.randn(8)
    with lib.autograd.profiler.profile() as p:
        t = threading.Thread(target=lambda: x * 5)
        t.start()
        t.join()
        x * 5
    assert [e.name for e in p.function_events].count("aten::mul") == 1


@LIBS
def test_enum_names(lib):
    for name in ("DeviceType", "ProfilerState", "ProfilerActivity"):
        ours = getattr(lib.autograd, name).__members__
        theirs = getattr(torch.autograd, name).__members__
        assert {k: int(v) for k, v in ours.items()} == {k: int(v) for k, v in theirs.items()}


def test_zero_cost_after_exit():
    from glassgrad.autograd.graph import _Hooks
    from glassgrad.ops.primitive import REGISTRY
    def snapshot():
        return {c: (c.__dict__.get("forward"), dict(c.node_cls.__dict__))
                for c in REGISTRY.values()}

    before = snapshot()
    with glassgrad.autograd.profiler.profile():
        assert _Hooks.any_on
        assert all(c.__dict__.get("forward") is not before[c][0] for c in REGISTRY.values())
    assert not _Hooks.any_on and not _Hooks.profiling
    assert snapshot() == before
    with pytest.raises(ValueError), glassgrad.autograd.profiler.profile():
        raise ValueError  # an error in the block restores everything too
    assert snapshot() == before and not _Hooks.any_on


def test_profiled_values_and_grads_unchanged():
    x = glassgrad.randn(5, requires_grad=True)
    (x.sin() * x).sum().backward()
    ref = x.grad.clone()
    x.grad = None
    with glassgrad.autograd.profiler.profile():
        y = (x.sin() * x).sum()
        y.backward()
    assert glassgrad.equal(x.grad, ref)
