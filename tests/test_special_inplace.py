"""In-place forms of the special functions (issue 15, lane special), against torch: the values
written, the gradient through the rebased history of a non-leaf, and the version bump."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close

# name -> (method call, domain of the values)
CASES = {
    "lgamma_": (lambda t: t.lgamma_(), (0.3, 4.0)),
    "digamma_": (lambda t: t.digamma_(), (0.3, 4.0)),
    "polygamma_": (lambda t: t.polygamma_(2), (0.3, 4.0)),
    "polygamma_0": (lambda t: t.polygamma_(0), (0.3, 4.0)),
    "mvlgamma_": (lambda t: t.mvlgamma_(2), (1.0, 4.0)),
    "i0_": (lambda t: t.i0_(), (-2.0, 2.0)),
    "sinc_": (lambda t: t.sinc_(), (-2.0, 2.0)),
    "exp2_": (lambda t: t.exp2_(), (-2.0, 2.0)),
    "erfc_": (lambda t: t.erfc_(), (-2.0, 2.0)),
    "erfinv_": (lambda t: t.erfinv_(), (-0.9, 0.9)),
    "logit_": (lambda t: t.logit_(), (0.1, 0.9)),
    "logit_eps": (lambda t: t.logit_(eps=0.2), (0.05, 0.95)),
    "igamma_": (lambda t: (t.detach() + 0.5).igamma_(t), (0.3, 3.0)),
    "igammac_": (lambda t: (t.detach() * 0.5).igammac_(t * 2), (0.3, 3.0)),
    "xlogy_": (lambda t: t.xlogy_(t + 1), (0.3, 3.0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_inplace_matches_torch(name):
    call, (lo, hi) = CASES[name]
    values = np.random.default_rng(3).uniform(lo, hi, size=(2, 3))
    cot = np.random.default_rng(4).standard_normal((2, 3))
    results = []
    for lib in (torch, glassgrad):
        leaf = lib.tensor(values, requires_grad=True)
        y = leaf * 1.0
        version = y._version
        out = call(y)
        assert out is not y or y._version > version
        (grad,) = lib.autograd.grad(out, leaf, lib.tensor(cot), allow_unused=True)
        results.append((out, grad))
    (t_out, t_grad), (g_out, g_grad) = results
    assert_close(g_out, t_out, atol=1e-6, rtol=1e-6, what=f"{name} value")
    if t_grad is None:
        assert g_grad is None or not g_grad.numpy().any()
    else:
        assert_close(g_grad, t_grad, atol=1e-6, rtol=1e-6, what=f"{name} grad")


@pytest.mark.parametrize("name", ["lgamma_", "i0_", "exp2_", "sinc_"])
def test_inplace_float32_keeps_dtype(name):
    call, (lo, hi) = CASES[name]
    values = np.random.default_rng(5).uniform(lo, hi, size=4).astype(np.float32)
    t, g = call(torch.tensor(values)), call(glassgrad.tensor(values))
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert_close(g, t, atol=1e-5, rtol=1e-5)
