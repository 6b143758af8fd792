"""No recursion anywhere: autograd.grad, backward and teardown of a 200,000-node chain (a million
nodes also works; it is too slow for the suite). ``y + 0`` leaves the function unchanged, so the
long chain's gradient must equal torch's on a short chain."""

from __future__ import annotations

import gc

import numpy as np
import torch

import glassgrad

N = 200_000


def _chain(lib, n):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = y + 0
    return x, (y * 1.0001).exp().sum()


def test_grad_backward_and_teardown_of_a_long_chain():
    tx, ty = _chain(torch, 10)
    ty.backward()
    x, y = _chain(glassgrad, N)
    (g,) = glassgrad.autograd.grad(y, x, retain_graph=True)  # walk restricted to the input
    y.backward()  # full walk; every node frees what it saved
    np.testing.assert_allclose(g.numpy(), tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    del y  # Python frees the nodes one by one (its trashcan bounds the C recursion)
    gc.collect()
    assert x.grad is not None
