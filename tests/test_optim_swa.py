"""optim.swa_utils against torch: AveragedModel (SWA, EMA by avg_fn and multi_avg_fn, buffers
averaged or copied) over an SGD run with identical weights, update_bn, SWALR's schedules and
state dict, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import to_np
from tests.test_optim import _error


def _model(lib, dtype):
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.BatchNorm1d(5), torch.nn.Tanh(),
                              torch.nn.Linear(5, 2)).to(dtype)
    if lib is torch:
        return ref
    model = glassgrad.nn.Sequential(glassgrad.nn.Linear(3, 5), glassgrad.nn.BatchNorm1d(5),
                                    glassgrad.nn.Tanh(), glassgrad.nn.Linear(5, 2))
    model.to(getattr(glassgrad, str(dtype).split(".")[-1]))
    model.load_state_dict({k: glassgrad.from_numpy(v.detach().numpy().copy())
                           for k, v in ref.state_dict().items()})
    return model


def _averaging(lib, name):
    swa = lib.optim.swa_utils
    return {
        "swa": {},
        "swa-buffers": {"use_buffers": True},
        "ema-multi": {"multi_avg_fn": swa.get_ema_multi_avg_fn(0.9), "use_buffers": True},
        "ema-fn": {"avg_fn": swa.get_ema_avg_fn(0.8)},
        "swa-fn": {"avg_fn": swa.get_swa_avg_fn()},
        "swa-multi": {"multi_avg_fn": swa.get_swa_multi_avg_fn()},
    }[name]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["swa", "swa-buffers", "ema-multi", "ema-fn", "swa-fn",
                                  "swa-multi"])
def test_averaged_model_matches_torch(name, dtype):
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((8, 3)) for _ in range(6)]
    targets = [rng.standard_normal((8, 2)) for _ in range(6)]

    def run(lib):
        model = _model(lib, getattr(torch, dtype))
        averaged = lib.optim.swa_utils.AveragedModel(model, **_averaging(lib, name))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
        for x, y in zip(batches, targets):
            opt.zero_grad()
            xs, ys = (lib.from_numpy(a.astype(dtype)) for a in (x, y))
            ((model(xs) - ys) ** 2).mean().backward()
            opt.step()
            averaged.update_parameters(model)
        averaged.eval()
        out = averaged(lib.from_numpy(batches[0].astype(dtype)))
        return averaged.state_dict(), to_np(out)

    (sd_a, out_a), (sd_b, out_b) = run(glassgrad), run(torch)
    tol = 1e-12 if dtype == "float64" else 1e-6
    assert list(sd_a) == list(sd_b)
    for k in sd_b:
        assert str(sd_a[k].dtype).split(".")[-1] == str(sd_b[k].dtype).split(".")[-1], k
        np.testing.assert_allclose(to_np(sd_a[k]), to_np(sd_b[k]), rtol=tol, atol=tol, err_msg=k)
    np.testing.assert_allclose(out_a, out_b, rtol=tol, atol=tol)


def test_update_bn_matches_torch():
    rng = np.random.default_rng(1)
    batches = [rng.standard_normal((4, 3)) for _ in range(3)]

    def run(lib):
        model = _model(lib, torch.float64)
        model.eval()
        loader = [(lib.from_numpy(b), None) for b in batches]
        lib.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        return model.training, bn.momentum, to_np(bn.running_mean), to_np(bn.running_var), int(
            bn.num_batches_tracked)

    a, b = run(glassgrad), run(torch)
    assert a[:2] == b[:2] and a[4] == b[4]
    np.testing.assert_allclose(a[2], b[2], rtol=1e-12)
    np.testing.assert_allclose(a[3], b[3], rtol=1e-12)


@pytest.mark.parametrize("kwargs", [
    {"swa_lr": 0.05},
    {"swa_lr": 0.05, "anneal_epochs": 3, "anneal_strategy": "linear"},
    {"swa_lr": [0.02, 0.3], "anneal_epochs": 0},
])
def test_swalr_matches_torch(kwargs):
    def run(lib):
        ps = [lib.ones(2, requires_grad=True), lib.ones(3, requires_grad=True)]
        opt = lib.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.2}], lr=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, **kwargs)
        lrs = []
        for _ in range(14):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        state = sched.state_dict()
        fresh = lib.optim.swa_utils.SWALR(opt, **kwargs)
        fresh.load_state_dict(state)
        opt.step()
        fresh.step()
        return lrs + [fresh.get_last_lr()], sorted(state)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (lrs_a, keys_a), (lrs_b, keys_b) = run(glassgrad), run(torch)
    np.testing.assert_allclose(lrs_a, lrs_b, rtol=1e-15)
    assert keys_a == keys_b


def _sgd(lib):
    return lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=0.1)


ERRORS = {
    "strategy": lambda lib: lib.optim.swa_utils.SWALR(_sgd(lib), 0.1, anneal_strategy="exp"),
    "epochs": lambda lib: lib.optim.swa_utils.SWALR(_sgd(lib), 0.1, anneal_epochs=-1),
    "decay": lambda lib: lib.optim.swa_utils.get_ema_avg_fn(1.5),
    "decay-multi": lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(-0.5),
    "both-fns": lambda lib: lib.optim.swa_utils.AveragedModel(
        lib.nn.Linear(2, 2), avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
        multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn()),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_swa_errors_match_torch(case):
    theirs = _error(lambda: ERRORS[case](torch))
    assert theirs is not None
    assert _error(lambda: ERRORS[case](glassgrad)) == theirs
