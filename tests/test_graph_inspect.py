"""The saved-value ledger (``autograd.graph.summary`` / ``to_dict``) on real graphs, and PyTorch's
public ``torch.autograd.graph`` helpers compared with torch.

Byte counts are checked against the arrays' own ``nbytes``; saved shapes against the tensors torch
saves for the same ops (its private ``_saved_*`` attributes, the only place torch shows them).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.autograd import graph
from glassgrad.autograd.graph import _Hooks
from glassgrad.autograd.graph_inspect import graph_nodes
from tests.autograd_oracle import same, same_error
from tests.oracle import assert_close, copy_params


@pytest.fixture
def record_source():
    prev = _Hooks.record_source
    _Hooks.record_source = True
    yield
    _Hooks.record_source = prev


def _mlp(m):
    return m.nn.Sequential(m.nn.Linear(3, 5), m.nn.Tanh(), m.nn.Linear(5, 2))


def _saved_arrays(node):
    return [s.tensor._array for s in node._saved if s is not None]


def _nodes(data, name):
    return [n for n in data["nodes"] if n["name"] == name]


def test_mlp_ledger_counts_each_buffer_once(record_source):
    net = _mlp(glassgrad)
    x = glassgrad.randn(4, 3)
    h = net[1](net[0](x))
    loss = net[2](h).sum()  # line of the last ops
    params = dict(net.named_parameters())
    data = graph.to_dict(loss, params)
    json.loads(json.dumps(data))
    mms = _nodes(data, "AddmmBackward0")
    assert len(mms) == 2
    first, second = mms
    # Linear (one op, as PyTorch's addmm) saves its input for the weight's gradient, and the
    # weight (the parameter itself) only for an input that requires grad, as PyTorch
    assert [s["shape"] for s in first["saved"]] == [[4, 3]]
    assert [s["shape"] for s in second["saved"]] == [[4, 5], [2, 5]]
    assert first["saved"][0]["nbytes"] == x._array.nbytes
    w_entry = second["saved"][1]
    assert w_entry["param"] == "2.weight" and not w_entry["is_view"]
    assert w_entry["buffer_bytes"] == params["2.weight"]._array.nbytes
    # Tanh's saved output is the second matmul's saved input: one buffer, counted once
    (tanh,) = _nodes(data, "TanhBackward0")
    assert tanh["saved"][0]["buffer"] == second["saved"][0]["buffer"]
    assert tanh["saved"][0]["counted"] != second["saved"][0]["counted"]
    assert tanh["saved"][0]["nbytes"] == h._array.nbytes
    tot = data["totals"]
    weights = params["2.weight"]._array.nbytes
    assert tot["saved_bytes"] == x._array.nbytes + h._array.nbytes + weights
    assert tot["saved_param_bytes"] == weights
    assert tot["saved_graph_only_bytes"] == x._array.nbytes + h._array.nbytes
    assert tot["leaves"] == 4 and tot["saved_tensors"] == 4 and tot["saved_buffers"] == 3
    # forward order: each leaf just before the op that first reads it; source lines recorded
    names = [n["name"] for n in data["nodes"]]
    assert names[:3] == ["AccumulateGrad", "AccumulateGrad", "AddmmBackward0"]
    assert names[-1] == "SumBackward0"
    assert data["nodes"][-1]["source"].endswith(f"test_graph_inspect.py:{_line_of('.sum()  #')}")
    assert data["nodes"][0]["param"] == "0.weight"


def _line_of(fragment):
    with open(__file__) as f:
        for k, line in enumerate(f, 1):
            if fragment in line:
                return k
    raise AssertionError(fragment)


def test_after_backward_saved_tensors_are_ghosts_with_their_former_size():
    net = _mlp(glassgrad)
    loss = net(glassgrad.randn(4, 3)).pow(2).mean()
    before = graph.to_dict(loss)
    loss.backward()
    after = graph.to_dict(loss)
    assert after["totals"]["saved_bytes"] == 0 and after["totals"]["saved_tensors"] == 0
    assert after["totals"]["freed_bytes"] == before["totals"]["saved_graph_only_bytes"]
    for b, a in zip(before["nodes"], after["nodes"]):
        assert a["name"] == b["name"] and a["output"] == b["output"]
        assert [(s["name"], s["shape"], s["dtype"], s["nbytes"]) for s in a["saved"]] == \
            [(s["name"], s["shape"], s["dtype"], s["nbytes"]) for s in b["saved"]]
        assert a["freed"] == bool(b["saved"])
        assert all(s["freed"] for s in a["saved"])
    # the grad norms of the leaves are in the ledger once backward filled them
    leaves = [n for n in after["nodes"] if n["kind"] == "leaf"]
    norms = sorted(float(np.linalg.norm(p.grad._array)) for p in net.parameters())
    np.testing.assert_allclose(sorted(n["grad_norm"] for n in leaves), norms, rtol=1e-6)


def test_views_of_one_buffer_count_once():
    big = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
    base = glassgrad.from_numpy(big)
    w = glassgrad.randn(6, 3, requires_grad=True)
    left, right = base[:, :3], base[:, 5:]  # two views of one (6, 8) buffer
    out = (w * left).sum() + (w * right).exp().sum()
    data = graph.to_dict(out)
    views = [s for n in data["nodes"] for s in n["saved"] if s["shape"] == [6, 3] and s["is_view"]]
    assert len(views) == 2 and views[0]["buffer"] == views[1]["buffer"]
    assert all(s["nbytes"] == left._array.nbytes for s in views)
    assert all(s["buffer_bytes"] == big.nbytes for s in views)
    assert sum(s["counted"] for s in views) == 1
    exp_result = _nodes(data, "ExpBackward0")[0]["saved"][0]
    mul_inputs = {tuple(s["shape"]) for n in _nodes(data, "MulBackward0") for s in n["saved"]}
    assert mul_inputs == {(6, 3)}
    # w is not saved: only w requires grad, and its gradient needs the views alone (PyTorch's)
    assert data["totals"]["saved_bytes"] == big.nbytes + exp_result["nbytes"]
    assert data["totals"]["saved_param_bytes"] == 0


@pytest.mark.parametrize("case", ["exp", "mul", "tanh", "matmul", "sigmoid", "div"])
def test_saved_shapes_and_bytes_match_what_torch_saves(case):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 4)) + 3

    def run(m):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(b[:3] if case in ("mul", "div") else b, requires_grad=True)
        return {"exp": lambda: x.exp(), "mul": lambda: x * y, "tanh": lambda: x.tanh(),
                "matmul": lambda: x @ y, "sigmoid": lambda: x.sigmoid(),
                "div": lambda: x / y}[case]()

    theirs = run(torch).grad_fn
    saved_torch = sorted(
        (tuple(v.shape), str(v.dtype).split(".")[-1], v.nelement() * v.element_size())
        for k in dir(theirs) if k.startswith("_saved_")
        for v in [getattr(theirs, k)] if isinstance(v, torch.Tensor)
    )
    ours = graph.to_dict(run(glassgrad))["nodes"][-1]
    saved_ours = sorted((tuple(s["shape"]), s["dtype"], s["nbytes"]) for s in ours["saved"])
    assert saved_ours == saved_torch
    assert ours["name"] == theirs.name()


def test_gan_step_with_retain_graph_shows_what_is_still_held():
    torch.manual_seed(0)
    mk = {m: (m.nn.Sequential(m.nn.Linear(4, 8), m.nn.LeakyReLU(0.2), m.nn.Linear(8, 6)),
              m.nn.Sequential(m.nn.Linear(6, 8), m.nn.LeakyReLU(0.2), m.nn.Linear(8, 1)))
          for m in (torch, glassgrad)}
    for tm, gm in zip(mk[torch], mk[glassgrad]):
        copy_params(tm, gm)
    z, real = np.random.default_rng(2).standard_normal((5, 4)), np.ones((5, 6))

    def step(m):
        gen, disc = mk[m]
        bce = m.nn.BCEWithLogitsLoss()
        fake = gen(m.tensor(z, dtype=m.float32))
        ones, zeros = m.ones(5, 1), m.zeros(5, 1)
        d_loss = bce(disc(m.tensor(real, dtype=m.float32)), ones) + bce(disc(fake), zeros)
        d_loss.backward(retain_graph=True)
        g_loss = bce(disc(fake), ones)
        return d_loss, g_loss

    step(torch)[1].backward()
    d_loss, g_loss = step(glassgrad)
    held = graph.to_dict(d_loss)
    assert held["totals"]["freed_tensors"] == 0 and held["totals"]["saved_graph_only_bytes"] > 0
    before = graph.to_dict(g_loss)["totals"]["saved_graph_only_bytes"]
    g_loss.backward()
    after = graph.to_dict(d_loss)
    # the generator's nodes were freed by g_loss.backward; the discriminator's first pass was not
    freed = [n for n in after["nodes"] if n["freed"]]
    alive = [n for n in after["nodes"] if n["saved"] and not n["freed"]]
    assert freed and alive
    assert graph.to_dict(g_loss)["totals"]["freed_bytes"] == before
    text = io.StringIO()
    assert graph.summary(d_loss, file=text) is None
    assert "(freed)" in text.getvalue() and "AddmmBackward0" in text.getvalue()
    for p_t, p_g in zip(mk[torch][0].parameters(), mk[glassgrad][0].parameters()):
        assert_close(p_g.grad, p_t.grad, 1e-5, 1e-4)


def test_double_backward_graph_wgan_gp_penalty():
    critic = glassgrad.nn.Sequential(glassgrad.nn.Linear(4, 8), glassgrad.nn.Tanh(),
                                     glassgrad.nn.Linear(8, 1))
    interp = glassgrad.randn(6, 4, requires_grad=True)
    out = critic(interp)
    (grads,) = glassgrad.autograd.grad(out, interp, glassgrad.ones_like(out), create_graph=True)
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    data = graph.to_dict(penalty, dict(critic.named_parameters()))
    names = [n["name"] for n in data["nodes"]]
    # the first Linear's forward op (tanh's input), plus the backward's own grad @ weight
    assert names.count("AddmmBackward0") == 1 and names.count("MmBackward0") == 2
    assert "TanhBackward0" in names
    seen = set()
    for node in graph_nodes([penalty]):
        for arr in (_saved_arrays(node) if node._saved else []):
            seen.add(id(arr))
    assert data["totals"]["saved_tensors"] >= len(seen) > 0
    for node, row in zip(graph_nodes([penalty]), data["nodes"]):
        if node._saved:
            assert [a.nbytes for a in _saved_arrays(node)] == [s["nbytes"] for s in row["saved"]]
    penalty.backward()
    assert graph.to_dict(penalty)["totals"]["saved_tensors"] == 0


def test_custom_function_and_packed_saved_tensors():
    class Square(glassgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.power = 2
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = glassgrad.randn(3, 2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = Square.apply(x).exp()
    data = graph.to_dict(y)
    (fn,) = [n for n in data["nodes"] if n["kind"] == "function"]
    assert fn["name"] == "SquareBackward" and fn["attrs"] == {"power": "2"}
    assert fn["saved"][0]["packed"] and fn["saved"][0]["nbytes"] == x._array.nbytes
    exp = _nodes(data, "ExpBackward0")[0]["saved"][0]
    assert exp["packed"] and exp["buffer"] != fn["saved"][0]["buffer"]
    assert data["totals"]["saved_bytes"] == 2 * x._array.nbytes
    y.sum().backward()
    (fn,) = [n for n in graph.to_dict(y)["nodes"] if n["kind"] == "function"]
    assert fn["freed"] and fn["saved"][0]["freed"]


def test_disable_saved_tensors_hooks_matches_torch():
    def enter_inside(m):
        with m.autograd.graph.disable_saved_tensors_hooks("no hooks here"), \
                m.autograd.graph.save_on_cpu():
            pass

    def disable_inside(m):
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t), \
                m.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            pass

    same_error(enter_inside, RuntimeError, "no hooks here")
    same_error(disable_inside, RuntimeError, "no hooks here")

    def after(m):
        with m.autograd.graph.disable_saved_tensors_hooks("a"):
            pass
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            x = m.tensor([1.0, 2.0], requires_grad=True)
            x.exp().sum().backward()
        return x.grad

    same(after)


def test_save_on_cpu_gives_torch_gradients():
    w = np.random.default_rng(3).standard_normal((3, 3))

    def run(m):
        x = m.tensor(w, requires_grad=True)
        with m.autograd.graph.save_on_cpu(pin_memory=False):
            y = (x.sigmoid() @ x).tanh().sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg

    same(run)


def test_get_gradient_edge_matches_torch():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        ex, ey = m.autograd.graph.get_gradient_edge(x), m.autograd.graph.get_gradient_edge(y)
        # torch names it "torch::autograd::AccumulateGrad"
        return [ex.node.name().split("::")[-1], ex.output_nr, ey.node.name(), ey.output_nr,
                ey.node is y.grad_fn]

    same(run)
    same_error(lambda m: m.autograd.graph.get_gradient_edge(m.zeros(2)), RuntimeError,
               "It is not possible to get the gradient edge for a Tensor that does not require")


def test_register_multi_grad_hook_matches_torch():
    def run(m):
        a = m.rand(2, 3, requires_grad=True)
        b = m.rand(2, 3, requires_grad=True)
        c, d = a * b, a * b
        calls, first = [], []
        m.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: calls.append([g is not None for g in grads]))
        m.autograd.graph.register_multi_grad_hook((a, b), lambda g: first.append(list(g.shape)),
                                                  mode="any")
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        handle = m.autograd.graph.register_multi_grad_hook((a, d), lambda g: calls.append("x"))
        handle.remove()
        (c + d).sum().backward()
        return calls, first

    assert same(run)[0] == [[True, True, True, False], [True, False, True, False],
                            [True, True, True, True]]
    same_error(lambda m: m.autograd.graph.register_multi_grad_hook(
        (m.ones(1, requires_grad=True),), print, mode="some"), ValueError, "Expects mode")


def test_allow_mutation_on_saved_tensors_matches_torch():
    def run(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            a = m.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.sum().backward()
        return a.grad, b

    same(run)

    def nested(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors(), \
                m.autograd.graph.allow_mutation_on_saved_tensors():
            pass

    same_error(nested, RuntimeError, "allow_mutation_on_saved_tensors contexts cannot be nested")

    def outside(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            a = m.ones(2, requires_grad=True)
            out = (a.clone() ** 2).sum()
        out.backward()

    same_error(outside, AssertionError, "Trying to backward outside of the "
               "'allow_mutation_on_saved_tensors' context")


def test_summary_table_has_totals_and_sources(record_source, capsys):
    x = glassgrad.randn(8, 8, requires_grad=True)
    y = (x @ x).relu().sum()
    graph.summary(y)
    text = capsys.readouterr().out
    head = text.splitlines()[0]
    # MmBackward0 saves x twice (one buffer, a leaf), ReluBackward0 its (8, 8) result
    assert "3 saved tensors in 2 buffers = 512 B (leaves 256 B, graph only 256 B)" in head
    assert "MmBackward0" in text and "ReluBackward0" in text
    assert f"test_graph_inspect.py:{_line_of('(x @ x).relu()')}" in text


def test_record_source_switch_and_hint():
    from glassgrad.autograd.graph_inspect import record_source

    x = glassgrad.randn(2, requires_grad=True)
    with record_source():
        y = x * 2  # recorded here
    z = y.exp()
    assert y.grad_fn.source.endswith(f"test_graph_inspect.py:{_line_of('# recorded here')}")
    assert z.grad_fn.source is None
    text = io.StringIO()
    graph.summary(x.exp(), file=text)
    assert "record_source()" in text.getvalue()
