"""Memory counters (``glassgrad.memory_allocated`` and friends, ``glassgrad.cuda.*``): byte counts
checked against the arrays' own ``nbytes``, the breakdown by role on a real training step, exact
peaks, the article's retain_graph loops, and ``forecast`` checked against a real run."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import memory
from glassgrad.autograd import diagnostics


@pytest.fixture(autouse=True)
def tracking():
    """Each test starts from a fresh count and leaves tensor creation plain again."""
    memory.set_tracking(False)
    diagnostics.reset()
    memory.set_tracking(True)
    yield
    memory.set_tracking(False)


def test_cuda_names_are_the_cpu_counters_and_torch_has_the_same_names():
    for name in ("memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
                 "memory_stats", "memory_summary", "memory_reserved", "empty_cache"):
        assert callable(getattr(torch.cuda, name))  # the article's API exists in PyTorch
        assert getattr(glassgrad.cuda, name) is getattr(memory, name)
    assert glassgrad.memory_allocated is memory.memory_allocated
    # PyTorch on a CPU-only build reports 0; glassgrad counts the CPU buffers
    assert torch.cuda.memory_allocated() == 0
    x = glassgrad.zeros(1000)
    assert glassgrad.cuda.memory_allocated() >= x.numpy().nbytes


def test_buffers_are_counted_once_and_freed():
    base = glassgrad.memory_allocated()
    x = glassgrad.randn(250, 4)
    assert glassgrad.memory_allocated() - base == x.numpy().nbytes == 4000
    views = [x[10:], x.t(), x.detach(), x.data, x.view(-1), x.expand(3, 250, 4), x.reshape(1000)]
    assert glassgrad.memory_allocated() - base == 4000  # views share the buffer
    y = x.to(glassgrad.float64)
    assert glassgrad.memory_allocated() - base == 4000 + y.numpy().nbytes
    del x, views
    assert glassgrad.memory_allocated() - base == y.numpy().nbytes
    del y
    assert glassgrad.memory_allocated() == base


def test_peak_is_exact_and_resets():
    glassgrad.reset_peak_memory_stats()
    base = glassgrad.memory_allocated()
    assert glassgrad.max_memory_allocated() == base
    a = glassgrad.ones(1000)  # 4000 B
    b = glassgrad.ones(2000)  # 8000 B
    del a
    c = glassgrad.ones(500)  # 2000 B
    assert glassgrad.memory_allocated() - base == 10000
    assert glassgrad.max_memory_allocated() - base == 12000
    glassgrad.reset_peak_memory_stats()
    assert glassgrad.max_memory_allocated() == glassgrad.memory_allocated()
    del b, c
    assert glassgrad.memory_allocated() == base


def _mlp_step():
    glassgrad.manual_seed(0)
    model = glassgrad.nn.Sequential(glassgrad.nn.Linear(20, 32), glassgrad.nn.ReLU(),
                                    glassgrad.nn.Linear(32, 1))
    opt = glassgrad.optim.Adam(model.parameters(), lr=1e-3)
    x = glassgrad.randn(16, 20)
    return model, opt, x


@pytest.fixture
def no_gc():
    """Earlier tests' cyclic garbage must not be collected in the middle of a before/after count."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _delta(before):
    after = memory.breakdown()
    return {k: after[k] - before[k] for k in after}


def test_breakdown_of_a_training_step_matches_the_arrays(no_gc):
    before = memory.breakdown()  # whatever earlier tests left alive
    model, opt, x = _mlp_step()
    params = sum(p.detach().numpy().nbytes for p in model.parameters())
    hidden = []
    model[1].register_forward_hook(lambda m, args, out: hidden.append(out.detach()))
    out = model(x)
    loss = out.pow(2).mean()
    parts = _delta(before)
    assert parts["parameters"] == params
    assert parts["gradients"] == 0 and parts["optimizer_state"] == 0
    # saved for backward: the input x (by the first Linear), ReLU's output (by ReLU and the second
    # Linear: one buffer), the second Linear's output (by pow)
    saved = x.numpy().nbytes + hidden[0].numpy().nbytes + out.detach().numpy().nbytes
    assert parts["saved_for_backward"] == saved
    assert sum(memory.breakdown().values()) == glassgrad.memory_allocated()
    loss.backward()
    opt.step()
    parts = _delta(before)
    assert parts["gradients"] == params
    state = sum(v.numpy().nbytes for s in opt.state.values() for v in s.values()
                if isinstance(v, glassgrad.Tensor))
    assert parts["optimizer_state"] == state and state >= 2 * params  # exp_avg, exp_avg_sq, step
    assert parts["saved_for_backward"] == 0  # backward freed the graph
    stats = glassgrad.memory_stats()
    assert stats["allocated_bytes.all.current"] == glassgrad.memory_allocated()
    assert stats["breakdown.gradients"] == params
    assert stats["allocated_bytes.all.peak"] >= stats["allocated_bytes.all.current"]
    text = glassgrad.memory_summary()
    for word in ("parameters", "gradients", "optimizer state", "saved for backward", "other",
                 "retain_graph=True"):
        assert word in text


def test_article_retain_graph_loop_memory_stays_flat_but_is_reported():
    model, _, x = _mlp_step()
    sizes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4):  # the article's 2.2 loop: a new graph each time, the old one dropped
            output = model(x)
            loss = output.pow(2).mean()
            loss.backward(retain_graph=True)
            sizes.append(glassgrad.memory_allocated())
    assert sizes[1] == sizes[2] == sizes[3]  # not a leak: each graph dies at the next forward
    unused = [w for w in caught if "kept alive for nothing" in str(w.message)]
    assert len(unused) == 1  # once per line
    stats = glassgrad.memory_stats()
    assert stats["retained_graphs.dropped_unused"] == 3
    assert stats["retained_graphs.live"] == 1
    assert stats["retained_graphs.dropped_unused_bytes"] == 3 * stats["retained_graphs.live_bytes"]
    assert "dropped, never used again" in glassgrad.memory_summary()


def test_carried_hidden_state_with_retain_graph_grows_and_detach_fixes_it():
    glassgrad.manual_seed(0)
    cell = glassgrad.nn.RNNCell(3, 8)
    xs = [glassgrad.randn(2, 3) for _ in range(5)]

    def run(detach):
        h = glassgrad.zeros(2, 8)
        sizes = []
        for x in xs:
            if detach:
                h = h.detach()
            h = cell(x, h)
            h.pow(2).sum().backward(retain_graph=not detach)
            sizes.append(glassgrad.memory_allocated())
        return sizes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grows = run(detach=False)
    steps = np.diff(grows)
    assert (steps > 0).all() and len(set(steps[1:].tolist())) == 1  # the same bytes per iteration
    flat = run(detach=True)
    assert flat[1] == flat[2] == flat[3] == flat[4]


def _net():
    glassgrad.manual_seed(0)
    return glassgrad.nn.Sequential(
        glassgrad.nn.Conv2d(1, 4, 3), glassgrad.nn.ReLU(), glassgrad.nn.Flatten(),
        glassgrad.nn.Linear(4 * 6 * 6, 10))


def test_forecast_matches_a_real_run(no_gc):
    net = _net()

    def step(x):
        return net(x).logsumexp(1).mean()

    predicted = memory.forecast(step, (8, 1, 8, 8))
    assert all(p.grad is None for p in net.parameters())  # restored
    x = glassgrad.randn(8, 1, 8, 8)
    before = memory.breakdown()
    glassgrad.reset_peak_memory_stats()
    base = glassgrad.memory_allocated()
    loss = step(x)
    forward = glassgrad.max_memory_allocated() - base
    saved = _delta(before)["saved_for_backward"]
    loss.backward()
    assert predicted.forward_peak_increase_bytes == forward
    assert predicted.peak_increase_bytes == glassgrad.max_memory_allocated() - base
    assert predicted.saved_bytes == saved  # the real run saves the same buffers
    assert predicted.gradient_bytes == sum(p.grad.numpy().nbytes for p in net.parameters())


def test_forecast_per_module_saved_bytes():
    net = _net()
    f = memory.forecast(net, (8, 1, 8, 8))
    assert list(f.per_module) == ["Sequential", "0", "1", "2", "3"]
    x_bytes = 8 * 1 * 8 * 8 * 4
    relu_out = 8 * 4 * 6 * 6 * 4
    assert f.per_module["0"] == x_bytes  # Conv2d keeps its input (the weight is a parameter)
    assert f.per_module["1"] == relu_out  # ReLU keeps its output
    assert f.per_module["2"] == 0  # Flatten is a view
    assert f.per_module["3"] == relu_out  # Linear keeps its input: a view of ReLU's output
    assert f.per_module["Sequential"] == x_bytes + relu_out  # each buffer once
    assert f.saved_bytes == x_bytes + relu_out
    assert "Sequential" in str(f)


def test_tracking_off_leaves_the_hot_path_untouched():
    from glassgrad.ops import primitive
    from glassgrad.tensor import Tensor

    memory.set_tracking(False)
    assert Tensor.__dict__["_make"] is memory._ORIGINAL_MAKE
    assert primitive._make == Tensor._make
    assert not memory.is_tracking()
    glassgrad.memory_allocated()  # any query starts counting
    assert memory.is_tracking() and Tensor.__dict__["_make"] is not memory._ORIGINAL_MAKE


def test_asking_for_the_peak_first_warns_that_counting_starts_now():
    memory.set_tracking(False)
    with pytest.warns(UserWarning, match="memory counting starts with this call") as caught:
        peak = glassgrad.cuda.max_memory_allocated()
    assert peak == glassgrad.memory_allocated()
    assert caught[0].filename == __file__
