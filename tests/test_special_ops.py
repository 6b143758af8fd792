"""Edge values of glassgrad/ops/special_ops.py against torch: logit's eps, xlogy's zeros/inf/nan,
erfinv at and beyond +-1 and near 1, inverse hyperbolics outside their domains, float32 and
integer inputs, and the gradients at those points."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad

INF, NAN = np.inf, np.nan


def _both(fn, *arrays, dtype=np.float64, grad=False):
    """fn on glassgrad and torch with the same arrays; returns (ours, theirs) values, and the
    gradients of sum(out) w.r.t. the float inputs when grad."""
    outs = []
    for lib in (glassgrad, torch):
        args = [lib.tensor(np.asarray(a, dtype=dtype), requires_grad=grad) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # torch is silent: so must glassgrad be
            out = fn(lib, *args)
            grads = lib.autograd.grad(out, args, lib.ones_like(out)) if grad else ()
        outs.append((out.detach().numpy(), [g.numpy() for g in grads], str(out.dtype)))
    (a, ga, da), (b, gb, db) = outs
    assert da.split(".")[-1] == db.split(".")[-1]
    np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == np.float32 else 1e-12, atol=0)
    for x, y in zip(ga, gb):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=0)
    return a, b


@pytest.mark.parametrize("eps", [None, 0.0, 1e-6, 0.25, -0.5])
def test_logit_eps(eps):
    x = [0.0, 1.0, 0.1, 0.5, 0.9, 1e-8, 1 - 1e-8, -0.5, 1.5]
    _both(lambda m, t: m.logit(t, eps), x)
    _both(lambda m, t: t.logit(eps), x, dtype=np.float32)


@pytest.mark.parametrize("eps", [None, 0.25])
def test_logit_grad_at_edges(eps):
    _both(lambda m, t: m.logit(t, eps), [0.1, 0.2, 0.5, 0.8, 0.9, -0.5, 1.5, 0.0, 1.0], grad=True)


def test_xlogy_zeros_inf_nan():
    x = [0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, NAN, -1.0, 0.0]
    y = [0.0, INF, 3.0, NAN, 0.0, INF, -1.0, 2.0, 0.5, -2.0]
    _both(lambda m, a, b: m.xlogy(a, b), x, y)
    _both(lambda m, a, b: a.xlogy(b), x, y, dtype=np.float32)


def test_xlogy_grad_at_zeros():
    x = [0.0, 0.0, 1.5, 0.0, 2.0]
    y = [0.0, -1.0, 0.5, 2.0, 3.0]
    _both(lambda m, a, b: m.xlogy(a, b), x, y, grad=True)


@pytest.mark.parametrize("other", [0.0, 2.5, INF, NAN, 3])
def test_xlogy_number_operands(other):
    x = [0.0, 1.0, 2.0]
    _both(lambda m, a: m.xlogy(a, other), x)
    _both(lambda m, a: m.xlogy(other, a), x)
    _both(lambda m, a: m.xlogy(a, other), x, dtype=np.float32)


def test_integer_inputs_promote():
    i = np.array([0, 1, 2, 3])
    for name in ("asinh", "acosh", "atanh", "erfc", "erfinv", "logit"):
        ours = getattr(glassgrad, name)(glassgrad.tensor(i))
        theirs = getattr(torch, name)(torch.tensor(i))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    ours = glassgrad.xlogy(glassgrad.tensor(i), glassgrad.tensor(i[::-1].copy()))
    theirs = torch.xlogy(torch.tensor(i), torch.tensor(i[::-1].copy()))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_erfinv_edges():
    x = [1.0, -1.0, 1.5, -2.0, INF, NAN, 0.0, -0.0, 1e-300, 0.5, -0.999, 1 - 2**-53, -(1 - 2**-52)]
    ours, _ = _both(lambda m, t: m.erfinv(t), x)
    assert np.signbit(ours[7])  # erfinv(-0.0) is -0.0
    _both(lambda m, t: t.erfinv(), x, dtype=np.float32)


def test_erfinv_accuracy_and_inverse():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-1, 1, 2000), 1 - np.logspace(-16, -1, 200)])
    _both(lambda m, t: m.erfinv(t), x)
    back = glassgrad.erf(glassgrad.erfinv(glassgrad.tensor(x[:2000]))).numpy()
    np.testing.assert_allclose(back, x[:2000], rtol=1e-14, atol=1e-16)
    _both(lambda m, t: m.erfinv(t), x[:50], grad=True)


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh", "erfc", "arcsinh", "arccosh",
                                  "arctanh"])
def test_unary_out_of_domain(name):
    x = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 30.0, INF, -INF, NAN]
    _both(lambda m, t: getattr(m, name)(t), x)
    _both(lambda m, t: getattr(t, name)(), x, dtype=np.float32)


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh", "erfc", "erfinv"])
def test_unary_grad_at_domain_edges(name):
    x = {"acosh": [1.0, 1.5, 0.5], "atanh": [1.0, -1.0, 0.3, 2.0], "erfinv": [0.3, -0.99]}
    _both(lambda m, t: getattr(m, name)(t), x.get(name, [-3.0, 0.0, 2.5]), grad=True)


def test_grad_fn_names():
    t = glassgrad.tensor([0.3, 0.6], requires_grad=True)
    for name in ("asinh", "atanh", "erfc", "erfinv", "logit"):
        assert type(getattr(glassgrad, name)(t).grad_fn).__name__ == (
            type(getattr(torch, name)(torch.tensor([0.3, 0.6], requires_grad=True)).grad_fn).__name__)
    assert type(glassgrad.xlogy(t, t).grad_fn).__name__ == "XlogyBackward0"
