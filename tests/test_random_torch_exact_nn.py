"""Same seed, same weights as torch: every ``nn.init`` function and every module constructor that
draws, compared exactly (every parameter and buffer, in order), then the first losses of a small
training step built from those weights without copying them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import glassgrad


def _built(make, seed=0):
    torch.manual_seed(seed)
    glassgrad.manual_seed(seed)
    return make(torch), make(glassgrad)


def _state(module):
    return [(k, v.detach().numpy()) for k, v in module.state_dict().items()]


MODULES = {
    "Linear": lambda m: m.nn.Linear(30, 20),
    "Linear no bias": lambda m: m.nn.Linear(7, 5, bias=False),
    "Bilinear": lambda m: m.nn.Bilinear(5, 6, 7),
    "Conv1d": lambda m: m.nn.Conv1d(3, 8, 5, groups=1),
    "Conv2d": lambda m: m.nn.Conv2d(4, 8, 3, groups=2),
    "Conv3d": lambda m: m.nn.Conv3d(2, 4, (2, 3, 3)),
    "ConvTranspose1d": lambda m: m.nn.ConvTranspose1d(3, 8, 5),
    "ConvTranspose2d": lambda m: m.nn.ConvTranspose2d(4, 6, 3, groups=2),
    "ConvTranspose3d": lambda m: m.nn.ConvTranspose3d(2, 4, 3),
    "Embedding": lambda m: m.nn.Embedding(100, 16),
    "Embedding padding_idx": lambda m: m.nn.Embedding(50, 8, padding_idx=3),
    "RNN": lambda m: m.nn.RNN(10, 20, num_layers=2, nonlinearity="relu"),
    "LSTM": lambda m: m.nn.LSTM(10, 20, num_layers=2, dropout=0.1),
    "LSTM bidirectional": lambda m: m.nn.LSTM(6, 5, bidirectional=True, batch_first=True),
    "LSTM proj_size": lambda m: m.nn.LSTM(6, 8, proj_size=3),
    "GRU": lambda m: m.nn.GRU(10, 20, bidirectional=True),
    "RNNCell": lambda m: m.nn.RNNCell(10, 20),
    "LSTMCell": lambda m: m.nn.LSTMCell(10, 20),
    "GRUCell": lambda m: m.nn.GRUCell(10, 20),
    "MultiheadAttention": lambda m: m.nn.MultiheadAttention(16, 4),
    "MultiheadAttention kdim vdim": lambda m: m.nn.MultiheadAttention(16, 2, kdim=6, vdim=5),
    "MultiheadAttention bias_kv": lambda m: m.nn.MultiheadAttention(8, 2, add_bias_kv=True),
    "BatchNorm2d": lambda m: m.nn.BatchNorm2d(4),
    "LayerNorm": lambda m: m.nn.LayerNorm(4),
    "GroupNorm": lambda m: m.nn.GroupNorm(2, 4),
    "PReLU": lambda m: m.nn.PReLU(3),
    "Sequential MLP": lambda m: m.nn.Sequential(m.nn.Linear(8, 16), m.nn.ReLU(),
                                                m.nn.Linear(16, 4)),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_module_constructor_draws_torchs_weights(name):
    t, g = _built(MODULES[name], seed=len(name))
    ts, gs = _state(t), _state(g)
    assert [k for k, _ in ts] == [k for k, _ in gs]
    for (k, a), (_, b) in zip(ts, gs):
        assert a.dtype == b.dtype and np.array_equal(a, b), k
    assert np.array_equal(torch.rand(3).numpy(), glassgrad.rand(3).numpy())


INIT = [
    ("uniform_", (), {}), ("uniform_", (-0.3, 0.7), {}), ("normal_", (0.2, 0.5), {}),
    ("xavier_uniform_", (), {"gain": 2.0}), ("xavier_normal_", (), {}),
    ("kaiming_uniform_", (), {"a": math.sqrt(5)}),
    ("kaiming_uniform_", (), {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", (), {}), ("kaiming_normal_", (), {"a": 0.1, "mode": "fan_out"}),
    ("trunc_normal_", (), {}), ("trunc_normal_", (), {"std": 0.02}),
    ("trunc_normal_", (0.5, 1.0, 0.9, 1.1), {}),  # narrow: the uniform-proposal sampler
    ("sparse_", (0.3,), {}), ("constant_", (0.25,), {}), ("ones_", (), {}), ("zeros_", (), {}),
    ("eye_", (), {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn,args,kwargs", INIT, ids=[f"{f}{a}{k}" for f, a, k in INIT])
def test_init_function_fills_torchs_numbers(fn, args, kwargs, dtype):
    def run(m):
        x = m.empty(24, 30, dtype=getattr(m, dtype))
        return getattr(m.nn.init, fn)(x, *args, **kwargs)

    t, g = _built(run, seed=5)
    assert np.array_equal(t.numpy(), g.numpy())
    assert np.array_equal(torch.rand(3).numpy(), glassgrad.rand(3).numpy())


@pytest.mark.parametrize("shape", [(4, 3, 3, 3), (6, 6, 5)])
def test_init_on_conv_shapes_and_generators(shape):
    def run(m):
        gen = m.Generator().manual_seed(9)
        return [m.nn.init.kaiming_uniform_(m.empty(*shape), a=math.sqrt(5)),
                m.nn.init.xavier_uniform_(m.empty(*shape), generator=gen),
                m.nn.init.kaiming_normal_(m.empty(*shape), generator=gen),
                m.nn.init.dirac_(m.empty(*shape))]

    t, g = _built(run, seed=6)
    for a, b in zip(t, g):
        assert np.array_equal(a.numpy(), b.numpy())


def test_orthogonal_draws_torchs_gaussian():
    """The Gaussian matrix is torch's exactly; its QR is LAPACK's in both libraries, equal to
    float32 rounding (not bit for bit: different LAPACK builds)."""
    t, g = _built(lambda m: m.nn.init.orthogonal_(m.empty(6, 10), gain=1.5), seed=7)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=0, atol=2e-6)
    assert np.array_equal(torch.rand(3).numpy(), glassgrad.rand(3).numpy())


def test_first_losses_match_without_copying_weights():
    """A model built after the same seed trains to torch's losses: dropout masks, shuffled
    batches and weights all come from the same stream."""
    data = np.random.default_rng(0).normal(size=(64, 10)).astype(np.float32)
    target = (data[:, :2].sum(1) > 0).astype(np.int64)

    def run(m):
        model = m.nn.Sequential(m.nn.Linear(10, 32), m.nn.ReLU(), m.nn.Dropout(0.2),
                                m.nn.Linear(32, 2))
        opt = m.optim.SGD(model.parameters(), lr=0.1)
        ds = m.utils.data.TensorDataset(m.tensor(data), m.tensor(target))
        losses = []
        for x, y in m.utils.data.DataLoader(ds, batch_size=8, shuffle=True):
            opt.zero_grad()
            loss = m.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    t, g = _built(run, seed=1)
    np.testing.assert_allclose(g[:5], t[:5], rtol=1e-5)


@pytest.mark.parametrize("make", [lambda m: m.nn.LSTM(10, 20, 3, dropout=0.3),
                                  lambda m: m.nn.GRU(10, 20, 2, dropout=0.5, bidirectional=True),
                                  lambda m: m.nn.RNN(10, 20, 2, dropout=0.5)],
                         ids=["LSTM", "GRU", "RNN"])
def test_recurrent_inter_layer_dropout_is_torchs(make):
    """Training-mode dropout between layers draws torch's masks: the outputs agree to float32
    rounding of the cells' arithmetic and the stream ends where torch's does."""
    x = np.random.default_rng(0).normal(size=(5, 3, 10)).astype(np.float32)

    def run(m):
        out, _ = make(m).train()(m.tensor(x))
        return out.detach().numpy(), m.rand(2).numpy()

    (t, t_next), (g, g_next) = _built(run)
    np.testing.assert_allclose(g, t, rtol=0, atol=1e-6)
    assert np.array_equal(t_next, g_next)
