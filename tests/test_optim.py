"""Optimizers against torch: identical parameters and losses on both libraries, trajectories and
state compared step by step; state dicts, param groups, zero_grad, closures, hooks and errors."""

from __future__ import annotations

import copy
import importlib
import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import to_np

SHAPES = [(3, 4), (5,)]
COEFS = [np.linspace(0.5, 2.0, int(np.prod(s))).reshape(s) for s in SHAPES]

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    (
        "Adam",
        {"lr": 0.05, "betas": (0.3, 0.999), "maximize": True, "amsgrad": True, "weight_decay": 0.1},
    ),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.3, "centered": True, "momentum": 0.5, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "maximize": True}),
]
CASE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in SHAPES] + [rng.standard_normal(2)]  # last: no grad


def _params(lib, arrays, dtype=np.float64):
    return [lib.from_numpy(a.astype(dtype)).requires_grad_() for a in arrays]


def _loss(lib, params):
    """A fixed non-quadratic loss of the first two parameters (the third never gets a gradient)."""
    total = 0
    for p, c in zip(params, COEFS):
        coef = lib.from_numpy(c.astype(np.float64 if p.dtype == lib.float64 else np.float32))
        total = total + (coef * p * p).sum() + p.sin().sum()
    return total


def _train(lib, opt, params, steps):
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, params).backward()
        opt.step()
        traj.append([to_np(p) for p in params])
    return traj


def _run(lib, name, kwargs, steps=10, dtype=np.float64, seed=0):
    params = _params(lib, _arrays(seed), dtype)
    opt = getattr(lib.optim, name)(params, **kwargs)
    return params, opt, _train(lib, opt, params, steps)


def _assert_traj(ours, theirs, atol, rtol):
    for step, (a_step, b_step) in enumerate(zip(ours, theirs)):
        for i, (a, b) in enumerate(zip(a_step, b_step)):
            np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=f"step {step} param {i}")


def _assert_state(ours, theirs, atol=1e-12, rtol=1e-10):
    """Same layout (state keys and names, group options) and the same state values."""
    sd_a, sd_b = ours.state_dict(), theirs.state_dict()
    assert sd_a["param_groups"] == sd_b["param_groups"]
    assert sorted(sd_a["state"]) == sorted(sd_b["state"])
    for k, st_b in sd_b["state"].items():
        st_a = sd_a["state"][k]
        assert sorted(st_a) == sorted(st_b), f"state names of param {k}"
        for name, vb in st_b.items():
            va = st_a[name]
            assert isinstance(va, glassgrad.Tensor), f"state {name} is {type(va)}"
            assert str(va.dtype).split(".")[-1] == str(vb.dtype).split(".")[-1], name
            np.testing.assert_allclose(to_np(va), to_np(vb), atol=atol, rtol=rtol, err_msg=name)


@pytest.mark.parametrize("name,kwargs", CASES, ids=CASE_IDS)
def test_trajectory_and_state_match_torch(name, kwargs):
    ps_a, opt_a, traj_a = _run(glassgrad, name, kwargs)
    ps_b, opt_b, traj_b = _run(torch, name, kwargs)
    _assert_traj(traj_a, traj_b, atol=1e-12, rtol=1e-10)
    _assert_state(opt_a, opt_b)
    for a, b in zip(ps_a, ps_b):
        assert a._version == b._version
        assert a.is_leaf and a.grad_fn is None and a.requires_grad
    assert opt_a._step_count == 10


@pytest.mark.parametrize(
    "name,kwargs",
    [CASES[2], CASES[8], CASES[13], CASES[17]],
    ids=["SGD", "Adam", "RMSprop", "Adagrad"],
)
def test_float32_trajectory_matches_torch(name, kwargs):
    _, opt_a, traj_a = _run(glassgrad, name, kwargs, dtype=np.float32)
    _, opt_b, traj_b = _run(torch, name, kwargs, dtype=np.float32)
    assert traj_a[-1][0].dtype == np.float64  # to_np widens; the params stayed float32:
    assert opt_a.param_groups[0]["params"][0].dtype == glassgrad.float32
    _assert_traj(traj_a, traj_b, atol=1e-5, rtol=1e-5)
    _assert_state(opt_a, opt_b, atol=1e-5, rtol=1e-5)


def test_param_groups_with_their_own_options():
    def run(lib):
        ps = _params(lib, _arrays())
        opt = lib.optim.SGD(
            [{"params": [ps[0]], "lr": 0.2}, {"params": ps[1:], "momentum": 0.5}],
            lr=0.05,
            momentum=0.9,
        )
        return opt, _train(lib, opt, ps, 10)

    (opt_a, traj_a), (opt_b, traj_b) = run(glassgrad), run(torch)
    _assert_traj(traj_a, traj_b, atol=1e-12, rtol=1e-10)
    _assert_state(opt_a, opt_b)
    assert [g["lr"] for g in opt_a.param_groups] == [0.2, 0.05]


def test_add_param_group_and_named_params():
    def run(lib):
        ps = _params(lib, _arrays())
        opt = lib.optim.Adam([("w", ps[0])], lr=0.05)
        traj = _train(lib, opt, ps, 3)
        opt.add_param_group({"params": [("b", ps[1]), ("c", ps[2])], "lr": 0.01})
        return opt, traj + _train(lib, opt, ps, 4)

    (opt_a, traj_a), (opt_b, traj_b) = run(glassgrad), run(torch)
    _assert_traj(traj_a, traj_b, atol=1e-12, rtol=1e-10)
    _assert_state(opt_a, opt_b)
    assert opt_a.state_dict()["param_groups"][1]["param_names"] == ["b", "c"]


@pytest.mark.parametrize(
    "name,kwargs",
    [CASES[3], CASES[8], CASES[11], CASES[15], CASES[17]],
    ids=["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"],
)
def test_state_dict_round_trip_continues_identically(name, kwargs):
    _, opt_b, traj_b = _run(torch, name, kwargs, steps=10)
    ps_a, opt_a, traj_a = _run(glassgrad, name, kwargs, steps=5)
    saved = copy.deepcopy(opt_a.state_dict())
    fresh = [glassgrad.from_numpy(to_np(p).copy()).requires_grad_() for p in ps_a]
    opt_new = getattr(glassgrad.optim, name)(fresh, **kwargs)
    opt_new.load_state_dict(saved)
    traj_a += _train(glassgrad, opt_new, fresh, 5)
    _assert_traj(traj_a, traj_b, atol=1e-12, rtol=1e-10)
    _assert_state(opt_new, opt_b)
    assert opt_new.state[fresh[0]] is not None and not any(opt_new.state.get(p) for p in ps_a)


def _from_torch_state_dict(sd):
    """A torch optimizer's state_dict with its tensors as glassgrad tensors (other values kept)."""
    def convert(v):
        return glassgrad.from_numpy(v.detach().numpy().copy()) if torch.is_tensor(v) else v

    return {
        "state": {k: {n: convert(v) for n, v in st.items()} for k, st in sd["state"].items()},
        "param_groups": copy.deepcopy(sd["param_groups"]),
    }


@pytest.mark.parametrize(
    "name,kwargs",
    [CASES[3], CASES[7], CASES[14], CASES[18]],
    ids=["SGD", "Adam", "RMSprop", "Adagrad"],
)
def test_loads_a_torch_state_dict(name, kwargs):
    """PyTorch's layout: a torch optimizer's state_dict, tensors converted, drives glassgrad."""
    ps_b, opt_b, _traj_b = _run(torch, name, kwargs, steps=5)
    converted = _from_torch_state_dict(opt_b.state_dict())
    ps_a = [glassgrad.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in ps_b]
    opt_a = getattr(glassgrad.optim, name)(ps_a, **kwargs)
    opt_a.load_state_dict(converted)
    _assert_traj(
        _train(glassgrad, opt_a, ps_a, 5), _train(torch, opt_b, ps_b, 5), atol=1e-12, rtol=1e-10
    )
    _assert_state(opt_a, opt_b)


def test_load_state_dict_casts_state_to_param_dtype_but_not_step():
    def run(lib):
        p64 = lib.ones(3, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.Adam([p64])
        p64.grad = lib.ones(3, dtype=lib.float64)
        opt.step()
        p32 = lib.ones(3, requires_grad=True)
        opt32 = lib.optim.Adam([p32])
        opt32.load_state_dict(opt.state_dict())
        return {k: str(v.dtype).split(".")[-1] for k, v in opt32.state[p32].items()}

    assert (
        run(glassgrad)
        == run(torch)
        == {"step": "float32", "exp_avg": "float32", "exp_avg_sq": "float32"}
    )


def test_load_state_dict_errors_match_torch():
    def run(lib):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(2, requires_grad=True)
        sd = lib.optim.SGD([a, b], lr=0.1).state_dict()
        errors = []
        for target in (
            lib.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1),
            lib.optim.SGD([a], lr=0.1),
        ):
            with pytest.raises(ValueError) as e:
                target.load_state_dict(sd)
            errors.append(str(e.value))
        return errors

    assert run(glassgrad) == run(torch)


def test_adagrad_state_exists_from_construction():
    def run(lib):
        ps = _params(lib, _arrays())
        return lib.optim.Adagrad(ps, initial_accumulator_value=0.25)

    _assert_state(run(glassgrad), run(torch))


def test_zero_grad_semantics():
    def run(lib):
        p = lib.ones(3, requires_grad=True)
        q = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p, q], lr=0.1)
        (p * p).sum().backward(create_graph=True)  # p.grad has a grad_fn
        g = p.grad
        opt.zero_grad(set_to_none=False)
        kept = (
            p.grad is g,
            p.grad.grad_fn is None,
            p.grad.requires_grad,
            to_np(p.grad).tolist(),
            q.grad is None,
        )
        opt.zero_grad()
        return kept + (p.grad is None,)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(glassgrad) == run(torch) == (True, True, False, [0.0, 0.0, 0.0], True, True)


def test_closure_returns_loss_and_runs_with_grad():
    def run(lib):
        ps = _params(lib, _arrays())
        opt = lib.optim.Adam(ps, lr=0.05)
        losses, traj = [], []

        def closure():
            opt.zero_grad()
            loss = _loss(lib, ps)
            loss.backward()
            return loss

        for _ in range(5):
            with lib.no_grad():  # step must re-enable grad for the closure
                losses.append(opt.step(closure).item())
            traj.append([to_np(p) for p in ps])
        return losses, traj

    (loss_a, traj_a), (loss_b, traj_b) = run(glassgrad), run(torch)
    np.testing.assert_allclose(loss_a, loss_b, rtol=1e-12)
    _assert_traj(traj_a, traj_b, atol=1e-12, rtol=1e-10)


def test_lr_as_tensor():
    def run(lib):
        ps = _params(lib, _arrays())
        opt = lib.optim.SGD(ps, lr=lib.tensor(0.1), momentum=0.9)
        return _train(lib, opt, ps, 5)

    _assert_traj(run(glassgrad), run(torch), atol=1e-12, rtol=1e-10)


def test_step_hooks_match_torch():
    def run(lib):
        events = []
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.ones(2)
        opt = lib.optim.SGD([p], lr=0.5)

        def pre(o, args, kwargs):
            events.append(("pre", o is opt, len(args), args[0] is opt, dict(kwargs)))
            return args, {"closure": lambda: 7.0}

        h1 = opt.register_step_pre_hook(pre)
        h2 = opt.register_step_post_hook(lambda o, a, k: events.append(("post", sorted(k))))
        h3 = importlib.import_module(
            lib.__name__ + ".optim.optimizer"
        ).register_optimizer_step_pre_hook(lambda o, a, k: events.append(("global-pre",)))
        events.append(("loss", opt.step()))
        for h in (h1, h2, h3):
            h.remove()
        events.append(("loss", opt.step()))
        return events, to_np(p).tolist()

    assert run(glassgrad) == run(torch)


def test_step_does_not_record_and_bumps_versions():
    """Updates are in place under no_grad: a graph that saved the parameter sees the change."""

    def run(lib):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        y = (p * p).sum()
        p.grad = lib.ones(3)
        opt.step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
        return p.is_leaf, p.requires_grad, p._version

    assert run(glassgrad) == run(torch) == (True, True, 1)


def test_parameters_without_grad_are_skipped():
    def run(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        opt = lib.optim.Adam([a, b], lr=0.1)
        a.grad = lib.ones(2)
        opt.step()
        return to_np(b).tolist(), b._version, len(opt.state), sorted(opt.state_dict()["state"])

    assert run(glassgrad) == run(torch) == ([1.0, 1.0], 0, 1, [0])


def test_accepts_nn_parameter():
    try:
        from glassgrad.nn.parameter import Parameter
    except ImportError:
        pytest.skip("glassgrad.nn.Parameter not available yet")

    def run(lib, parameter):
        w = parameter(lib.ones(3))
        opt = lib.optim.Adam([w], lr=0.5)
        w.grad = lib.ones(3)
        opt.step()
        return type(w).__name__, to_np(w).tolist()

    assert run(glassgrad, Parameter) == run(torch, torch.nn.Parameter)


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - compared against torch below
            return type(e).__name__, str(e).split("\nglassgrad:")[0]
    return None


def _same_param_twice(lib):
    p = lib.ones(2, requires_grad=True)
    return lib.optim.SGD([{"params": [p]}, {"params": [p]}])


ERRORS = {
    "empty": lambda lib: lib.optim.SGD([], lr=0.1),
    "tensor": lambda lib: lib.optim.SGD(lib.ones(2, dtype=lib.float64, requires_grad=True)),
    "non-leaf": lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2]),
    "not-tensor": lambda lib: lib.optim.SGD([{"params": [1.0]}]),
    "set": lambda lib: lib.optim.SGD([{"params": {lib.ones(2, requires_grad=True)}}]),
    "two-groups": lambda lib: _same_param_twice(lib),
    "mixed-names": lambda lib: lib.optim.SGD(
        [
            {"params": [("a", lib.ones(2, requires_grad=True))]},
            {"params": [lib.ones(2, requires_grad=True)]},
        ]
    ),
    "bad-lr": lambda lib: lib.optim.Adam([lib.ones(2, requires_grad=True)], lr=-1),
    "nesterov": lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], nesterov=True),
    "bad-momentum": lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], momentum=-0.1),
    "betas-int": lambda lib: lib.optim.Adam([lib.ones(2, requires_grad=True)], betas=(0, 0.9)),
    "bad-beta": lambda lib: lib.optim.AdamW([lib.ones(2, requires_grad=True)], betas=(1.0, 0.9)),
    "bad-alpha": lambda lib: lib.optim.RMSprop([lib.ones(2, requires_grad=True)], alpha=-1),
    "bad-lr-decay": lambda lib: lib.optim.Adagrad([lib.ones(2, requires_grad=True)], lr_decay=-1),
    "group-not-dict": lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)]).add_param_group(
        [1]
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(case):
    ours, theirs = _error(lambda: ERRORS[case](glassgrad)), _error(lambda: ERRORS[case](torch))
    assert theirs is not None
    assert ours is not None and ours[0] == theirs[0]
    assert ours[1] == theirs[1]


def test_duplicate_parameters_warn_like_torch():
    for lib in (glassgrad, torch):
        p = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([p, p], lr=0.1)


def test_adamw_is_an_adam_and_repr():
    p = glassgrad.ones(2, requires_grad=True)
    opt = glassgrad.optim.AdamW([p])
    assert isinstance(opt, glassgrad.optim.Adam)
    tp = torch.ones(2, requires_grad=True)
    assert repr(opt) == repr(torch.optim.AdamW([tp]))
