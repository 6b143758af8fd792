"""The article's WGAN-GP gradient penalty through nn layers: the penalty's gradients reach the
critic's parameters, equal to torch's (double backward through Linear, LeakyReLU, ReLU, Tanh,
Sigmoid, BCEWithLogits and MSE)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params


def _critic(m, act):
    acts = {"leaky": lambda: m.nn.LeakyReLU(0.2), "relu": m.nn.ReLU, "tanh": m.nn.Tanh,
            "sigmoid": m.nn.Sigmoid}
    return m.nn.Sequential(m.nn.Linear(4, 8), acts[act](), m.nn.Linear(8, 8), acts[act](),
                           m.nn.Linear(8, 1)).double()


def _step(m, critic, real, fake, alpha, loss_kind):
    real, fake, alpha = m.tensor(real), m.tensor(fake), m.tensor(alpha)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    grads = m.autograd.grad(outputs=out, inputs=interp, grad_outputs=m.ones_like(out),
                            create_graph=True, retain_graph=True, only_inputs=True)[0]
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    score_real, score_fake = critic(real), critic(fake)
    if loss_kind == "bce":
        base = m.nn.BCEWithLogitsLoss()(score_real, m.ones_like(score_real)) + \
            m.nn.BCEWithLogitsLoss()(score_fake, m.zeros_like(score_fake))
    elif loss_kind == "mse":
        base = m.nn.MSELoss()(score_real, m.ones_like(score_real))
    else:
        base = score_fake.mean() - score_real.mean()
    loss = base + 10 * penalty
    critic.zero_grad()
    loss.backward()
    return loss, [p.grad for p in critic.parameters()]


@pytest.mark.parametrize("act", ["leaky", "relu", "tanh", "sigmoid"])
@pytest.mark.parametrize("loss_kind", ["wasserstein", "bce", "mse"])
def test_gradient_penalty_matches_torch(act, loss_kind):
    rng = np.random.default_rng(0)
    real, fake = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    alpha = rng.uniform(size=(6, 1))
    t_critic, g_critic = _critic(torch, act), _critic(glassgrad, act)
    copy_params(t_critic, g_critic)
    lt, gt = _step(torch, t_critic, real, fake, alpha, loss_kind)
    lg, gg = _step(glassgrad, g_critic, real, fake, alpha, loss_kind)
    assert_close(lg, lt)
    for a, b in zip(gg, gt):
        assert a is not None and not a.requires_grad
        assert_close(a, b, 1e-9, 1e-7)
