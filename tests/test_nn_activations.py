"""Activation modules and functions against torch: values, input gradients, parameter gradients
(PReLU) in float64 and float32, and double backward in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.nn_oracle import check_module
from tests.oracle import assert_close

# (name, factory(lib) -> module); inputs include the kinks (0, the hardtanh/relu6 bounds)
ACTIVATIONS = [
    ("ReLU", lambda m: m.nn.ReLU()),
    ("LeakyReLU", lambda m: m.nn.LeakyReLU(0.2)),
    ("ELU", lambda m: m.nn.ELU(alpha=0.7)),
    ("CELU", lambda m: m.nn.CELU(alpha=1.3)),
    ("SELU", lambda m: m.nn.SELU()),
    ("GELU", lambda m: m.nn.GELU()),
    ("GELU_tanh", lambda m: m.nn.GELU(approximate="tanh")),
    ("SiLU", lambda m: m.nn.SiLU()),
    ("Mish", lambda m: m.nn.Mish()),
    ("Sigmoid", lambda m: m.nn.Sigmoid()),
    ("Tanh", lambda m: m.nn.Tanh()),
    ("Softplus", lambda m: m.nn.Softplus()),
    ("Softplus_beta", lambda m: m.nn.Softplus(beta=2.0, threshold=3.0)),
    ("Softmax", lambda m: m.nn.Softmax(dim=1)),
    ("LogSoftmax", lambda m: m.nn.LogSoftmax(dim=-1)),
    ("Softmin", lambda m: m.nn.Softmin(dim=0)),
    ("Hardtanh", lambda m: m.nn.Hardtanh(-0.5, 1.0)),
    ("ReLU6", lambda m: m.nn.ReLU6()),
    ("PReLU", lambda m: m.nn.PReLU()),
    ("PReLU_channels", lambda m: m.nn.PReLU(6, init=0.1)),
    ("LogSigmoid", lambda m: m.nn.LogSigmoid()),
    ("Softsign", lambda m: m.nn.Softsign()),
    ("Hardsigmoid", lambda m: m.nn.Hardsigmoid()),
    ("Hardswish", lambda m: m.nn.Hardswish()),
    ("Tanhshrink", lambda m: m.nn.Tanhshrink()),
    ("Threshold", lambda m: m.nn.Threshold(0.1, -2.0)),
    ("Softshrink", lambda m: m.nn.Softshrink(0.3)),
    ("Hardshrink", lambda m: m.nn.Hardshrink(0.3)),
    ("GLU", lambda m: m.nn.GLU(dim=1)),
]
NO_GRADGRAD = {"Hardsigmoid"}  # torch: "derivative for aten::hardsigmoid_backward is not implemented"


@pytest.mark.parametrize("name,make", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_matches_torch(name, make):
    x = np.random.default_rng(0).uniform(-4, 4, size=(4, 6, 2))
    check_module(make, [x], double=name not in NO_GRADGRAD, what=name)


@pytest.mark.parametrize("name,make", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_gradient_at_kinks(name, make):
    # NOTE: first order only: at x == 0 PyTorch's ELU family uses x <= 0 for the first derivative
    # but x < 0 for the second, which no single function has
    x = np.random.default_rng(0).uniform(-4, 4, size=(4, 6, 2))
    x[0, :, 0] = [0.0, 1.0, -0.5, 6.0, 0.3, -0.3]
    check_module(make, [x], double=False, what=f"{name} at kinks")


def test_extreme_inputs_stay_finite():
    x = np.array([-1000.0, -50.0, -1.0, 0.0, 1.0, 50.0, 1000.0])
    for name in ("Softplus", "LogSigmoid", "Mish", "SiLU", "ELU", "Sigmoid", "Tanh", "SELU"):
        make = dict(ACTIVATIONS)[name]
        check_module(make, [x], dtypes=(np.float64,), what=f"{name} extreme")
    for np_dtype in (np.float64, np.float32):
        xt = glassgrad.tensor(x.astype(np_dtype), requires_grad=True)
        glassgrad.nn.functional.softplus(xt).sum().backward()
        assert np.isfinite(xt.grad.numpy()).all()


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_top_level_softmax(fn):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5)) * 30
    for dim in (0, 1, -1):
        a = getattr(glassgrad, fn)(glassgrad.tensor(x), dim=dim)
        b = getattr(torch, fn)(torch.tensor(x), dim=dim)
        assert_close(a, b, 1e-10, 1e-8, what=fn)
        a = getattr(glassgrad.tensor(x), fn)(dim)
        assert_close(a, b, 1e-10, 1e-8, what=f"Tensor.{fn}")
    a = glassgrad.softmax(glassgrad.tensor(x, dtype=glassgrad.float32), 1, dtype=glassgrad.float64)
    assert a.dtype == glassgrad.float64


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = glassgrad.nn.functional.softmax(glassgrad.ones(2, 3))
    with pytest.warns(UserWarning):
        ref = torch.nn.functional.softmax(torch.ones(2, 3))
    assert_close(out, ref)


def test_relu_inplace_writes_input():
    x = np.array([-1.0, 0.5, 2.0])
    ours = glassgrad.tensor(x)
    theirs = torch.tensor(x)
    out = glassgrad.nn.ReLU(inplace=True)(ours)
    torch.nn.ReLU(inplace=True)(theirs)
    assert out is ours
    assert_close(ours, theirs)
    # the other activations accept inplace=True and return the same values
    for name in ("LeakyReLU", "ELU", "SiLU", "Hardtanh", "ReLU6", "SELU", "CELU", "Mish"):
        g_mod = getattr(glassgrad.nn, name)(inplace=True)
        t_mod = getattr(torch.nn, name)(inplace=True)
        assert_close(g_mod(glassgrad.tensor(x)), t_mod(torch.tensor(x)), what=name)


@pytest.mark.parametrize("name,make", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_repr_matches_torch(name, make):
    assert repr(make(glassgrad)) == repr(make(torch))


def test_reprs_with_options():
    for args in [("LeakyReLU", (0.1, True)), ("ELU", (0.5, True)), ("ReLU", (True,)),
                 ("Hardtanh", (-2.0, 2.0, True)), ("ReLU6", (True,)), ("SiLU", (True,)),
                 ("Threshold", (0.1, 20.0, True))]:
        name, a = args
        assert repr(getattr(glassgrad.nn, name)(*a)) == repr(getattr(torch.nn, name)(*a))


def test_gelu_bad_approximate():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        glassgrad.nn.functional.gelu(glassgrad.ones(2), approximate="fast")


def test_glu_odd_dim_error():
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        glassgrad.nn.functional.glu(glassgrad.ones(2, 3), dim=1)
