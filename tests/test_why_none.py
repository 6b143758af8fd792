"""explain_grad / graph.diff / graph.why_alive (issue 19). The None-ness of .grad in each case is
checked against torch on the same program; the explanation's cause is glassgrad's own."""
import copy

import numpy as np
import torch

import glassgrad as gg
from glassgrad.autograd import explain_grad
from glassgrad.autograd.graph import diff, why_alive


def _both(fn):
    """Run fn with each library; return (glassgrad tensor, glassgrad loss, torch grad-is-None)."""
    tt, tl = fn(torch)
    tl.backward()
    gt, gl = fn(gg)
    gl.backward()
    assert (gt.grad is None) == (tt.grad is None)
    return gt, gl


def test_not_used_by_loss():
    def f(lib):
        w, v = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
        return w, (v * 2).sum()
    t, loss = _both(f)
    assert explain_grad(t, loss).cause == "not_in_graph"


def test_detach_cuts():
    def f(lib):
        w = lib.ones(3, requires_grad=True)
        return w, (w.detach() * 2).sum() + lib.ones(1, requires_grad=True).sum()
    t, loss = _both(f)
    assert explain_grad(t, loss).cause == "not_in_graph"


def test_item_roundtrip_cuts():
    def f(lib):
        w = lib.ones(3, requires_grad=True)
        x = lib.tensor(w.sum().item(), requires_grad=True)
        y = lib.tensor(w.tolist())
        return y, (x * 2 + y.sum())
    t, loss = _both(f)
    assert explain_grad(t, loss).cause == "no_requires_grad"


def test_no_grad_and_int_op():
    def f(lib):
        w = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            y = w * 2
        return y, (w * 3).sum()
    t, loss = _both(f)
    assert explain_grad(t, loss).cause == "no_requires_grad"
    assert explain_grad(gg.ones(3, requires_grad=True).long(), loss).cause == "no_requires_grad"


def test_non_leaf():
    def f(lib):
        w = lib.ones(3, requires_grad=True)
        y = w * 2
        return y, y.sum()
    t, loss = _both(f)
    assert explain_grad(t, loss).cause == "non_leaf"


def test_frozen_module():
    lin = gg.nn.Linear(2, 2).requires_grad_(False)
    loss = lin(gg.ones(1, 2, requires_grad=True)).sum()
    assert explain_grad(lin.weight, loss).cause == "no_requires_grad"


def test_set_to_none_and_deepcopy():
    tl = torch.nn.Linear(2, 1)
    gl = gg.nn.Linear(2, 1)
    for lib, m in ((torch, tl), (gg, gl)):
        m(lib.ones(1, 2)).sum().backward()
        m.zero_grad(set_to_none=True)
        assert m.weight.grad is None
    assert explain_grad(gl.weight).cause == "backward_not_run"
    loss = gl(gg.ones(1, 2)).sum()
    assert explain_grad(gl.weight, loss).cause == "backward_not_run"
    clone = copy.deepcopy(gl)
    loss = clone(gg.ones(1, 2)).sum()
    loss.backward()
    assert explain_grad(gl.weight, loss).cause == "not_in_graph" and "deepcopy" in str(
        explain_grad(gl.weight, loss))


def test_diff_rnn_hidden_state():
    w = gg.ones(2, 2, requires_grad=True)
    h = gg.zeros(1, 2)
    h = gg.tanh(h @ w)
    loss1 = h.sum()
    h = gg.tanh(h @ w)  # carried without detach
    loss2 = h.sum()
    d = diff(loss1, loss2)
    assert d.link is h.grad_fn.next_functions[0][0].next_functions[0][0]  # the first step's tanh
    assert {type(n).__name__ for n in d.added} >= {"SumBackward0", "TanhBackward0", "MmBackward0"}
    assert "carried" in str(d)
    assert diff(loss1, h.detach().sum() + w.sum()).link is None  # only w's accumulator is shared


def test_diff_total_loss():
    w = gg.ones(3, requires_grad=True)
    total = (w * 1).sum()
    prev = total
    total = total + (w * 2).sum()
    d = diff(prev, total)
    assert d.link is prev.grad_fn
    assert np.isin("AddBackward0", [type(n).__name__ for n in d.added])


def test_why_alive_holders():
    w = gg.ones(3, requires_grad=True)
    losses = []
    losses.append((w * 2).sum())
    node = losses[0].grad_fn
    text = "\n".join(why_alive(node, depth=3))
    assert "a list of 1 items" in text
    held = (w * 3).sum()
    assert any("variable ['held']" in line and "test_why_none.py" in line for line in why_alive(held))

    def make_hook(t):
        return lambda g: t
    hook = make_hook(held)  # noqa: F841
    assert any("closure cell" in line for line in why_alive(held))
