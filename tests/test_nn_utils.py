"""``nn.utils`` against torch: clip_grad_norm_ (2, 1, inf; non-finite), clip_grad_value_,
parameters_to_vector, vector_to_parameters."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params


def _nets(scale=1.0):
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    g = glassgrad.nn.Sequential(glassgrad.nn.Linear(3, 4), glassgrad.nn.Tanh(),
                                glassgrad.nn.Linear(4, 2)).double()
    copy_params(t, g)
    x = np.random.default_rng(0).standard_normal((5, 3)) * scale
    (t(torch.tensor(x)) ** 2).sum().backward()
    (g(glassgrad.tensor(x)) ** 2).sum().backward()
    return g, t


@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), 3.0])
@pytest.mark.parametrize("max_norm", [0.1, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    g, t = _nets()
    total_g = glassgrad.nn.utils.clip_grad_norm_(g.parameters(), max_norm, norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(t.parameters(), max_norm, norm_type)
    assert isinstance(total_g, glassgrad.Tensor) and total_g.ndim == 0
    assert_close(total_g, total_t)
    for a, b in zip(g.parameters(), t.parameters()):
        assert_close(a.grad, b.grad)


def test_clip_grad_norm_nonfinite():
    g, _ = _nets()
    g[0].weight.grad.numpy()[0, 0] = np.inf
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite"):
        glassgrad.nn.utils.clip_grad_norm_(g.parameters(), 1.0, error_if_nonfinite=True)
    total = glassgrad.nn.utils.clip_grad_norm_(g.parameters(), 1.0)
    assert not np.isfinite(total.item())


def test_clip_grad_value_matches_torch():
    g, t = _nets(scale=3.0)
    glassgrad.nn.utils.clip_grad_value_(g.parameters(), 0.5)
    torch.nn.utils.clip_grad_value_(t.parameters(), 0.5)
    for a, b in zip(g.parameters(), t.parameters()):
        assert_close(a.grad, b.grad)


def test_parameters_vector_roundtrip():
    g, t = _nets()
    vg = glassgrad.nn.utils.parameters_to_vector(g.parameters())
    vt = torch.nn.utils.parameters_to_vector(t.parameters())
    assert_close(vg, vt)
    new = np.arange(vt.numel(), dtype=np.float64)
    glassgrad.nn.utils.vector_to_parameters(glassgrad.tensor(new), g.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), t.parameters())
    for a, b in zip(g.parameters(), t.parameters()):
        assert_close(a, b)
        assert a.is_leaf
