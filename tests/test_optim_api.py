"""torch.optim's namespace beyond the optimizers, against torch: swap_in_optimizer_params_and_state,
the optimizer hooks (step, state_dict, load_state_dict; instance and global; prepend), state-dict
parity after hooks, lr_scheduler's module-level names, OneCycleLR's legacy state dict."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
import torch

import glassgrad


def _model(lib, seed=0):
    rng = np.random.default_rng(seed)
    return {"w": lib.tensor(rng.standard_normal((2, 3)), requires_grad=True),
            "b": lib.tensor(rng.standard_normal(3), requires_grad=True)}


def _fill_grads(lib, params, scale=1.0):
    for i, p in enumerate(params):
        p.grad = lib.full_like(p.detach(), scale * (i + 1.0))


def _swap_run(lib):
    """Step the live params once, swap in copies with a state dict, step twice inside, step the
    live ones again: returns every tensor and the restored groups."""
    live = _model(lib)
    opt = lib.optim.Adam([{"params": [live["w"]]}, {"params": [live["b"]], "lr": 0.01}], lr=0.1)
    _fill_grads(lib, live.values())
    opt.step()
    osd = opt.state_dict()
    osd = {"state": {k: {n: v.clone() for n, v in s.items()} for k, s in osd["state"].items()},
           "param_groups": [dict(g, lr=g["lr"] * 2) for g in osd["param_groups"]]}
    swap = {n: p.detach().clone().requires_grad_() for n, p in live.items()}
    params_before = [g["params"] for g in opt.param_groups]
    with lib.optim.swap_in_optimizer_params_and_state(opt, swap, osd):
        seen_lrs = [g["lr"] for g in opt.param_groups]
        for _ in range(2):
            _fill_grads(lib, swap.values(), scale=0.5)
            opt.step()
    assert all(a is b["params"] for a, b in zip(params_before, opt.param_groups))
    _fill_grads(lib, live.values())
    opt.step()
    out = [p.detach().numpy() for p in (*live.values(), *swap.values())]
    out += [v.numpy() for s in osd["state"].values() for v in s.values()]
    out += [v.numpy() for s in opt.state.values() for v in s.values()]
    return out, seen_lrs, [g["lr"] for g in opt.param_groups]


def test_swap_in_optimizer_params_and_state_matches_torch():
    ours, ours_lrs, ours_after = _swap_run(glassgrad)
    theirs, their_lrs, their_after = _swap_run(torch)
    assert ours_lrs == their_lrs and ours_after == their_after
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert glassgrad.optim.swap_in_optimizer_params_and_state.__module__ == "glassgrad.optim"


def _swap_error(lib, case):
    live = _model(lib)
    opt = lib.optim.SGD(list(live.values()), lr=0.1, momentum=0.9)
    if case != "no state":
        _fill_grads(lib, live.values())
        opt.step()
    osd = opt.state_dict()
    if case == "state not a dict":
        osd["state"] = [1]
    elif case == "groups differ":
        osd["param_groups"] = osd["param_groups"] * 2
    elif case == "keys differ":
        osd["param_groups"][0]["extra"] = 1
    elif case == "extra state":
        osd["state"][7] = {}
    elif case == "too few params":
        live.pop("b")
    elif case == "not a dict":
        osd = [osd]
    try:
        with lib.optim.swap_in_optimizer_params_and_state(opt, live, osd):
            pass
    except RuntimeError as e:
        return str(e)
    return None


@pytest.mark.parametrize("case", ["no state", "state not a dict", "groups differ", "keys differ",
                                  "extra state", "too few params", "not a dict"])
def test_swap_in_errors_match_torch(case):
    expected = _swap_error(torch, case)
    assert expected is not None
    assert _swap_error(glassgrad, case) == expected


def _optimizer_module(lib):
    return importlib.import_module(f"{lib.__name__}.optim.optimizer")


def _hook_log(lib):
    """Every hook kind, instance and global, with prepend; returns the call log and results."""
    log = []
    live = _model(lib)
    opt = lib.optim.SGD(list(live.values()), lr=0.1, momentum=0.9)
    handles = [
        _optimizer_module(lib).register_optimizer_step_pre_hook(lambda o, a, k: log.append("gpre")),
        _optimizer_module(lib).register_optimizer_step_post_hook(lambda o, a, k: log.append("gpost")),
        opt.register_step_pre_hook(lambda o, a, k: log.append("pre")),
        opt.register_step_post_hook(lambda o, a, k: log.append("post")),
        opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre1")),
        opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre0"), prepend=True),
        opt.register_state_dict_post_hook(
            lambda o, sd: (log.append("sd_post"), {**sd, "extra": 1})[1]),
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append("ld_pre1")),
        opt.register_load_state_dict_pre_hook(
            lambda o, sd: (log.append("ld_pre0"), {**sd, "seen": True})[1], prepend=True),
        opt.register_load_state_dict_post_hook(lambda o: log.append("ld_post")),
    ]
    try:
        _fill_grads(lib, live.values())
        opt.step()
        sd = opt.state_dict()
        keys = sorted(sd)
        sd.pop("extra")
        opt.load_state_dict(sd)
        handles[2].remove()
        opt.step()
    finally:
        for h in handles:
            h.remove()
    opt.step()  # every hook removed: nothing logged
    step_dtype = str(opt.state_dict()["state"][0]["momentum_buffer"].dtype).split(".")[-1]
    return log, keys, step_dtype


def test_hooks_run_in_torchs_order():
    assert _hook_log(glassgrad) == _hook_log(torch)


def test_state_dict_step_tensor_and_dtype_casting_match_torch():
    def run(lib):
        p = lib.zeros(3, dtype=lib.float32, requires_grad=True)
        opt = lib.optim.Adam([p], lr=0.1)
        p.grad = lib.ones(3, dtype=lib.float32)
        opt.step()
        sd = opt.state_dict()
        sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].double()
        sd["state"][0]["step"] = sd["state"][0]["step"].double()
        opt.load_state_dict(sd)
        st = opt.state[p]
        return ({k: str(v.dtype).split(".")[-1] for k, v in st.items()},
                sorted(opt.state_dict()["param_groups"][0]))
    assert run(glassgrad) == run(torch)


def test_lr_scheduler_module_names_are_torchs_objects():
    ours, theirs = glassgrad.optim.lr_scheduler, torch.optim.lr_scheduler
    for name in ("Literal", "SupportsFloat", "TYPE_CHECKING", "TypedDict", "cast", "inf",
                 "partial", "wraps"):
        assert getattr(ours, name) is getattr(theirs, name) or getattr(ours, name) == \
            getattr(theirs, name), name
    assert ours.inf == math.inf
    for name in ("Self", "override"):
        assert hasattr(ours, name)
    assert ours.StepLR.get_lr.__override__ is True


def _onecycle_legacy(lib):
    p = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([p], lr=0.05, momentum=0.9)
    sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=25, final_div_factor=2,
                                              base_momentum=1, max_momentum=22, total_steps=10,
                                              anneal_strategy="cos")
    delattr(sched, "_anneal_func_type")
    sd = sched.state_dict()
    assert "anneal_func_type" not in sd and "_anneal_func_type" not in sd
    sd["anneal_func"] = lib.optim.lr_scheduler.OneCycleLR._annealing_cos
    sched.load_state_dict(sd)
    lrs = []
    for _ in range(9):
        opt.step()
        sched.step()
        lrs.append((opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"]))
    return lrs


def test_onecycle_loads_a_legacy_state_dict_like_torch():
    np.testing.assert_allclose(_onecycle_legacy(glassgrad), _onecycle_legacy(torch), rtol=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "ExponentialLR", "ReduceLROnPlateau"])
def test_verbose_is_gone_as_in_torch(name):
    kwargs = {"StepLR": {"step_size": 2}, "ExponentialLR": {"gamma": 0.5}}.get(name, {})
    for lib in (torch, glassgrad):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
        with pytest.raises(TypeError, match="unexpected keyword argument 'verbose'"):
            getattr(lib.optim.lr_scheduler, name)(opt, verbose=True, **kwargs)
