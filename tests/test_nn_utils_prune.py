"""``nn.utils.prune`` against torch: after the same seed every method (and chains of them in a
PruningContainer, and global_unstructured) picks the same entries, so masks, state_dict keys,
the hook types, forward values, gradients and errors are compared directly."""

from __future__ import annotations

import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 - torch does not import the submodule itself

import glassgrad
from tests.nn_utils_oracle import _both, _error, _same


def _hooks(m):
    return [type(h).__name__ for h in m._forward_pre_hooks.values()]


@pytest.mark.parametrize("method", ["random_unstructured", "l1_unstructured", "ln_structured",
                                    "random_structured", "identity", "custom_from_mask"])
@pytest.mark.parametrize("amount", [0.3, 2])
def test_single_method(method, amount):
    def run(lib):
        P = lib.nn.utils.prune
        m = lib.nn.Conv2d(3, 4, 2).double()
        if method == "ln_structured":
            P.ln_structured(m, "weight", amount=amount, n=1, dim=1)
        elif method == "random_structured":
            P.random_structured(m, "weight", amount=amount, dim=0)
        elif method == "identity":
            P.identity(m, "weight")
        elif method == "custom_from_mask":
            P.custom_from_mask(m, "weight", mask=(lib.arange(48) % (amount + 1) == 0).reshape(
                4, 3, 2, 2))
        else:
            getattr(P, method)(m, "weight", amount=amount)
        x = lib.randn(2, 3, 3, 3, dtype=lib.float64)
        y = m(x)
        y.pow(2).sum().backward()
        out = (sorted(m.state_dict()), _hooks(m), P.is_pruned(m), m.weight_mask, y,
               m.weight_orig.grad, m.weight.grad_fn is not None)
        P.remove(m, "weight")
        return out, sorted(m.state_dict()), type(m.weight).__name__, m.weight, P.is_pruned(m)

    _same(*_both(run))


def test_container_chain_and_importance_scores():
    def run(lib):
        P = lib.nn.utils.prune
        net = lib.nn.Sequential(lib.nn.Linear(6, 5), lib.nn.ReLU(), lib.nn.Linear(5, 4)).double()
        P.random_unstructured(net[0], "weight", 0.2)
        P.ln_structured(net[0], "weight", amount=1, n=float("inf"), dim=0)
        P.l1_unstructured(net[0], "weight", amount=3,
                          importance_scores=lib.arange(30.0).reshape(5, 6))
        P.l1_unstructured(net[2], "bias", 0.5)
        container = net[0]._forward_pre_hooks[next(iter(net[0]._forward_pre_hooks))]
        net(lib.randn(3, 6, dtype=lib.float64)).sum().backward()
        return (sorted(net.state_dict()), _hooks(net[0]), len(container),
                [type(c).__name__ for c in container], net[0].weight_mask, net[2].bias_mask,
                net[0].weight_orig.grad, P.is_pruned(net))

    _same(*_both(run))


def test_global_unstructured_and_prune_method():
    def run(lib):
        P = lib.nn.utils.prune
        a, b = lib.nn.Linear(4, 3), lib.nn.Conv1d(2, 3, 2)
        P.l1_unstructured(a, "weight", 0.25)
        pairs = ((a, "weight"), (b, "weight"), (b, "bias"))
        P.global_unstructured(pairs, pruning_method=P.RandomUnstructured, amount=0.4)
        P.global_unstructured([(a, "bias")], pruning_method=P.L1Unstructured, amount=1,
                              importance_scores={(a, "bias"): lib.tensor([3.0, 1.0, 2.0])})
        t = lib.tensor([[1.0, -4.0], [0.5, 2.0]])
        return (_hooks(a), _hooks(b), a.weight_mask, b.weight_mask, b.bias_mask, a.bias_mask,
                P.L1Unstructured(0.5).prune(t), P.LnStructured(1, 2, dim=0).prune(t),
                P.CustomFromMask(lib.tensor([[1, 0], [0, 1]])).prune(t))

    _same(*_both(run))


@pytest.mark.parametrize("case", ["fraction", "too_many", "type", "not_pruned", "one_dim",
                                  "bad_dim", "global_structured", "container_mix", "scores"])
def test_prune_errors(case):
    def run(lib):
        P = lib.nn.utils.prune
        m = lib.nn.Linear(3, 2)
        if case == "fraction":
            P.l1_unstructured(m, "weight", 1.5)
        elif case == "too_many":
            P.random_unstructured(m, "weight", 7)
        elif case == "type":
            P.l1_unstructured(m, "weight", "half")
        elif case == "not_pruned":
            P.remove(m, "weight")
        elif case == "one_dim":
            P.ln_structured(m, "bias", 1, 2, 0)
        elif case == "bad_dim":
            P.random_structured(m, "weight", 1, dim=2)
        elif case == "global_structured":
            P.global_unstructured([(m, "weight")], pruning_method=P.LnStructured, amount=1,
                                  n=2, dim=0)
        elif case == "container_mix":
            a, b = P.Identity(), P.Identity()
            a._tensor_name, b._tensor_name = "weight", "bias"
            P.PruningContainer(a).add_pruning_method(b)
        else:
            P.l1_unstructured(m, "weight", 1, importance_scores=lib.ones(3))
        return m

    t, g = _error(run)
    assert t[0] == g[0]
    if case not in ("not_pruned", "global_structured", "container_mix", "scores"):
        assert t[1] == g[1]  # the others embed reprs of modules or classes


def test_failed_apply_restores_the_parameter():
    for lib in (torch, glassgrad):
        m = lib.nn.Linear(3, 2)
        w = m.weight
        with pytest.raises(ValueError):
            lib.nn.utils.prune.l1_unstructured(m, "weight", 9)
        assert m.weight is w and sorted(m.state_dict()) == ["bias", "weight"]
