"""vmap over the special functions (issue 15, lane special): torch.func.vmap's results, with no
per-entry fallback (a fallback warns; here warnings are errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close

FNS = {
    "lgamma": lambda m, t: m.lgamma(t),
    "polygamma": lambda m, t: m.polygamma(2, t),
    "zeta": lambda m, t: m.special.zeta(t + 1, t),
    "igamma": lambda m, t: m.igamma(t, t * 2),
    "i1e": lambda m, t: m.special.i1e(t),
    "log_ndtr": lambda m, t: m.special.log_ndtr(t) + m.special.ndtr(t),
    "sinc": lambda m, t: m.sinc(t),
    "xlog1py": lambda m, t: m.special.xlog1py(t, t),
    "hypot": lambda m, t: m.hypot(t, t * 2 + 1),
    "fmax": lambda m, t: m.fmax(t, t.flip(0)),
    "frexp": lambda m, t: m.frexp(t)[0],
    "bessel_j0": lambda m, t: m.special.bessel_j0(t),
    "chebyshev_t": lambda m, t: m.special.chebyshev_polynomial_t(t, 3),
}


@pytest.mark.parametrize("name", list(FNS))
def test_vmap_matches_torch(name):
    x = np.random.default_rng(7).uniform(0.5, 2.5, size=(3, 4))
    theirs = torch.func.vmap(lambda t: FNS[name](torch, t))(torch.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = glassgrad.func.vmap(lambda t: FNS[name](glassgrad, t))(glassgrad.tensor(x))
    assert_close(ours, theirs, atol=1e-6, rtol=1e-6, what=name)


@pytest.mark.parametrize("name", ["lgamma", "i1e", "log_ndtr", "hypot", "frexp", "polygamma"])
def test_vmap_of_grad_matches_torch(name):
    x = np.random.default_rng(8).uniform(0.5, 2.5, size=(3, 4))
    grad_t = torch.func.vmap(torch.func.grad(lambda t: FNS[name](torch, t).sum()))
    grad_g = glassgrad.func.vmap(glassgrad.func.grad(lambda t: FNS[name](glassgrad, t).sum()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = grad_g(glassgrad.tensor(x))
    assert_close(ours, grad_t(torch.tensor(x)), atol=1e-6, rtol=1e-6, what=name)
