"""torch.profiler on glassgrad against torch.profiler (issue 19): the same training step under
``profile(activities=[CPU], record_shapes=True, profile_memory=True)`` gives the table's columns,
the op and backward-node names both libraries emit, the Chrome trace's shape (top-level keys,
event fields and categories, fwdbwd arrows) and, with a schedule, the same steps recorded and the
same ``on_trace_ready`` calls; with_stack names module calls as torch's Python tracer does
(``nn.Module: Linear_0``); with_modules adds each module's backward span (glassgrad's own)."""

from __future__ import annotations

import json
import re

import pytest
import torch

import glassgrad

LIBS = pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))


def _step(lib, model):
    x = lib.randn(2, 4)
    with lib.profiler.record_function("train_step"):
        model(x).sum().backward()


def _profiled(lib, **kwargs):
    model = _model(lib)
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **kwargs) as prof:
        _step(lib, model)
    return prof


def _columns(table: str) -> list:
    header = table.splitlines()[1]
    return re.split(r"\s{2,}", header.strip())


def test_table_columns_and_row_limit_match_torch():
    tables = [_profiled(lib, record_shapes=True, profile_memory=True).key_averages(
        group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=4)
        for lib in (torch, glassgrad)]
    assert _columns(tables[1]) == _columns(tables[0])
    assert "Input Shapes" in _columns(tables[1]) and "Self CPU Mem" in _columns(tables[1])
    rows = [line for line in tables[1].splitlines()[3:] if line and not line.startswith("-")
            and not line.startswith("Self CPU time total")]
    assert len(rows) == 4
    assert tables[1].rstrip().splitlines()[-1].startswith("Self CPU time total:")


# forward ops and backward nodes of the step that torch and glassgrad both name so
COMMON = {"train_step", "aten::linear", "aten::relu", "aten::sum", "aten::mm",
          "SumBackward0", "AddmmBackward0", "ReluBackward0", "aten::threshold_backward"}


def test_event_names_both_libraries_emit():
    names = [{e.name for e in _profiled(lib).events()} for lib in (torch, glassgrad)]
    assert COMMON <= names[0], COMMON - names[0]
    assert COMMON <= names[1], COMMON - names[1]


def test_backward_nodes_carry_their_forward_sequence_number():
    events = _profiled(glassgrad).events()
    addmm = [e for e in events if e.name == "AddmmBackward0"]
    forwards = {e.sequence_nr: e.name for e in events if e.name == "aten::linear"}
    assert len(addmm) == 2 and {e.sequence_nr for e in addmm} == set(forwards)


def _trace(lib, tmp_path):
    path = tmp_path / f"{lib.__name__}.json"
    _profiled(lib, record_shapes=True, profile_memory=True).export_chrome_trace(str(path))
    return json.loads(path.read_text())


def test_chrome_trace_has_torchs_shape(tmp_path):
    theirs, ours = _trace(torch, tmp_path), _trace(glassgrad, tmp_path)
    keys = {"schemaVersion", "traceEvents", "displayTimeUnit", "record_shapes", "profile_memory",
            "host_name", "baseTimeNanoseconds", "traceName"}
    assert keys <= set(theirs) and keys <= set(ours)
    assert "with_stack" not in theirs and "with_stack" not in ours  # written only when on
    complete = [[e for e in t["traceEvents"] if e["ph"] == "X" and e.get("cat") != "Trace"]
                for t in (theirs, ours)]
    for events in complete:
        assert {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"} <= set(events[0])
    assert {e["cat"] for e in complete[1]} <= {e["cat"] for e in complete[0]} | {"python_function"}
    names = [{e["name"] for e in events} for events in complete]
    assert COMMON <= names[0] and COMMON <= names[1]
    for t in (theirs, ours):
        flows = [e for e in t["traceEvents"] if e.get("cat") == "fwdbwd"]
        assert {e["ph"] for e in flows} == {"s", "f"}
    ours_args = next(e for e in complete[1] if e["name"] == "AddmmBackward0")["args"]
    theirs_args = next(e for e in complete[0] if e["name"] == "AddmmBackward0")["args"]
    assert {"Sequence number", "Fwd thread id", "Ev Idx", "External id"} <= set(theirs_args)
    assert {"Sequence number", "Fwd thread id", "Ev Idx", "External id"} <= set(ours_args)


@pytest.mark.parametrize("args", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=1,
                         active=1, repeat=2), dict(wait=2, warmup=0, active=3, skip_first=1),
                         dict(wait=3, warmup=1, active=1, skip_first=2, skip_first_wait=1)])
def test_schedule_actions_match_torch(args):
    ours, theirs = glassgrad.profiler.schedule(**args), torch.profiler.schedule(**args)
    assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]


@LIBS
def test_schedule_records_the_active_steps_and_calls_on_trace_ready(lib):
    model = _model(lib)
    ready = []
    sched = lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    with lib.profiler.profile(schedule=sched, on_trace_ready=lambda p: ready.append(p.step_num),
                              activities=[lib.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(6):
            _step(lib, model)
            prof.step()
    assert ready == [4]
    names = [e.name for e in prof.events()]
    assert names.count("ProfilerStep*") == 2 and names.count("train_step") == 2


def test_with_stack_names_module_calls_as_torchs_tracer():
    names = [{e.name for e in _profiled(lib, with_stack=True).events()
              if e.name.startswith("nn.Module: ")} for lib in (torch, glassgrad)]
    assert names[1] == names[0] == {"nn.Module: Sequential_0", "nn.Module: Linear_0",
                                    "nn.Module: Linear_1", "nn.Module: ReLU_0"}


def test_with_modules_gives_each_modules_backward_span():
    events = _profiled(glassgrad, with_modules=True).events()
    spans = {e.name: e for e in events if e.name.endswith(".backward")}
    assert set(spans) == {"nn.Module: Linear_0.backward", "nn.Module: Linear_1.backward",
                          "nn.Module: ReLU_0.backward"}
    assert [c.name for c in spans["nn.Module: ReLU_0.backward"].cpu_children] == ["ReluBackward0"]
    assert "AddmmBackward0" in [c.name for c in spans["nn.Module: Linear_1.backward"].cpu_children]
    forward = next(e for e in events if e.name == "nn.Module: Linear_1")
    assert [c.name for c in forward.cpu_children] == ["aten::linear"]


def test_no_module_hook_stays_installed_after_profiling():
    from glassgrad.nn import _module_hooks

    _profiled(glassgrad, with_modules=True)
    assert not _module_hooks._global_forward_pre_hooks and not _module_hooks._global_forward_hooks


def test_tensorboard_trace_handler_writes_a_trace_per_window(tmp_path):
    model = _model(glassgrad)
    handler = glassgrad.profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w0")
    sched = glassgrad.profiler.schedule(wait=0, warmup=1, active=1, repeat=2)
    with glassgrad.profiler.profile(schedule=sched, on_trace_ready=handler) as prof:
        for _ in range(5):
            _step(glassgrad, model)
            prof.step()
    files = sorted(tmp_path.glob("w0.*.pt.trace.json"))
    assert len(files) == 2
    trace = json.loads(files[0].read_text())
    assert any(e["name"] == "ProfilerStep#1" for e in trace["traceEvents"])


def test_a_device_activity_warns_and_records_the_cpu():
    with pytest.warns(UserWarning, match="CPU only"):
        prof = glassgrad.profiler.profile(activities=[glassgrad.profiler.ProfilerActivity.CPU,
                                                      glassgrad.profiler.ProfilerActivity.CUDA])
    with prof:
        glassgrad.ones(3) * 2
    assert "aten::mul" in {e.name for e in prof.events()}
