"""``linalg.vector_norm`` (and what calls it: ``norm``, clip_grad_norm_, weight_norm) on
bfloat16: torch accumulates in float32 and rounds to bfloat16; its gradient likewise."""

import numpy as np
import pytest
import torch

import glassgrad


@pytest.mark.parametrize("ord,dim", [(2, None), (1, 0), (float("inf"), 1), (3.0, (0, 1))])
def test_vector_norm_bf16_matches_torch(ord, dim):
    data = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    seen = []
    for lib in (torch, glassgrad):
        x = lib.tensor(data).to(lib.bfloat16).requires_grad_()
        n = lib.linalg.vector_norm(x, ord, dim)
        n.float().sum().backward()
        assert n.dtype == lib.bfloat16 and x.grad.dtype == lib.bfloat16
        seen.append((n.detach().float().numpy(), x.grad.float().numpy()))
    for g, t in zip(seen[1], seen[0]):
        np.testing.assert_allclose(g, t, rtol=1e-2, atol=1e-2)


def test_clip_grad_norm_bf16_matches_torch():
    data = np.random.default_rng(2).standard_normal(10).astype(np.float32)
    out = []
    for lib in (torch, glassgrad):
        p = lib.nn.Parameter(lib.zeros(10, dtype=lib.bfloat16))
        p.grad = lib.tensor(data).to(lib.bfloat16)
        total = lib.nn.utils.clip_grad_norm_([p], 0.5)
        out.append((total.float().numpy(), p.grad.float().numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-2)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=2e-2, atol=1e-2)
