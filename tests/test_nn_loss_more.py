"""Issue 16's loss modules against torch: the same inputs (and weights) on both, forward values,
input gradients, repr, state_dict keys and the constructor/argument errors. The functionals'
gradcheck/gradgradcheck run in tests/op_db/loss_margin.py; the margin losses, whose torch backward
is not twice differentiable, get glassgrad's gradgradcheck here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad

_RNG = np.random.default_rng(0)
X = _RNG.standard_normal((4, 5))
Y = _RNG.standard_normal((4, 5))
Z = _RNG.standard_normal((4, 5))
W = _RNG.uniform(0.5, 2.0, 5)
CLASSES = np.array([0, 4, 2, 2])
LABELS = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [4, -1, 2, 2, 2]])
SIGNS = np.array([1.0, -1.0, -1.0, 1.0])


def _inputs(lib, names):
    out = []
    for name in names:
        value = {"x": X, "y": Y, "z": Z, "classes": CLASSES, "labels": LABELS, "signs": SIGNS,
                 "probs": np.abs(Y) / (1 + np.abs(Y)), "var": np.abs(Z) + 0.1}[name]
        out.append(lib.tensor(value, requires_grad=value.dtype.kind == "f" and name != "signs"))
    return out


# (class name, constructor kwargs (arrays become tensors), input names, repr)
CASES = [
    ("CosineEmbeddingLoss", {"margin": 0.3}, ("x", "y", "signs")),
    ("CosineEmbeddingLoss", {"reduction": "none"}, ("x", "y", "signs")),
    ("GaussianNLLLoss", {"full": True, "eps": 0.2}, ("x", "y", "var")),
    ("GaussianNLLLoss", {"reduction": "sum"}, ("x", "y", "var")),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True}, ("x", "y", "z")),
    ("TripletMarginLoss", {"reduction": "none"}, ("x", "y", "z")),
    ("TripletMarginWithDistanceLoss", {"swap": True, "margin": 2.0}, ("x", "y", "z")),
    ("MultiMarginLoss", {"p": 2, "margin": 0.8, "weight": W}, ("x", "classes")),
    ("MultiMarginLoss", {"reduction": "none"}, ("x", "classes")),
    ("MultiMarginLoss", {"size_average": False}, ("x", "classes")),
    ("MultiLabelMarginLoss", {}, ("x", "labels")),
    ("MultiLabelMarginLoss", {"reduce": False}, ("x", "labels")),
    ("MultiLabelSoftMarginLoss", {"weight": W}, ("x", "probs")),
    ("MultiLabelSoftMarginLoss", {"reduction": "sum"}, ("x", "probs")),
    ("NLLLoss2d", {"weight": W, "ignore_index": 2}, ("x", "classes")),
]


def _build(lib, name, kwargs):
    kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(lib.nn, name)(**kwargs)


@pytest.mark.parametrize("name,kwargs,inputs", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                          enumerate(CASES)])
def test_loss_module_matches_torch(name, kwargs, inputs):
    ref, mod = _build(torch, name, kwargs), _build(glassgrad, name, kwargs)
    assert repr(mod) == repr(ref)
    assert list(mod.state_dict()) == list(ref.state_dict())
    t_in, g_in = _inputs(torch, inputs), _inputs(glassgrad, inputs)
    t_out, g_out = ref(*t_in), mod(*g_in)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    t_out.sum().backward()
    g_out.sum().backward()
    for t, g in zip(t_in, g_in):
        if t.requires_grad:
            np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_nll_loss2d_warns_as_torch():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        loss = glassgrad.nn.NLLLoss2d()
    assert isinstance(loss, glassgrad.nn.NLLLoss)


def _error(fn):
    for lib in (torch, glassgrad):
        with pytest.raises(Exception) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(lib)
        yield info


ERRORS = [
    lambda m: m.nn.MultiMarginLoss(p=3),
    lambda m: m.nn.MultiMarginLoss(weight=m.ones(2, 2)),
    lambda m: m.nn.TripletMarginLoss(margin=0),
    lambda m: m.nn.TripletMarginWithDistanceLoss(margin=-1.0),
    lambda m: m.nn.functional.multi_margin_loss(m.ones(3, 4), m.tensor([0, 4, 1])),
    lambda m: m.nn.functional.multi_margin_loss(m.ones(3, 4), m.tensor([0, 1])),
    lambda m: m.nn.functional.multi_margin_loss(m.ones(3, 4), m.tensor([0, 1, 1.0])),
    lambda m: m.nn.functional.multi_margin_loss(m.ones(3, 4), m.tensor([0, 1, 1]),
                                                weight=m.ones(3)),
    lambda m: m.nn.functional.multi_margin_loss(m.ones(2, 3, 4), m.tensor([0, 1])),
    lambda m: m.nn.functional.multilabel_margin_loss(m.ones(3, 4), m.zeros(2, 4).long()),
    lambda m: m.nn.functional.multilabel_margin_loss(m.ones(3, 4), m.full((3, 4), 4)),
    lambda m: m.nn.functional.multilabel_soft_margin_loss(m.ones(3, 4), m.ones(3, 4),
                                                          reduction="x"),
    lambda m: m.nn.functional.gaussian_nll_loss(m.ones(3, 4), m.ones(3, 4), m.ones(3, 5)),
    lambda m: m.nn.functional.gaussian_nll_loss(m.ones(3, 4), m.ones(3, 4), -1.0),
    lambda m: m.nn.functional.gaussian_nll_loss(m.ones(3, 4), m.ones(3, 4), m.ones(3, 4),
                                                reduction="x"),
    lambda m: m.nn.functional.triplet_margin_with_distance_loss(m.ones(3), m.ones(3),
                                                                m.ones(1, 3)),
    lambda m: m.nn.functional.margin_ranking_loss(m.ones(3, 4), m.ones(3, 4), m.ones(3)),
    lambda m: m.nn.functional.cosine_embedding_loss(m.ones(2, 3), m.ones(2, 3), m.ones(2, 2)),
    lambda m: m.nn.functional.cosine_embedding_loss(m.ones(3), m.ones(3, 3), m.ones(3)),
    lambda m: m.nn.functional.cosine_embedding_loss(m.ones(2, 3), m.ones(2, 3), m.tensor(1.0)),
    lambda m: m.nn.HuberLoss(delta=0.0)(m.ones(2), m.ones(2)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_match_torch(k):
    t_info, g_info = _error(ERRORS[k])
    assert g_info.type is t_info.type
    key = str(t_info.value).splitlines()[0]
    assert str(g_info.value).startswith(key)


def test_margin_losses_gradgradcheck():
    """glassgrad's composites are twice differentiable (torch's kernels are not)."""
    x = glassgrad.tensor(X[:3, :4], requires_grad=True)
    # a margin of 0.4 keeps every hinge away from its kink for these scores
    for fn in (lambda x: glassgrad.nn.functional.multi_margin_loss(
                   x, glassgrad.tensor([0, 3, 1]), p=2, margin=0.4),
               lambda x: glassgrad.nn.functional.multilabel_margin_loss(
                   x, glassgrad.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]]))):
        assert glassgrad.autograd.gradcheck(fn, (x,))
        assert glassgrad.autograd.gradgradcheck(fn, (x,))
