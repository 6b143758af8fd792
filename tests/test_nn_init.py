"""``nn.init`` against torch: the same distribution (bounds and moments of a large sample),
gains, fans, error messages; fills run under no_grad. The numbers themselves, equal to torch's
after the same seed, are compared in test_random_torch_exact_nn.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.nn import init

SHAPE = (256, 128, 3)


def _both(fn_name, *args, shape=SHAPE, **kwargs):
    g = glassgrad.nn.Parameter(glassgrad.empty(*shape))
    t = torch.nn.Parameter(torch.empty(*shape))
    out = getattr(init, fn_name)(g, *args, **kwargs)
    getattr(torch.nn.init, fn_name)(t, *args, **kwargs)
    assert out is g and g.is_leaf and g.requires_grad and g.grad_fn is None
    return g.detach().numpy().astype(np.float64), t.detach().numpy().astype(np.float64)


UNIFORM_LIKE = [
    ("uniform_", (-0.3, 0.7), {}),
    ("xavier_uniform_", (), {"gain": 2.0}),
    ("kaiming_uniform_", (), {"a": math.sqrt(5)}),
    ("kaiming_uniform_", (), {"mode": "fan_out", "nonlinearity": "relu"}),
]
NORMAL_LIKE = [
    ("normal_", (0.5, 2.0), {}),
    ("xavier_normal_", (), {}),
    ("kaiming_normal_", (), {"a": 0.2, "mode": "fan_out"}),
    ("kaiming_normal_", (), {"nonlinearity": "tanh"}),
    ("trunc_normal_", (), {"mean": 0.1, "std": 0.5, "a": -0.3, "b": 0.8}),
]


@pytest.mark.parametrize("name,args,kwargs", UNIFORM_LIKE, ids=[u[0] for u in UNIFORM_LIKE])
def test_uniform_family(name, args, kwargs):
    ours, theirs = _both(name, *args, **kwargs)
    span = theirs.max() - theirs.min()
    assert abs(ours.min() - theirs.min()) < 0.01 * span
    assert abs(ours.max() - theirs.max()) < 0.01 * span
    assert abs(ours.mean() - theirs.mean()) < 0.02 * span


@pytest.mark.parametrize("name,args,kwargs", NORMAL_LIKE, ids=[u[0] for u in NORMAL_LIKE])
def test_normal_family(name, args, kwargs):
    ours, theirs = _both(name, *args, **kwargs)
    assert abs(ours.std() - theirs.std()) < 0.02 * theirs.std()
    assert abs(ours.mean() - theirs.mean()) < 0.02 * theirs.std() + 1e-3
    if name == "trunc_normal_":
        assert ours.min() >= kwargs["a"] and ours.max() <= kwargs["b"]


def test_constant_fills():
    for name, args in [("constant_", (0.3,)), ("zeros_", ()), ("ones_", ())]:
        ours, theirs = _both(name, *args, shape=(3, 4))
        np.testing.assert_array_equal(ours, theirs)
    for shape in [(3, 5), (5, 3)]:
        ours, theirs = _both("eye_", shape=shape)
        np.testing.assert_array_equal(ours, theirs)
    ours, theirs = _both("dirac_", shape=(4, 2, 3, 3))
    np.testing.assert_array_equal(ours, theirs)
    ours, theirs = _both("dirac_", 2, shape=(4, 2, 3))
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 2)])
def test_orthogonal(shape):
    ours, theirs = _both("orthogonal_", shape=shape, gain=1.5)
    rows = shape[0]
    flat_o, flat_t = ours.reshape(rows, -1), theirs.reshape(rows, -1)
    gram_o = flat_o @ flat_o.T if rows <= flat_o.shape[1] else flat_o.T @ flat_o
    gram_t = flat_t @ flat_t.T if rows <= flat_t.shape[1] else flat_t.T @ flat_t
    np.testing.assert_allclose(gram_o, gram_t, atol=1e-5)


def test_sparse():
    ours, theirs = _both("sparse_", 0.5, shape=(10, 20), std=0.1)
    assert (ours == 0).sum(0).tolist() == (theirs == 0).sum(0).tolist()


def test_calculate_gain_and_fans():
    for args in [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                 ("leaky_relu", 0.2), ("selu",)]:
        assert init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args))
    for shape in [(3, 4), (5, 2, 3, 3), (4, 6, 7)]:
        assert (init._calculate_fan_in_and_fan_out(glassgrad.empty(*shape))
                == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape)))


def test_init_errors_match_torch():
    cases = [
        lambda m: m.nn.init.calculate_gain("swish"),
        lambda m: m.nn.init.calculate_gain("leaky_relu", "x"),
        lambda m: m.nn.init.xavier_uniform_(m.empty(3)),
        lambda m: m.nn.init.kaiming_uniform_(m.empty(3, 3), mode="fan"),
        lambda m: m.nn.init.eye_(m.empty(3)),
    ]
    for case in cases:
        with pytest.raises(ValueError) as ours:
            case(glassgrad)
        with pytest.raises(ValueError) as theirs:
            case(torch)
        assert str(ours.value) == str(theirs.value)


def test_init_is_reproducible_with_manual_seed():
    glassgrad.manual_seed(3)
    a = glassgrad.nn.Linear(4, 4).weight.detach().numpy().copy()
    glassgrad.manual_seed(3)
    b = glassgrad.nn.Linear(4, 4).weight.detach().numpy()
    np.testing.assert_array_equal(a, b)
    gen = glassgrad.Generator().manual_seed(1)
    c = init.normal_(glassgrad.empty(3), generator=gen).numpy().copy()
    gen.manual_seed(1)
    np.testing.assert_array_equal(c, init.normal_(glassgrad.empty(3), generator=gen).numpy())
