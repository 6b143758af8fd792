"""torch's top-level nn names (issue 15, lane tnn) beyond the op table: dropout masks after the
same seed, the in-place forms, embedding's padding_idx, vmap at top level."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

A = np.linspace(-2, 2, 24).reshape(2, 3, 4)


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_dropout_masks_as_torch(name):
    outs = []
    for m in (glassgrad, torch):
        m.manual_seed(7)
        x = m.tensor(A, requires_grad=True)
        y = getattr(m, name)(x, 0.4, True)
        y.sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], atol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], atol=1e-12)


@pytest.mark.parametrize("name,args", [
    ("dropout_", (0.3, True)), ("feature_dropout_", (0.3, True)), ("alpha_dropout_", (0.3, True)),
    ("feature_alpha_dropout_", (0.3, True)), ("celu_", (0.5,)), ("selu_", ()),
    ("threshold_", (0.1, 9.0)), ("relu_", ()),
])
def test_inplace_as_torch(name, args):
    outs = []
    for m in (glassgrad, torch):
        m.manual_seed(3)
        x = m.tensor(A)
        y = getattr(m, name)(x, *args)
        assert y is x
        outs.append(x.numpy())
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-12)


def test_embedding_padding_idx():
    grads = []
    for m in (glassgrad, torch):
        w = m.tensor(A[0], requires_grad=True)
        m.embedding(w, m.tensor([1, 0, 1]), 1).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_other_reduction_int_is_none():
    a, b = (m.margin_ranking_loss(m.tensor(A), m.tensor(-A), m.tensor(A), 0.1, 5)
            for m in (glassgrad, torch))
    np.testing.assert_allclose(a.numpy(), b.numpy())


def test_vmap_at_top_level():
    f = lambda m: m.vmap(lambda r: (r * r).sum())(m.tensor(A[0]))  # noqa: E731
    np.testing.assert_allclose(f(glassgrad).numpy(), f(torch).numpy())
    assert glassgrad.vmap is glassgrad.func.vmap


def test_cond_eager_as_torch():
    # torch's side calls the branch torch.cond takes: torch.cond itself compiles through dynamo,
    # whose state earlier tests in the same process change (it then refuses the call)
    def torch_cond(pred, true_fn, false_fn, operands):
        return (true_fn if bool(pred) else false_fn)(*operands)

    grads = []
    for m, cond in ((glassgrad, glassgrad.cond), (torch, torch_cond)):
        x = m.tensor(A[0, 0], requires_grad=True)
        y = cond(x.sum() > 0, lambda a: a * 3, lambda a: a.exp(), (x,))
        z = cond(False, lambda a, b: a * b, lambda a, b: a - b, [y, x])
        z.sum().backward()
        grads.append((z.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


@pytest.mark.parametrize("pred", ["pair", "str"])
def test_cond_pred_errors_as_torch(pred):
    from tests.error_oracle import assert_raises_like_torch

    def bad(m):
        p = m.tensor([True, False]) if pred == "pair" else "a"
        return m.cond(p, lambda a: a, lambda a: a, (m.ones(2),))

    assert_raises_like_torch(bad, key=lambda msg: msg.split(",")[0])
