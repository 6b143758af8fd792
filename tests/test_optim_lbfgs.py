"""LBFGS against torch: the same closure on both libraries, parameters, returned losses, closure
calls and the whole state (history lists, step length, counters) compared step by step, with and
without the strong-Wolfe line search; a small LSTMCell model as time_sequence_prediction runs it;
state-dict round trips and errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import to_np
from tests.test_optim import _arrays, _error, _loss, _params


def _same(a, b, path="state", rtol=1e-9, atol=1e-12):
    """glassgrad value ``a`` equals torch value ``b``: tensors to tolerance, containers item by
    item, numbers and None exactly in kind."""
    if torch.is_tensor(b):
        assert isinstance(a, glassgrad.Tensor), f"{path}: {type(a)} vs tensor"
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], path
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]", rtol, atol)
    elif isinstance(b, dict):
        assert sorted(a) == sorted(b), path
        for k in b:
            _same(a[k], b[k], f"{path}.{k}", rtol, atol)
    elif isinstance(b, float):
        assert isinstance(a, float), f"{path}: {type(a)} vs float"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=path)
    else:
        assert a == b and type(a) is type(b), f"{path}: {a!r} vs {b!r}"


def _run(lib, kwargs, steps=6, dtype=np.float64):
    params = _params(lib, _arrays(), dtype)
    opt = lib.optim.LBFGS(params[:2], **kwargs)
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = _loss(lib, params)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        out.append((loss.item(), len(calls), [to_np(p) for p in params]))
    return opt, out


CASES = [
    {},
    {"lr": 0.8},
    {"lr": 0.5, "max_iter": 4},
    {"lr": 0.3, "history_size": 2, "max_iter": 7},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.7, "line_search_fn": "strong_wolfe", "history_size": 3, "max_iter": 5},
    {"line_search_fn": "strong_wolfe", "max_eval": 6},
    {"tolerance_grad": 1e-2, "tolerance_change": 1e-4},
]


def _compare(out_a, out_b, rtol):
    for i, ((loss_a, calls_a, ps_a), (loss_b, calls_b, ps_b)) in enumerate(zip(out_a, out_b)):
        np.testing.assert_allclose(loss_a, loss_b, rtol=rtol, err_msg=f"step {i}")
        assert calls_a == calls_b, f"closure calls by step {i}"
        for a, b in zip(ps_a, ps_b):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=f"step {i}")


@pytest.mark.parametrize("kwargs", CASES, ids=[str(c) for c in CASES])
def test_lbfgs_matches_torch(kwargs):
    opt_a, out_a = _run(glassgrad, kwargs)
    opt_b, out_b = _run(torch, kwargs)
    _compare(out_a, out_b, 1e-9)
    _same(opt_a.state_dict(), opt_b.state_dict())


# NOTE: float32 losses differ by an ulp (the sums' order), so the runs stop short of the optimum,
# where tolerance tests on such differences would pick different iteration counts
F32_CASES = [{"lr": 0.8, "max_iter": 3}, {"line_search_fn": "strong_wolfe", "max_iter": 3}]


@pytest.mark.parametrize("kwargs", F32_CASES, ids=["fixed", "strong_wolfe"])
def test_lbfgs_float32_matches_torch(kwargs):
    opt_a, out_a = _run(glassgrad, kwargs, steps=2, dtype=np.float32)
    opt_b, out_b = _run(torch, kwargs, steps=2, dtype=np.float32)
    _compare(out_a, out_b, 1e-4)
    _same(opt_a.state_dict(), opt_b.state_dict(), rtol=1e-3, atol=1e-4)


def _lstm_run(lib, steps, line_search_fn=None):
    """time_sequence_prediction's shape of training: an LSTMCell and a Linear over a sine wave,
    LBFGS(lr=0.8) with a closure, MSE loss."""
    torch.manual_seed(0)
    cell_b, lin_b = torch.nn.LSTMCell(1, 6).double(), torch.nn.Linear(6, 1).double()
    if lib is torch:
        cell, lin = cell_b, lin_b
    else:
        cell, lin = lib.nn.LSTMCell(1, 6).double(), lib.nn.Linear(6, 1).double()
        for mod, src in ((cell, cell_b), (lin, lin_b)):
            mod.load_state_dict(
                {k: lib.from_numpy(v.detach().numpy().copy()) for k, v in src.state_dict().items()}
            )
    wave = np.sin(np.arange(13) / 2.0).reshape(1, -1)
    x, y = lib.from_numpy(wave[:, :-1].copy()), lib.from_numpy(wave[:, 1:].copy())
    params = list(cell.parameters()) + list(lin.parameters())
    opt = lib.optim.LBFGS(params, lr=0.8, line_search_fn=line_search_fn)
    mse = lib.nn.MSELoss()

    def closure():
        opt.zero_grad()
        h = c = lib.zeros(1, 6, dtype=lib.float64)
        outs = []
        for i in range(x.shape[1]):
            h, c = cell(x[:, i : i + 1], (h, c))
            outs.append(lin(h))
        loss = mse(lib.cat(outs, 1), y)
        loss.backward()
        return loss

    out = [(opt.step(closure).item(), 0, [to_np(p) for p in params]) for _ in range(steps)]
    return opt, out


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_lstm_model_matches_torch(line_search_fn):
    opt_a, out_a = _lstm_run(glassgrad, 3, line_search_fn)
    opt_b, out_b = _lstm_run(torch, 3, line_search_fn)
    _compare(out_a, out_b, 1e-6)
    assert out_a[-1][0] < out_a[0][0]
    _same(opt_a.state_dict(), opt_b.state_dict(), rtol=1e-4, atol=1e-8)


def test_lbfgs_state_dict_round_trip_continues_identically():
    kwargs = CASES[5]
    _, out_b = _run(torch, kwargs, steps=6)
    opt_a, out_a = _run(glassgrad, kwargs, steps=3)
    saved = copy.deepcopy(opt_a.state_dict())
    params = [glassgrad.from_numpy(p.copy()).requires_grad_() for p in out_a[-1][2]]
    opt = glassgrad.optim.LBFGS(params[:2], **kwargs)
    opt.load_state_dict(saved)

    def closure():
        opt.zero_grad()
        loss = _loss(glassgrad, params)
        loss.backward()
        return loss

    for i in range(3):
        opt.step(closure)
        for a, b in zip(params, out_b[3 + i][2]):
            np.testing.assert_allclose(to_np(a), b, rtol=1e-9, atol=1e-12)


def test_lbfgs_stops_at_an_optimum_like_torch():
    def run(lib):
        p = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([p])

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        return opt.step(closure).item(), opt.state_dict()["state"][0]

    (loss_a, st_a), (loss_b, st_b) = run(glassgrad), run(torch)
    assert loss_a == loss_b == 0.0
    _same(st_a, st_b)


ERRORS = {
    "groups": lambda lib: lib.optim.LBFGS(
        [{"params": [lib.ones(2, requires_grad=True)]},
         {"params": [lib.ones(2, requires_grad=True)]}]
    ),
    "lr": lambda lib: lib.optim.LBFGS([lib.ones(2, requires_grad=True)], lr=-0.1),
    "line-search": lambda lib: _bad_line_search(lib),
}


def _bad_line_search(lib):
    p = lib.ones(2, requires_grad=True)
    opt = lib.optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    opt.step(closure)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_lbfgs_errors_match_torch(case):
    theirs = _error(lambda: ERRORS[case](torch))
    assert theirs is not None
    assert _error(lambda: ERRORS[case](glassgrad)) == theirs
