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
    "hypot_": (lambda t: t.hypot_(t * 2 - 1), (0.3, 3.0)),
    "copysign_": (lambda t: t.copysign_(t - 1), (0.3, 3.0)),
    "copysign_number": (lambda t: t.copysign_(-2), (0.3, 3.0)),
    "nextafter_": (lambda t: t.nextafter_(t * 0), (0.3, 3.0)),
    "float_power_": (lambda t: t.float_power_(t * 0.5), (0.3, 3.0)),
    "float_power_number": (lambda t: t.float_power_(2.5), (0.3, 3.0)),
    "ldexp_": (lambda t: t.ldexp_(t - 1), (-2.0, 2.0)),
    "deg2rad_": (lambda t: t.deg2rad_(), (-90.0, 90.0)),
    "rad2deg_": (lambda t: t.rad2deg_(), (-2.0, 2.0)),
    "nan_to_num_": (lambda t: t.nan_to_num_(nan=1.0), (-2.0, 2.0)),
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


def _top_level(lib, name):
    return getattr(lib, name)


NO_GRAD = {
    "heaviside_": lambda lib, t: t.heaviside_(lib.full_like(t, 0.5)),
    "gcd_": lambda lib, t: t.gcd_(lib.tensor([4, 6, 9], dtype=t.dtype)),
    "lcm_": lambda lib, t: t.lcm_(lib.tensor([4, 6, 9])),
    "torch.gcd_": lambda lib, t: lib.gcd_(t, lib.tensor([4, 6, 9], dtype=t.dtype)),
    "torch.lcm_": lambda lib, t: lib.lcm_(t, lib.tensor([4, 6, 9], dtype=t.dtype)),
    "nan_to_num_int": lambda lib, t: t.nan_to_num_(),
    "torch.deg2rad_": lambda lib, t: lib.deg2rad_(t.double()),
    "torch.nan_to_num_": lambda lib, t: lib.nan_to_num_(t.double() / 0, posinf=3.0),
    "torch.i0_": lambda lib, t: lib.i0_(t.float()),
    "torch.sinc_": lambda lib, t: lib.sinc_(t.float()),
    "torch.exp2_": lambda lib, t: lib.exp2_(t.float()),
    "torch.erfc_": lambda lib, t: lib.erfc_(t.float()),
    "torch.logit_": lambda lib, t: lib.logit_(t.float() / 8, eps=0.1),
    "torch.xlogy_": lambda lib, t: lib.xlogy_(t.float(), 2.0),
    "torch.ldexp_": lambda lib, t: lib.ldexp_(t.float(), t),
    "torch.rad2deg_": lambda lib, t: lib.rad2deg_(t.float()),
}


@pytest.mark.parametrize("name", list(NO_GRAD))
def test_inplace_without_grad_matches_torch(name):
    """In-place forms on integer tensors (and torch's top-level in-place functions): the value
    and dtype written, and that the tensor itself is returned."""
    outs = []
    for lib in (torch, glassgrad):
        t = lib.tensor([-6, 0, 15], dtype=lib.int32)
        out = NO_GRAD[name](lib, t)
        outs.append(out)
    assert str(outs[1].dtype).split(".")[-1] == str(outs[0].dtype).split(".")[-1]
    assert_close(outs[1], outs[0], atol=1e-6, rtol=1e-6, what=name)
