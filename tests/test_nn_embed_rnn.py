"""torch's flat-weight recurrent functions against torch (issue 16, lane embed): torch.lstm, gru,
rnn_tanh, rnn_relu on a 2-layer bidirectional stack in both overloads (padded, batch_first,
packed), values and first-order gradients of input, states and every weight; the same numbers as
glassgrad's own nn.LSTM/GRU with those weights; and the errors ATen gives. (Small shapes with
second order are in tests/op_db/embed_ops.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params

MODULES = {"lstm": ("LSTM", {}), "gru": ("GRU", {}), "rnn_tanh": ("RNN", {}),
           "rnn_relu": ("RNN", {"nonlinearity": "relu"}), "lstm_proj": ("LSTM", {"proj_size": 2})}


def _run(lib, name, x, states, params, packed, batch_first, bias=True):
    fn = getattr(lib, name.replace("_proj", ""))
    hx = list(states) if name.startswith("lstm") else states[0]
    if packed:
        data, sizes = x
        return fn(data, sizes, hx, params, bias, 2, 0.0, False, True)
    return fn(x, hx, params, bias, 2, 0.0, False, True, batch_first)


@pytest.mark.parametrize("name", sorted(MODULES))
@pytest.mark.parametrize("form", ["padded", "batch_first", "packed"])
def test_flat_functions_match_torch(name, form):
    cls, extra = MODULES[name]
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls)(3, 4, num_layers=2, bidirectional=True, **extra).double()
    ours = getattr(glassgrad.nn, cls)(3, 4, num_layers=2, bidirectional=True, **extra).double()
    copy_params(theirs, ours)
    rng = np.random.default_rng(1)
    out_size = extra.get("proj_size", 4)
    sizes = [(4, 2, out_size)] + ([(4, 2, 4)] if cls == "LSTM" else [])
    states_np = [rng.standard_normal(s) for s in sizes]
    packed, batch_first = form == "packed", form == "batch_first"
    x_np = rng.standard_normal((5, 3) if packed else (2, 3, 3) if batch_first else (3, 2, 3))
    results = []
    for lib, module in ((torch, theirs), (glassgrad, ours)):
        x = lib.tensor(x_np, requires_grad=True)
        states = [lib.tensor(s, requires_grad=True) for s in states_np]
        params = list(module._flat_weights)
        arg = (x, lib.tensor([2, 2, 1])) if packed else x
        out = _run(lib, name, arg, states, params, packed, batch_first)
        loss = sum(((k + 1) * o * o).sum() for k, o in enumerate(out))
        loss.backward()
        results.append((out, [x.grad] + [s.grad for s in states] + [p.grad for p in params]))
    (t_out, t_grads), (g_out, g_grads) = results
    assert len(t_out) == len(g_out)
    for a, b in zip(g_out, t_out):
        assert_close(a, b, atol=1e-10, what=f"{name} {form} output")
    for k, (a, b) in enumerate(zip(g_grads, t_grads)):
        assert_close(a, b, atol=1e-9, what=f"{name} {form} grad {k}")


def test_flat_lstm_is_the_module():
    torch.manual_seed(0)
    lstm = glassgrad.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    x = glassgrad.randn(2, 5, 3)
    h = (glassgrad.randn(4, 2, 4), glassgrad.randn(4, 2, 4))
    out, (h_n, c_n) = lstm(x, h)
    flat = glassgrad.lstm(x, h, lstm._flat_weights, True, 2, 0.0, False, True, True)
    for a, b in zip(flat, (out, h_n, c_n)):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())


def test_flat_dropout_only_when_training():
    torch.manual_seed(0)
    gru = glassgrad.nn.GRU(3, 4, num_layers=2)
    x, h = glassgrad.randn(5, 2, 3), glassgrad.zeros(2, 2, 4)
    ref = glassgrad.gru(x, h, gru._flat_weights, True, 2, 0.5, False, False, False)[0]
    glassgrad.manual_seed(3)
    trained = glassgrad.gru(x, h, gru._flat_weights, True, 2, 0.5, True, False, False)[0]
    assert not np.allclose(ref.detach().numpy(), trained.detach().numpy())


def _error(lib, call):
    try:
        call(lib)
    except Exception as exc:  # noqa: BLE001 - the type and text are compared
        return type(exc), str(exc).split("\n")[0]
    return None, ""


@pytest.mark.parametrize("case", ["one_state", "params", "cell_states", "cell_weight",
                                  "cell_input", "cell_hidden", "cell_batch", "cell_1d"])
def test_flat_errors_match_torch(case):
    def call(lib):
        g = lib.Generator().manual_seed(0)
        r = lambda *s: lib.randn(*s, generator=g)  # noqa: E731
        x, h = r(5, 2, 3), r(2, 2, 4)
        w = [r(16, 3), r(16, 4), r(16), r(16), r(16, 4), r(16, 4), r(16), r(16)]
        if case == "one_state":
            return lib.lstm(x, [h], w, True, 2, 0.0, False, False, False)
        if case == "params":
            return lib.lstm(x, [h, h], w[:-1], True, 2, 0.0, False, False, False)
        if case == "cell_states":
            return lib.lstm_cell(x[0], [h[0]], w[0], w[1])
        if case == "cell_weight":
            return lib.gru_cell(x[0], h[0], w[0], w[1])
        if case == "cell_input":
            return lib.rnn_tanh_cell(x[0], h[0], r(4, 2), r(4, 4))
        if case == "cell_hidden":
            return lib.rnn_relu_cell(x[0], r(2, 3), r(4, 3), r(4, 4))
        if case == "cell_batch":
            return lib.rnn_relu_cell(x[0], r(3, 4), r(4, 3), r(4, 4))
        return lib.rnn_tanh_cell(x[0, 0], h[0, 0], r(4, 3), r(4, 4))

    theirs, ours = _error(torch, call), _error(glassgrad, call)
    assert theirs[0] is not None and ours[0] is theirs[0], (ours, theirs)
    assert ours[1] == theirs[1]
