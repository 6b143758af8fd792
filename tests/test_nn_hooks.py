"""Module hooks against torch: forward pre/post hooks (with kwargs, prepend, removal), full
backward hooks (grad_input / grad_output, replacement), backward pre-hooks, global hooks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params


def _pair():
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    g = glassgrad.nn.Sequential(glassgrad.nn.Linear(3, 4), glassgrad.nn.Tanh(),
                                glassgrad.nn.Linear(4, 2)).double()
    copy_params(t, g)
    return g, t


X = np.random.default_rng(0).standard_normal((5, 3))


def test_forward_hooks_modify_args_and_output():
    outs = []
    for m, net in zip((glassgrad, torch), _pair()):
        calls = []
        h1 = net[0].register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h2 = net[0].register_forward_hook(lambda mod, args, out: out + 1)
        net[2].register_forward_pre_hook(lambda mod, args, c=calls: c.append("second"))
        net[2].register_forward_pre_hook(lambda mod, args, c=calls: c.append("first"),
                                         prepend=True)
        outs.append(net(m.tensor(X)))
        assert calls == ["first", "second"]
        h1.remove()
        h2.remove()
        outs.append(net(m.tensor(X)))
    assert_close(outs[0], outs[2])
    assert_close(outs[1], outs[3])


def test_forward_hooks_with_kwargs():
    class Scale(glassgrad.nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    mod = Scale()
    mod.register_forward_pre_hook(lambda m, args, kwargs: (args, {"factor": 3.0}),
                                  with_kwargs=True)
    seen = {}
    mod.register_forward_hook(lambda m, args, kwargs, out: seen.update(kwargs), with_kwargs=True)
    out = mod(glassgrad.ones(2), factor=2.0)
    assert out.tolist() == [3.0, 3.0] and seen == {"factor": 3.0}
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad = Scale()
        bad.register_forward_pre_hook(lambda m, a, k: 5, with_kwargs=True)
        bad(glassgrad.ones(1))


def _backward_record(m, net, x_requires_grad=True, modify=False):
    rec = {}

    def hook(mod, grad_input, grad_output):
        rec["gin"] = grad_input
        rec["gout"] = grad_output
        if modify:
            return (grad_input[0] * 10,)

    net[2].register_full_backward_hook(hook)
    x = m.tensor(X, requires_grad=x_requires_grad)
    out = net(x)
    out.backward(m.ones(5, 2, dtype=m.float64))
    return rec, x, net


@pytest.mark.parametrize("modify", [False, True])
def test_full_backward_hook_matches_torch(modify):
    (rg, xg, ng), (rt, xt, nt) = [_backward_record(m, n, modify=modify)
                                  for m, n in zip((glassgrad, torch), _pair())]
    assert len(rg["gin"]) == len(rt["gin"]) == 1
    assert_close(rg["gin"][0], rt["gin"][0], what="grad_input")
    assert_close(rg["gout"][0], rt["gout"][0], what="grad_output")
    assert_close(xg.grad, xt.grad, what="input grad after the hook")
    for (n, a), (_, b) in zip(ng.named_parameters(), nt.named_parameters()):
        assert_close(a.grad, b.grad, what=n)


def test_full_backward_hook_without_input_grad():
    net = glassgrad.nn.Linear(3, 2).double()
    rec = {}
    net.register_full_backward_hook(lambda m, gi, go: rec.update(gi=gi, go=go))
    net(glassgrad.tensor(X)).sum().backward()
    t_net = torch.nn.Linear(3, 2).double()
    t_rec = {}
    t_net.register_full_backward_hook(lambda m, gi, go: t_rec.update(gi=gi, go=go))
    t_net(torch.tensor(X)).sum().backward()
    assert rec["gi"] == t_rec["gi"] == (None,)
    assert_close(rec["go"][0], t_rec["go"][0])


def test_backward_pre_hook_replaces_grad_output():
    results = []
    for m, net in zip((glassgrad, torch), _pair()):
        net[2].register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 3,))
        x = m.tensor(X, requires_grad=True)
        net(x).sum().backward()
        results.append((x.grad, net[0].weight.grad, net[2].weight.grad))
    for a, b in zip(*results):
        assert_close(a, b)


def test_backward_hook_with_create_graph_is_differentiable():
    grads = []
    for m, net in zip((glassgrad, torch), _pair()):
        net[0].register_full_backward_hook(lambda mod, gi, go: None)
        x = m.tensor(X, requires_grad=True)
        (g,) = m.autograd.grad(net(x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        grads.append(gg)
    assert_close(grads[0], grads[1])


def test_hook_handle_remove_and_global_hook():
    from glassgrad.nn import _module_hooks

    net = glassgrad.nn.Linear(2, 2)
    seen = []
    handle = _module_hooks.register_module_forward_hook(lambda m, a, o: seen.append(type(m)))
    try:
        net(glassgrad.ones(1, 2))
    finally:
        handle.remove()
    net(glassgrad.ones(1, 2))
    assert seen == [glassgrad.nn.Linear]
    h = net.register_full_backward_hook(lambda m, gi, go: seen.append("bw"))
    h.remove()
    net(glassgrad.ones(1, 2, requires_grad=True)).sum().backward()
    assert "bw" not in seen
