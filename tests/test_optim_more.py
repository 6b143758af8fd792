"""The optimizers added for real programs (Adadelta, Adafactor, Adamax, ASGD, NAdam, RAdam,
Rprop) against torch: trajectories and state step by step, float32, state-dict round trips,
torch's own state dicts, param groups, constructor errors. Helpers come from test_optim.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import to_np
from tests.test_optim import (
    _arrays,
    _assert_state,
    _assert_traj,
    _error,
    _from_torch_state_dict,
    _params,
    _run,
    _train,
)

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-4}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {"lr": 0.5, "foreach": False, "capturable": False}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-6, 1e-2), "d": 1.5}),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "eps": 1e-2, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 4}),
    ("ASGD", {"lr": 0.05, "t0": 0, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "betas": (0.8, 0.9), "momentum_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6)}),  # rho_t > 5 from step 2 on
    ("RAdam", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "weight_decay": 0.1,
               "decoupled_weight_decay": True, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"lr": 0.05, "maximize": True}),
]
CASE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]
NAMES = sorted({name for name, _ in CASES})


def _first(name):
    return next(c for c in CASES if c[0] == name and c[1])


@pytest.mark.parametrize("name,kwargs", CASES, ids=CASE_IDS)
def test_trajectory_and_state_match_torch(name, kwargs):
    ps_a, opt_a, traj_a = _run(glassgrad, name, kwargs, steps=12)
    ps_b, opt_b, traj_b = _run(torch, name, kwargs, steps=12)
    _assert_traj(traj_a, traj_b, atol=1e-12, rtol=1e-10)
    _assert_state(opt_a, opt_b)
    for a, b in zip(ps_a, ps_b):
        assert a._version == b._version
    assert opt_a._step_count == 12
    assert repr(opt_a) == repr(opt_b)


@pytest.mark.parametrize("name", NAMES)
def test_float32_trajectory_matches_torch(name):
    kwargs = _first(name)[1]
    _, opt_a, traj_a = _run(glassgrad, name, kwargs, dtype=np.float32)
    _, opt_b, traj_b = _run(torch, name, kwargs, dtype=np.float32)
    assert opt_a.param_groups[0]["params"][0].dtype == glassgrad.float32
    _assert_traj(traj_a, traj_b, atol=1e-5, rtol=1e-5)
    _assert_state(opt_a, opt_b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_continues_identically(name):
    """Five steps, state_dict into a fresh optimizer on fresh parameters, five more: on both
    libraries (loading casts floating state such as ASGD's eta to the parameters' dtype)."""
    kwargs = _first(name)[1]

    def run(lib):
        ps, opt, traj = _run(lib, name, kwargs, steps=5)
        saved = copy.deepcopy(opt.state_dict())
        fresh = [lib.from_numpy(to_np(p).copy()).requires_grad_() for p in ps]
        opt_new = getattr(lib.optim, name)(fresh, **kwargs)
        opt_new.load_state_dict(saved)
        return opt_new, traj + _train(lib, opt_new, fresh, 5)

    (opt_a, traj_a), (opt_b, traj_b) = run(glassgrad), run(torch)
    _assert_traj(traj_a, traj_b, atol=1e-12, rtol=1e-10)
    _assert_state(opt_a, opt_b)


@pytest.mark.parametrize("name", NAMES)
def test_loads_a_torch_state_dict(name):
    kwargs = _first(name)[1]
    ps_b, opt_b, _ = _run(torch, name, kwargs, steps=5)
    opt_b_sd = opt_b.state_dict()
    converted = _from_torch_state_dict(opt_b_sd)
    ps_a = [glassgrad.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in ps_b]
    opt_a = getattr(glassgrad.optim, name)(ps_a, **kwargs)
    opt_a.load_state_dict(converted)
    opt_b = getattr(torch.optim, name)(ps_b, **kwargs)  # torch loads it too (it casts eta, ...)
    opt_b.load_state_dict(copy.deepcopy(opt_b_sd))
    _assert_traj(
        _train(glassgrad, opt_a, ps_a, 5), _train(torch, opt_b, ps_b, 5), atol=1e-12, rtol=1e-10
    )
    _assert_state(opt_a, opt_b)


@pytest.mark.parametrize("name", NAMES)
def test_param_groups_and_add_param_group(name):
    kwargs = _first(name)[1]

    def run(lib):
        ps = _params(lib, _arrays())
        opt = getattr(lib.optim, name)([{"params": [ps[0]], "lr": 0.03}], **kwargs)
        traj = _train(lib, opt, ps, 3)
        opt.add_param_group({"params": ps[1:], "weight_decay": 0.2})
        return opt, traj + _train(lib, opt, ps, 4)

    (opt_a, traj_a), (opt_b, traj_b) = run(glassgrad), run(torch)
    _assert_traj(traj_a, traj_b, atol=1e-12, rtol=1e-10)
    _assert_state(opt_a, opt_b)


def _one(lib):
    return [lib.ones(2, requires_grad=True)]


ERRORS = {
    "adadelta-lr": lambda lib: lib.optim.Adadelta(_one(lib), lr=-1),
    "adadelta-rho": lambda lib: lib.optim.Adadelta(_one(lib), rho=1.5),
    "adadelta-eps": lambda lib: lib.optim.Adadelta(_one(lib), eps=-1),
    "adadelta-wd": lambda lib: lib.optim.Adadelta(_one(lib), weight_decay=-1),
    "adafactor-lr": lambda lib: lib.optim.Adafactor(_one(lib), lr=-1),
    "adafactor-beta2-decay": lambda lib: lib.optim.Adafactor(_one(lib), beta2_decay=0.5),
    "adafactor-eps1": lambda lib: lib.optim.Adafactor(_one(lib), eps=(-1, 1e-3)),
    "adafactor-d": lambda lib: lib.optim.Adafactor(_one(lib), d=0.5),
    "adamax-beta": lambda lib: lib.optim.Adamax(_one(lib), betas=(0.9, 1.0)),
    "adamax-eps": lambda lib: lib.optim.Adamax(_one(lib), eps=-1),
    "asgd-lr": lambda lib: lib.optim.ASGD(_one(lib), lr=-1),
    "asgd-wd": lambda lib: lib.optim.ASGD(_one(lib), weight_decay=-1),
    "nadam-momentum-decay": lambda lib: lib.optim.NAdam(_one(lib), momentum_decay=-1),
    "nadam-beta": lambda lib: lib.optim.NAdam(_one(lib), betas=(-0.1, 0.9)),
    "radam-wd": lambda lib: lib.optim.RAdam(_one(lib), weight_decay=-0.1),
    "radam-lr-tensor": lambda lib: lib.optim.RAdam(_one(lib), lr=lib.ones(2)),
    "rprop-etas": lambda lib: lib.optim.Rprop(_one(lib), etas=(0.5, 0.9)),
    "rprop-lr": lambda lib: lib.optim.Rprop(_one(lib), lr=-0.1),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_constructor_errors_match_torch(case):
    theirs = _error(lambda: ERRORS[case](torch))
    assert theirs is not None
    assert _error(lambda: ERRORS[case](glassgrad)) == theirs


MUON_CASES = [
    {"lr": 0.02},
    {"lr": 0.05, "nesterov": False, "weight_decay": 0.0, "adjust_lr_fn": "match_rms_adamw"},
    {"lr": 0.05, "momentum": 0.5, "ns_steps": 3, "adjust_lr_fn": "original"},
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kwargs", MUON_CASES, ids=[str(c) for c in MUON_CASES])
def test_muon_matches_torch(kwargs, dtype):
    """Muon orthogonalizes in bfloat16 on both libraries: the float64 runs agree to rounding,
    float32 to a few ulps."""
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((6, 4)), rng.standard_normal((4, 5))]
    x, y = rng.standard_normal((10, 6)), rng.standard_normal((10, 5))

    def run(lib):
        ws = [lib.from_numpy(w.astype(dtype)).requires_grad_() for w in weights]
        xs, ys = lib.from_numpy(x.astype(dtype)), lib.from_numpy(y.astype(dtype))
        opt = lib.optim.Muon(ws, **kwargs)
        traj = []
        for _ in range(10):
            opt.zero_grad()
            ((lib.tanh(xs @ ws[0]) @ ws[1] - ys) ** 2).mean().backward()
            opt.step()
            traj.append([to_np(w) for w in ws])
        return opt, traj

    (opt_a, traj_a), (opt_b, traj_b) = run(glassgrad), run(torch)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    _assert_traj(traj_a, traj_b, atol=tol, rtol=tol)
    _assert_state(opt_a, opt_b, atol=tol, rtol=tol)


MUON_ERRORS = {
    "1d": lambda lib: lib.optim.Muon([lib.ones(2, requires_grad=True)]),
    "lr": lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], lr=-1),
    "momentum": lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], momentum=-1),
    "adjust": lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], adjust_lr_fn="x"),
}


@pytest.mark.parametrize("case", sorted(MUON_ERRORS))
def test_muon_errors_match_torch(case):
    theirs = _error(lambda: MUON_ERRORS[case](torch))
    assert theirs is not None
    kind, text = _error(lambda: MUON_ERRORS[case](glassgrad))
    assert (kind, text.replace("glassgrad.Size", "torch.Size")) == theirs
