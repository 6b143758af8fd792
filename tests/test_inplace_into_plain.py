"""An in-place composite written into a tensor that does not require grad, from operands that
do (``torch.zeros(3).lerp_(end, weight)``): torch records the op with the pre-write value of
self; glassgrad once saved self itself and then refused backward as an in-place edit."""

import numpy as np
import pytest
import torch

import glassgrad

CASES = {
    "lerp_": lambda lib, z, a, w: z.lerp_(a, w),
    "addcmul_": lambda lib, z, a, w: z.addcmul_(a, a * w),
    "addcdiv_": lambda lib, z, a, w: z.addcdiv_(a, a * a + w),
    "fmod_": lambda lib, z, a, w: z.fmod_(a * w + 3),
    "index_add_": lambda lib, z, a, w: z.index_add_(0, lib.tensor([2, 0, 1]), a * w),
    "scatter_add_": lambda lib, z, a, w: z.scatter_add_(0, lib.tensor([1, 1, 0]), a * w),
    "remainder_": lambda lib, z, a, w: z.remainder_(a * w + 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grads_match_torch(name):
    rng = np.random.default_rng(0)
    start, end = rng.random(3) + 0.5, rng.standard_normal(3)
    grads = []
    for lib in (torch, glassgrad):
        a = lib.tensor(end, requires_grad=True)
        w = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        z = lib.tensor(start)
        out = CASES[name](lib, z, a, w)
        assert out is z and z.requires_grad
        (out * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        grads.append((z.detach().numpy(), a.grad.numpy(), w.grad.numpy()))
    for t, g in zip(*grads):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)
