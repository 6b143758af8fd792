"""RReLU / F.rrelu / torch.rrelu against torch: eval exactly; training by the slopes' bounds, by
the gradient equalling the sampled slope, and by torch's very slopes after the same seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

X = np.random.default_rng(1).standard_normal((4, 6, 5))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rrelu_module_matches_torch(dtype):
    ref, mod = torch.nn.RReLU(0.05, 0.4), glassgrad.nn.RReLU(0.05, 0.4)
    assert repr(mod) == repr(ref)
    torch.manual_seed(3)
    glassgrad.manual_seed(3)
    xt = torch.tensor(X.astype(dtype), requires_grad=True)
    xg = glassgrad.tensor(X.astype(dtype), requires_grad=True)
    yt, yg = ref(xt), mod(xg)
    np.testing.assert_array_equal(yg.detach().numpy(), yt.detach().numpy())
    yg.sum().backward()
    slope = xg.grad.numpy()
    negative = X <= 0
    assert ((slope[negative] >= np.float32(0.05)) & (slope[negative] <= np.float32(0.4))).all()
    np.testing.assert_array_equal(slope[~negative], 1.0)
    np.testing.assert_allclose(yg.detach().numpy(), X.astype(dtype) * slope, rtol=1e-6)
    ref.eval()
    mod.eval()
    np.testing.assert_array_equal(mod(xg).detach().numpy(), ref(xt).detach().numpy())


def test_rrelu_functional_variants():
    gen_t, gen_g = torch.Generator().manual_seed(5), glassgrad.Generator().manual_seed(5)
    xt, xg = torch.tensor(X), glassgrad.tensor(X)
    np.testing.assert_array_equal(glassgrad.rrelu(xg, 0.1, 0.3, True, gen_g).numpy(),
                                  torch.rrelu(xt, 0.1, 0.3, True, gen_t).numpy())
    out = glassgrad.nn.functional.rrelu_(xg.clone(), 0.2, 0.2, training=True)
    np.testing.assert_allclose(out.numpy(), np.where(X > 0, X, 0.2 * X), rtol=1e-15)
    same = xg.clone()
    assert glassgrad.nn.functional.rrelu(same, inplace=True) is same
    assert repr(glassgrad.nn.RReLU(0.1, 0.3, True)) == repr(torch.nn.RReLU(0.1, 0.3, True))


@pytest.mark.parametrize("fn", [
    lambda m: m.nn.functional.rrelu(m.ones(3), 0.5, 0.1),
    lambda m: m.rrelu(m.tensor([1, -2]), training=True),
    lambda m: m.nn.functional.rrelu(m.ones(2, requires_grad=True), inplace=True),
])
def test_rrelu_errors_match_torch(fn):
    with pytest.raises(Exception) as t_info:
        fn(torch)
    with pytest.raises(t_info.type) as g_info:
        fn(glassgrad)
    assert str(g_info.value).startswith(str(t_info.value).splitlines()[0])
