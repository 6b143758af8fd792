"""Layers against torch: Linear, Bilinear, norms, Embedding, Dropout, Flatten; weights copied from
torch, outputs, input gradients, parameter gradients and buffers compared."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.nn_oracle import check_module
from tests.oracle import assert_close, copy_params

R = np.random.default_rng(0)

LAYERS = [
    ("Linear", lambda m: m.nn.Linear(5, 3), [R.standard_normal((4, 5))], True),
    ("Linear-3d-input", lambda m: m.nn.Linear(5, 3), [R.standard_normal((2, 4, 5))], True),
    ("Linear-no-bias", lambda m: m.nn.Linear(5, 3, bias=False), [R.standard_normal((4, 5))],
     True),
    ("Linear-1d-input", lambda m: m.nn.Linear(5, 3), [R.standard_normal(5)], True),
    ("Bilinear", lambda m: m.nn.Bilinear(3, 4, 2),
     [R.standard_normal((5, 3)), R.standard_normal((5, 4))], True),
    ("BatchNorm1d-2d", lambda m: m.nn.BatchNorm1d(3), [R.standard_normal((6, 3))], True),
    ("BatchNorm1d-3d", lambda m: m.nn.BatchNorm1d(3, momentum=None),
     [R.standard_normal((4, 3, 5))], True),
    ("BatchNorm2d", lambda m: m.nn.BatchNorm2d(3), [R.standard_normal((2, 3, 4, 4))], True),
    ("BatchNorm2d-no-affine", lambda m: m.nn.BatchNorm2d(3, affine=False, eps=1e-3),
     [R.standard_normal((2, 3, 2, 2))], True),
    ("BatchNorm2d-no-stats", lambda m: m.nn.BatchNorm2d(3, track_running_stats=False),
     [R.standard_normal((2, 3, 2, 2))], True),
    ("BatchNorm2d-no-bias", lambda m: m.nn.BatchNorm2d(3, bias=False),
     [R.standard_normal((2, 3, 2, 2))], False),
    ("BatchNorm3d", lambda m: m.nn.BatchNorm3d(2), [R.standard_normal((2, 2, 2, 2, 3))], False),
    ("LayerNorm", lambda m: m.nn.LayerNorm(5), [R.standard_normal((3, 5))], True),
    ("LayerNorm-2d", lambda m: m.nn.LayerNorm((4, 5), eps=1e-3),
     [R.standard_normal((2, 4, 5))], True),
    ("LayerNorm-no-affine", lambda m: m.nn.LayerNorm(5, elementwise_affine=False),
     [R.standard_normal((3, 5))], True),
    ("LayerNorm-no-bias", lambda m: m.nn.LayerNorm(5, bias=False), [R.standard_normal((3, 5))],
     False),
    ("GroupNorm", lambda m: m.nn.GroupNorm(2, 4), [R.standard_normal((3, 4, 5))], True),
    ("GroupNorm-4d", lambda m: m.nn.GroupNorm(3, 6, affine=False),
     [R.standard_normal((2, 6, 2, 2))], True),
    ("GroupNorm-no-bias", lambda m: m.nn.GroupNorm(2, 4, bias=False),
     [R.standard_normal((3, 4, 5))], False),
    ("InstanceNorm1d", lambda m: m.nn.InstanceNorm1d(3, affine=True),
     [R.standard_normal((2, 3, 5))], False),
    ("InstanceNorm2d", lambda m: m.nn.InstanceNorm2d(3), [R.standard_normal((2, 3, 3, 3))], False),
    ("RMSNorm", lambda m: m.nn.RMSNorm(5, eps=1e-6), [R.standard_normal((3, 5))], True),
    ("Flatten", lambda m: m.nn.Flatten(), [R.standard_normal((2, 3, 4))], False),
    ("Flatten-range", lambda m: m.nn.Flatten(0, 1), [R.standard_normal((2, 3, 4))], False),
    ("Unflatten", lambda m: m.nn.Unflatten(1, (2, 3)), [R.standard_normal((4, 6))], False),
    ("Identity", lambda m: m.nn.Identity(3, foo=1), [R.standard_normal((2, 3))], False),
    ("Sequential", lambda m: m.nn.Sequential(m.nn.Linear(4, 8), m.nn.LeakyReLU(0.2),
                                             m.nn.Linear(8, 1), m.nn.Sigmoid()),
     [R.standard_normal((5, 4))], True),
]


@pytest.mark.parametrize("name,make,inputs,double", LAYERS, ids=[x[0] for x in LAYERS])
def test_layer_matches_torch(name, make, inputs, double):
    check_module(make, inputs, double=double, what=name)


@pytest.mark.parametrize("name,make,inputs,double", LAYERS, ids=[x[0] for x in LAYERS])
def test_layer_repr_and_state_dict_keys_match_torch(name, make, inputs, double):
    ours, theirs = make(glassgrad), make(torch)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]


@pytest.mark.parametrize("name,make,inputs,double", LAYERS[5:12], ids=[x[0] for x in LAYERS[5:12]])
def test_norm_layers_eval_mode(name, make, inputs, double):
    check_module(make, inputs, double=False, train=False, what=f"{name} eval")


@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (5, 3)), ("BatchNorm2d", (4, 3, 2, 2))])
def test_batchnorm_running_stats_three_steps(cls, shape, momentum):
    t_bn = getattr(torch.nn, cls)(3, momentum=momentum).double()
    g_bn = getattr(glassgrad.nn, cls)(3, momentum=momentum).double()
    with torch.no_grad():
        t_bn.weight.uniform_(0.5, 1.5)
        t_bn.bias.uniform_(-0.5, 0.5)
    copy_params(t_bn, g_bn)
    rng = np.random.default_rng(3)
    for step in range(3):
        x = rng.standard_normal(shape) * (step + 1) + step
        xt = torch.tensor(x, requires_grad=True)
        xg = glassgrad.tensor(x, requires_grad=True)
        ot, og = t_bn(xt), g_bn(xg)
        assert_close(og, ot, 1e-10, 1e-8, what=f"step {step} output")
        (ot * ot).sum().backward()
        (og * og).sum().backward()
        assert_close(xg.grad, xt.grad, 1e-9, 1e-7, what=f"step {step} input grad")
        assert_close(g_bn.weight.grad, t_bn.weight.grad, 1e-9, 1e-7)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            assert_close(getattr(g_bn, name), getattr(t_bn, name), 1e-12, 1e-10,
                         what=f"step {step} {name}")
    assert g_bn.num_batches_tracked.dtype == glassgrad.int64
    t_bn.eval()
    g_bn.eval()
    x = rng.standard_normal(shape)
    assert_close(g_bn(glassgrad.tensor(x)), t_bn(torch.tensor(x)), 1e-10, 1e-8, what="eval")


def test_batchnorm_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        glassgrad.nn.BatchNorm2d(3)(glassgrad.ones(2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        glassgrad.nn.BatchNorm1d(3)(glassgrad.ones(1, 3))


def test_layer_norm_shape_error_matches_torch():
    with pytest.raises(RuntimeError) as ours:
        glassgrad.nn.LayerNorm(4)(glassgrad.ones(2, 3))
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.LayerNorm(4)(torch.ones(2, 3))
    assert str(ours.value) == str(theirs.value)


def test_embedding_matches_torch():
    idx = np.array([[1, 0, 3], [3, 3, 4]])
    for pad in (None, 3, -2):
        t_emb = torch.nn.Embedding(6, 4, padding_idx=pad).double()
        g_emb = glassgrad.nn.Embedding(6, 4, padding_idx=pad).double()
        assert repr(g_emb) == repr(t_emb)
        with torch.no_grad():
            t_emb.weight.normal_()  # the padding row is not zero any more: forward still reads it
        copy_params(t_emb, g_emb)
        ot, og = t_emb(torch.tensor(idx)), g_emb(glassgrad.tensor(idx))
        assert_close(og, ot)
        cot = np.random.default_rng(1).standard_normal(og.shape)
        ot.backward(torch.tensor(cot))
        og.backward(glassgrad.tensor(cot))
        assert_close(g_emb.weight.grad, t_emb.weight.grad, what=f"padding_idx={pad}")


def test_embedding_default_init_zeroes_padding_row():
    emb = glassgrad.nn.Embedding(5, 3, padding_idx=2)
    assert not emb.weight.detach().numpy()[2].any()
    assert emb.weight.detach().numpy()[[0, 1, 3, 4]].std() > 0.3


def test_embedding_max_norm_and_from_pretrained():
    w = np.random.default_rng(2).standard_normal((5, 3)) * 3
    idx = np.array([0, 2, 2, 4])
    t_emb = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, max_norm=1.5)
    g_emb = glassgrad.nn.Embedding.from_pretrained(glassgrad.tensor(w), freeze=False, max_norm=1.5)
    assert_close(g_emb(glassgrad.tensor(idx)), t_emb(torch.tensor(idx)), 1e-6, 1e-6)
    assert_close(g_emb.weight, t_emb.weight, 1e-6, 1e-6, what="renormalised weight")
    frozen = glassgrad.nn.Embedding.from_pretrained(glassgrad.tensor(w))
    assert not frozen.weight.requires_grad
    assert repr(frozen) == repr(torch.nn.Embedding.from_pretrained(torch.tensor(w)))


def test_embedding_rejects_float_indices():
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        glassgrad.nn.Embedding(3, 2)(glassgrad.tensor([0.0, 1.0]))


@pytest.mark.parametrize("p", [0.0, 0.2, 0.5, 1.0])
def test_dropout_statistics(p):
    glassgrad.manual_seed(0)
    x = glassgrad.ones(200, 500, requires_grad=True)
    drop = glassgrad.nn.Dropout(p)
    out = drop(x)
    arr = out.detach().numpy()
    kept = arr != 0
    # the same statistics torch's dropout has: zero fraction ~ p, survivors scaled by 1/(1-p)
    t_arr = torch.nn.Dropout(p)(torch.ones(200, 500)).numpy()
    assert abs(kept.mean() - (t_arr != 0).mean()) < 0.01
    if p < 1:
        np.testing.assert_allclose(arr[kept], t_arr[t_arr != 0][0])
        assert abs(arr.mean() - 1.0) < 0.02
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), arr)  # gradient is the scaled mask
    drop.eval()
    assert drop(x) is x
    assert repr(drop) == repr(torch.nn.Dropout(p))


def test_dropout_uses_glassgrad_generator():
    glassgrad.manual_seed(5)
    a = glassgrad.nn.functional.dropout(glassgrad.ones(50), 0.5).numpy().copy()
    glassgrad.manual_seed(5)
    b = glassgrad.nn.functional.dropout(glassgrad.ones(50), 0.5).numpy()
    np.testing.assert_array_equal(a, b)


def test_dropout2d_drops_whole_channels():
    glassgrad.manual_seed(1)
    out = glassgrad.nn.Dropout2d(0.5)(glassgrad.ones(8, 16, 3, 3)).numpy()
    per_channel = out.reshape(8, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    t_out = torch.nn.Dropout2d(0.5)(torch.ones(8, 16, 3, 3)).numpy()
    assert set(np.unique(out)) == set(np.unique(t_out))


def test_dropout_bad_p():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got"):
        glassgrad.nn.Dropout(1.5)


def test_default_init_distributions_match_torch():
    # Linear / Bilinear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias
    for make in (lambda m: m.nn.Linear(400, 300), lambda m: m.nn.Bilinear(50, 20, 300)):
        ours, theirs = make(glassgrad), make(torch)
        for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            a, b = a.detach().numpy(), b.detach().numpy()
            assert a.dtype == b.dtype
            bound = np.abs(b).max()
            assert np.abs(a).max() <= bound * 1.01 and np.abs(a).max() > bound * 0.9, name
            assert abs(a.std() - b.std()) < 0.08 * b.std(), name
    ours, theirs = glassgrad.nn.Embedding(100, 50), torch.nn.Embedding(100, 50)
    assert abs(ours.weight.detach().numpy().std() - theirs.weight.detach().numpy().std()) < 0.05
    assert_close(glassgrad.nn.PReLU(3).weight, torch.nn.PReLU(3).weight)
    for make in (lambda m: m.nn.BatchNorm2d(3), lambda m: m.nn.LayerNorm(4),
                 lambda m: m.nn.GroupNorm(2, 4), lambda m: m.nn.RMSNorm(3)):
        ours, theirs = make(glassgrad).state_dict(), make(torch).state_dict()
        for key in theirs:
            assert_close(ours[key], theirs[key], 0, 0, what=key)
