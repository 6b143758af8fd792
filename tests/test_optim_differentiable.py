"""``differentiable=True`` against torch: a meta-gradient through several optimizer steps (to the
initial weights and to Tensor hyperparameters) equals torch's, or both raise torch's in-place
error; float64 gradcheck / gradgradcheck of one step w.r.t. parameters, gradients and state, as
PyTorch's own TestDifferentiableOptimizer; the constructor and step errors of the flag."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad

HPV = {"lr": 0.05, "momentum": 0.8, "weight_decay": 0.1, "betas": (0.9, 0.99)}
T = "tensor"  # the hyperparameter is a 0-d float64 Tensor that requires grad

META_CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.2}),
    ("SGD", {"lr": T, "momentum": T, "weight_decay": T}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Adam", {"lr": T, "betas": T, "weight_decay": T}),
    ("AdamW", {"lr": 0.05, "amsgrad": True}),
    ("AdamW", {"lr": T, "weight_decay": T}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": T}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "weight_decay": 0.1}),
    ("RAdam", {"lr": T}),
    ("ASGD", {"lr": 0.05, "t0": 1}),
    ("ASGD", {"lr": 0.05, "weight_decay": 0.1}),
    ("Rprop", {"lr": 0.05}),
]
META_IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in META_CASES]


def _meta(lib, name, kwargs, steps):
    """Unrolled inner loop: ``steps`` differentiable steps from ``p = w.clone()`` with gradients
    taken with ``create_graph=True``; returns p after the steps and d(outer loss)/d(w, Tensor
    hyperparameters)."""
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    c = lib.tensor(np.linspace(0.5, 2.0, 12).reshape(3, 4))
    hyper, kw = [], {}
    for key, value in kwargs.items():
        if value == T:
            vals = HPV[key] if isinstance(HPV[key], tuple) else (HPV[key],)
            ts = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in vals]
            hyper += ts
            value = tuple(ts) if isinstance(HPV[key], tuple) else ts[0]
        kw[key] = value
    p = w.clone()
    opt = getattr(lib.optim, name)([p], differentiable=True, **kw)
    for _ in range(steps):
        q = p.clone()  # the graph of the gradient saves q, which step() leaves alone
        (g,) = lib.autograd.grad((c * q * q).sum() + q.sin().sum(), p, create_graph=True)
        p.grad = g
        opt.step()
    outer = (p * p.cos()).sum()
    grads = lib.autograd.grad(outer, [w, *hyper], allow_unused=True)
    return [p.detach().numpy()] + [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("name,kwargs", META_CASES, ids=META_IDS)
def test_meta_gradient_matches_torch(name, kwargs, steps):
    try:
        expected = _meta(torch, name, kwargs, steps)
    except RuntimeError as e:  # torch saves a buffer that the next step changes in place
        assert "modified by an inplace operation" in str(e)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _meta(glassgrad, name, kwargs, steps)
        return
    ours = _meta(glassgrad, name, kwargs, steps)
    for i, (a, b) in enumerate(zip(ours, expected)):
        assert (a is None) == (b is None), f"output {i}: None on one side only"
        if a is not None:
            scale = max(1.0, float(np.abs(b).max()))
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 * scale, err_msg=f"output {i}")


def _diff_fn(p, grad, state, opt_class, kwargs, *state_values):
    """One step from clones of ``p`` and ``state``; returns p and the state that requires grad
    (``state_values`` are there so gradcheck sees the state tensors as inputs)."""
    p = p.clone()
    p.grad = grad
    opt = opt_class([p], **kwargs)
    opt.state[p].update({k: v.clone() if isinstance(v, glassgrad.Tensor) else v
                         for k, v in state.items()})
    opt.step()
    return (p, *(v for v in opt.state[p].values()
                 if isinstance(v, glassgrad.Tensor) and v.requires_grad))


def _rand(n=10, requires_grad=True, scale=1.0):
    return (glassgrad.rand(n, dtype=glassgrad.float64) * scale).requires_grad_(requires_grad)


def _scalar(value, requires_grad=False):
    return glassgrad.tensor(value, dtype=glassgrad.float64, requires_grad=requires_grad)


GRADCHECK_CASES = {
    "SGD": ({"momentum_buffer": "rand"}, {"lr": 0.9, "momentum": 0.5}),
    "Adam": ({"step": 10.0, "exp_avg": "rand", "exp_avg_sq": "rand", "max_exp_avg_sq": "rand"},
             {"lr": 0.9, "amsgrad": True}),
    "AdamW": ({"step": 10.0, "exp_avg": "rand", "exp_avg_sq": "rand", "max_exp_avg_sq": "rand"},
              {"lr": 0.9, "amsgrad": True}),
    "Adagrad": ({"step": 10.0, "sum": "rand"}, {"lr": 0.9, "weight_decay": 0.1}),
    "RMSprop": ({"step": 0.0, "square_avg": "rand", "momentum_buffer": "rand",
                 "grad_avg": "small"},
                {"lr": 0.9, "momentum": 0.9, "weight_decay": 0.1, "centered": True}),
    "Adadelta": ({"step": 10.0, "square_avg": "rand", "acc_delta": "rand"},
                 {"lr": 0.9, "weight_decay": 0.1}),
    "Adamax": ({"step": 10.0, "exp_avg": "rand", "exp_inf": "rand"},
               {"lr": 0.9, "weight_decay": 0.1}),
    "NAdam": ({"step": 10.0, "exp_avg": "rand", "exp_avg_sq": "rand", "mu_product": 1.0},
              {"lr": 0.9, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    "RAdam": ({"step": 10.0, "exp_avg": "rand", "exp_avg_sq": "rand"},
              {"lr": 0.9, "weight_decay": 0.1}),
    "ASGD": ({"step": 10.0, "eta": 0.9, "mu": 1.0, "ax": "rand"}, {"lr": 0.9}),
    "Rprop": ({"step": 10.0, "prev": "rand", "step_size": "rand"}, {"lr": 0.9}),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK_CASES))
def test_one_step_gradcheck_and_gradgradcheck(name):
    glassgrad.manual_seed(0)
    spec, kwargs = GRADCHECK_CASES[name]
    state = {}
    for key, value in spec.items():
        if value == "rand":
            state[key] = _rand()
        elif value == "small":
            state[key] = _rand(scale=1e-2)
        else:  # step, eta, mu are counters PyTorch keeps without grad (NAdam's mu_product has it)
            state[key] = _scalar(value, requires_grad=key == "mu_product")
    args = (_rand(), _rand(), state, getattr(glassgrad.optim, name),
            {**kwargs, "differentiable": True}, *state.values())
    assert glassgrad.autograd.gradcheck(_diff_fn, args)
    if name not in ("Rprop", "Adamax"):  # sign() and amax ties: second order is zero / kinked
        assert glassgrad.autograd.gradgradcheck(_diff_fn, args)


def _errors(lib, name, kwargs):
    w = lib.zeros(3, dtype=lib.float64, requires_grad=True)
    try:
        opt = getattr(lib.optim, name)([w.clone()], lr=0.1, **kwargs)
        for p in opt.param_groups[0]["params"]:
            p.grad = lib.ones(3, dtype=lib.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt.step()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e), str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Rprop"])
@pytest.mark.parametrize("kwargs", [{"fused": True, "differentiable": True},
                                    {"foreach": True, "differentiable": True},
                                    {"fused": True, "foreach": True}, {"fused": True}],
                         ids=["fused+differentiable", "foreach+differentiable", "fused+foreach",
                              "fused"])
def test_flag_errors_match_torch(name, kwargs):
    expected, ours = _errors(torch, name, kwargs), _errors(glassgrad, name, kwargs)
    if expected is not None and expected[0] is TypeError:  # torch has no `fused` here
        assert ours is not None and ours[0] is TypeError
        return
    assert ours == expected


def test_leaf_parameter_and_step_requiring_grad_errors():
    for lib in (torch, glassgrad):
        w = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, differentiable=True)
        w.grad = lib.ones(3, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            opt.step()
        p = w.clone()
        opt = lib.optim.Adam([p], differentiable=True)
        p.grad = lib.ones(3, dtype=lib.float64)
        opt.state[p]["step"] = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        opt.state[p]["exp_avg"] = lib.zeros(3, dtype=lib.float64)
        opt.state[p]["exp_avg_sq"] = lib.zeros(3, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="`requires_grad` is not supported for `step`"):
            opt.step()


def test_differentiable_step_records_and_plain_step_does_not():
    w = glassgrad.ones(3, dtype=glassgrad.float64, requires_grad=True)
    p = w.clone()
    opt = glassgrad.optim.Adam([p], lr=0.1, differentiable=True)
    p.grad = glassgrad.ones(3, dtype=glassgrad.float64)
    opt.step()
    assert p.grad_fn is not None and glassgrad.is_grad_enabled()
    plain = glassgrad.ones(3, requires_grad=True)
    opt = glassgrad.optim.Adam([plain], lr=0.1)
    plain.grad = glassgrad.ones(3)
    opt.step()
    assert plain.grad_fn is None and opt.state[plain]["exp_avg"].grad_fn is None


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop",
                                  "RMSprop", "Adadelta", "SGD", "Adagrad"])
def test_capturable_on_the_cpu_raises_like_torch(name):
    expected, ours = (_errors(lib, name, {"capturable": True}) for lib in (torch, glassgrad))
    assert expected is not None and ours is not None and ours[0] is expected[0]
    if expected[0] is AssertionError:
        assert ours == expected
