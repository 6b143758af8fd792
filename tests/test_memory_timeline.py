"""The CPU memory timeline (glassgrad/_memory_timeline.py) and PyTorch's snapshot names on it."""
import json
import os
import pickle
import subprocess
import sys

import pytest

import glassgrad
import glassgrad.nn as nn


@pytest.fixture(autouse=True)
def _plain_tensor_creation_after():
    """Leave tensor creation plain again: a test that reads memory_allocated() after its history
    stopped turns tracking on for the rest of the process (the overhead budget tests see it)."""
    yield
    from glassgrad import _memory_timeline
    if _memory_timeline._HISTORY[0] is None:
        glassgrad.memory.set_tracking(False)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run in a fresh process so "the process's tensor bytes" means this step's and nothing else's.
# The references are measured without the timeline's bookkeeping: (1) tracemalloc's NumPy domain
# (every live NumPy data buffer of the process, tensor or not, traced from before the model was
# built); (2) a gc walk summing the distinct root buffers of live glassgrad Tensors and saved
# values. Both are read at every allocation that brings the timeline to a new high, so the
# timeline's peak has its own reading.
_PROBE = r'''
import gc, json, tracemalloc
import numpy as np
import glassgrad as torch
import glassgrad.nn as nn
from glassgrad import _memory_timeline as mt
from glassgrad.autograd.graph import Node, SavedTensor
tracemalloc.start(1)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))

def step():
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()

step()

def root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a

def tensor_bytes():
    bufs = {}
    def add(a):
        if isinstance(a, np.ndarray):
            r = root(a)
            bufs[id(r)] = r.nbytes
    for o in gc.get_objects():
        if isinstance(o, torch.Tensor):
            add(o._array)
        elif isinstance(o, SavedTensor):
            add(o._peek())
        elif isinstance(o, Node):
            for s in o._saved or ():
                add(getattr(s, "_array", s))
    return sum(bufs.values())

def numpy_bytes():
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.DomainFilter(True, np.lib.tracemalloc_domain)])
    return sum(t.size for t in snap.traces)

probes, most = {}, [0]
with torch.memory.record_timeline("MLP step") as tl:
    h = mt._HISTORY[0]
    alloc = h.alloc
    def probed(r, n):
        alloc(r, n)
        live = sum(b["size"] for b in h.live.values())
        if live >= most[0]:
            most[0] = live
            probes[h.t] = (tensor_bytes(), numpy_bytes())
    h.alloc = probed
    step()
p = tl.peak
print(json.dumps({"peak": p["bytes"], "curve": tl.total(tl.t.index(p["t"])),
                  "refs": probes[p["t"]], "op": p["op"], "phase": p["phase"],
                  "by_kind": p["by_kind"]}))
'''


def test_mlp_step_accounts_for_the_process_tensor_bytes():
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout.strip().splitlines()[-1])
    tensor_ref, numpy_ref = d["refs"]
    assert d["curve"] == d["peak"] == sum(d["by_kind"].values())
    assert d["peak"] >= 0.95 * tensor_ref, d
    assert d["peak"] >= 0.95 * numpy_ref, d
    assert d["peak"] <= max(tensor_ref, numpy_ref)  # nothing counted that is not there
    # the MLP's peak: parameters, their gradients and Adam's two moments are all alive
    params = (784 * 256 + 256 + 256 * 10 + 10) * 4
    assert d["by_kind"]["parameters"] == d["by_kind"]["gradients"] == params
    assert d["by_kind"]["optimizer_state"] >= 2 * params
    print("timeline at the peak %d B; gc walk %d B (%.2f%%); tracemalloc NumPy %d B (%.2f%%)" % (
        d["peak"], tensor_ref, 100 * d["peak"] / tensor_ref, numpy_ref,
        100 * d["peak"] / numpy_ref))


def _mlp():
    glassgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = glassgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = glassgrad.randn(8, 20), glassgrad.randint(0, 3, (8,))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return model, opt, step


def test_kinds_and_peaks_of_a_step(tmp_path):
    import torch
    import gc
    model, opt, step = _mlp()
    gc.collect()  # what earlier tests left stays put during the window: compare differences
    with glassgrad.memory.record_timeline("first step") as tl:
        step()
    # oracle: torch's optimizer state for the same model after one step, in bytes
    tm = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    to = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    tm(torch.randn(8, 20)).sum().backward()
    to.step()
    state = sum(v.numel() * v.element_size() for s in to.state.values() for v in s.values()
                if torch.is_tensor(v))
    params = sum(p.numel() * p.element_size() for p in tm.parameters())
    grow = {k: v[-1] - v[0] for k, v in tl.series.items()}
    assert grow["optimizer_state"] == state and grow["gradients"] == params
    assert len(set(tl.series["parameters"])) == 1 and tl.series["parameters"][0] >= params
    ops = {e["op"] for e in tl.events if e["action"] == "alloc"}
    assert {"aten::relu", "AccumulateGrad"} <= ops
    assert any(e["kind"] == "saved_for_backward" and e["phase"] == "forward" for e in tl.events)
    assert [p["phase"] for p in tl.phase_peaks] == ["forward", "backward", "optimizer"]
    here = os.path.abspath(__file__)
    assert all(p["source"].startswith(here) for p in tl.phase_peaks)
    assert "peak" in str(tl) and "backward peak" in str(tl)
    png = tl.plot(str(tmp_path / "t.png"))
    head = open(png, "rb").read(8)
    assert head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) < 200_000


def test_snapshot_has_torch_shape_and_torch_reads_it(tmp_path):
    from torch.cuda import _memory_viz
    _, _, step = _mlp()
    glassgrad.cuda.memory._record_memory_history(max_entries=100_000)
    try:
        step()
        snap = glassgrad.cuda.memory._snapshot()
        path = str(tmp_path / "snap.pickle")
        glassgrad.cuda.memory._dump_snapshot(path)
    finally:
        glassgrad.cuda.memory._record_memory_history(enabled=None)
    assert set(snap) >= {"segments", "device_traces"}
    trace = snap["device_traces"][0]
    assert {e["action"] for e in trace} == {"alloc", "free_completed"}
    assert all(set(e) >= {"action", "addr", "size", "stream", "frames"} for e in trace)
    allocs = [e for e in trace if e["action"] == "alloc"]
    here = os.path.abspath(__file__)
    assert all(e["frames"][0]["filename"] == here for e in allocs)
    block = snap["segments"][0]["blocks"][0]
    assert block["state"] == "active_allocated"
    assert block["size"] == snap["segments"][0]["total_size"]
    live = sum(s["total_size"] for s in snap["segments"])
    assert live == glassgrad.memory_allocated()
    with open(path, "rb") as f:
        loaded = pickle.load(f)
    # PyTorch's own snapshot tools read glassgrad's file
    text = _memory_viz.segsum(loaded)
    assert f"segments: {len(snap['segments'])}" in text
    assert len(_memory_viz.trace_plot(loaded)) > 1000


def test_record_memory_history_arguments():
    # PyTorch's allocator checks (torch/csrc/cuda/memory_snapshot.cpp; a CPU build of torch
    # has no allocator to run them)
    with pytest.raises(RuntimeError, match=r"^expected state to be 'state', 'all', or None$"):
        glassgrad.cuda.memory._record_memory_history(enabled="yes")
    with pytest.raises(RuntimeError,
                       match=r"^expected context to be 'state', 'alloc', 'all', or None$"):
        glassgrad.cuda.memory._record_memory_history(context="everything")
    with pytest.raises(RuntimeError, match=r"^expected stacks to be 'python', or 'all'$"):
        glassgrad.cuda.memory._record_memory_history(stacks="cpp")
    glassgrad.cuda.memory._record_memory_history("state", max_entries=3)
    try:
        for _ in range(5):
            glassgrad.ones(10)
        snap = glassgrad.cuda.memory._snapshot()
    finally:
        glassgrad.cuda.memory._record_memory_history(None)
    assert snap["device_traces"] == [[]]  # "state" keeps no history
    glassgrad.cuda.memory._record_memory_history(max_entries=3)
    try:
        for _ in range(5):
            glassgrad.ones(10)
        assert len(glassgrad.cuda.memory._snapshot()["device_traces"][0]) == 3
    finally:
        glassgrad.cuda.memory._record_memory_history(None)


def test_history_settings_change_and_windows_widen_them():
    mem = glassgrad.cuda.memory
    mem._record_memory_history(max_entries=2, skip_actions=["free_completed"])
    try:
        for _ in range(4):
            glassgrad.ones(10) + 1
        trace = mem._snapshot()["device_traces"][0]
        assert len(trace) <= 2 and all(e["action"] == "alloc" for e in trace)
        # a window needs every event: the running history keeps them all until it ends
        with glassgrad.memory.record_timeline() as tl:
            a = glassgrad.ones(100)
            b = a * 2
            del a, b
        assert [e["action"] for e in tl.events] == ["alloc", "alloc", "free_completed",
                                                     "free_completed"]
        assert [e["bytes"] for e in tl.events] == [400, 400, 400, 400]
        assert len(mem._snapshot()["device_traces"][0]) <= 2  # its own setting again
        mem._record_memory_history(max_entries=100)  # a second call changes what is kept
        for _ in range(4):
            glassgrad.ones(10) + 1
        assert len(mem._snapshot()["device_traces"][0]) > 2
    finally:
        mem._record_memory_history(None)


def test_tracking_stays_on_while_a_history_records():
    glassgrad.cuda.memory._record_memory_history()
    try:
        with pytest.raises(RuntimeError, match=r"_record_memory_history\(enabled=None\)"):
            glassgrad.memory.set_tracking(False)
        assert glassgrad.memory.is_tracking()
    finally:
        glassgrad.cuda.memory._record_memory_history(None)
