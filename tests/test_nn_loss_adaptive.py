"""AdaptiveLogSoftmaxWithLoss and LinearCrossEntropyLoss against torch from copied weights:
forward, input and parameter gradients, log_prob, predict, repr, state_dict keys and errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import glassgrad

_RNG = np.random.default_rng(4)
X = _RNG.standard_normal((9, 16))
TARGET = np.array([0, 3, 5, 7, 11, 14, 19, 2, 12])


def _pair(**kwargs):
    torch.manual_seed(0)
    ref = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], **kwargs).double()
    mod = glassgrad.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], **kwargs).double()
    mod.load_state_dict({k: glassgrad.tensor(v.detach().numpy().copy())
                         for k, v in ref.state_dict().items()})
    return ref, mod


@pytest.mark.parametrize("kwargs", [{}, {"div_value": 2.0, "head_bias": True}])
def test_adaptive_softmax_matches_torch(kwargs):
    ref, mod = _pair(**kwargs)
    assert repr(mod) == repr(ref)
    assert list(mod.state_dict()) == list(ref.state_dict())
    xt = torch.tensor(X, requires_grad=True)
    xg = glassgrad.tensor(X, requires_grad=True)
    t_out, g_out = ref(xt, torch.tensor(TARGET)), mod(xg, glassgrad.tensor(TARGET))
    assert type(g_out).__name__ == "_ASMoutput" and g_out._fields == t_out._fields
    for a, b in zip(g_out, t_out):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10)
    (t_out.loss + t_out.output.sum()).backward()
    (g_out.loss + g_out.output.sum()).backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (name, p), q in zip(mod.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)
    np.testing.assert_allclose(mod.log_prob(xg).detach().numpy(),
                               ref.log_prob(xt).detach().numpy(), rtol=1e-10)
    np.testing.assert_array_equal(mod.predict(xg).numpy(), ref.predict(xt).numpy())
    single_t, single_g = ref(xt[3], torch.tensor(TARGET[3])), mod(xg[3], glassgrad.tensor(TARGET[3]))
    assert tuple(single_g.output.shape) == tuple(single_t.output.shape) == ()
    np.testing.assert_allclose(single_g.loss.detach().numpy(), single_t.loss.detach().numpy())


def test_adaptive_softmax_predict_paths():
    ref, mod = _pair(head_bias=True)
    for bias in (-50.0, 50.0, None):  # every row in the shortlist, none, and a mix
        with torch.no_grad():
            if bias is not None:
                ref.head.bias[:4] = bias
        mod.head.bias._array[...] = ref.head.bias.detach().numpy()
        np.testing.assert_array_equal(mod.predict(glassgrad.tensor(X)).numpy(),
                                      ref.predict(torch.tensor(X)).numpy())


@pytest.mark.parametrize("fn", [
    lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, []),
    lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3]),
    lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10]),
    lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6])(m.ones(4, 8), m.tensor([1, 2, 3])),
    lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6])(m.ones(4, 8), m.tensor([1, 12, 3, 0])),
    lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6])(m.ones(4, 8), m.ones(4, 2).long()),
    lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6])(m.ones(4, 8), m.tensor(1)),
])
def test_adaptive_softmax_errors_match_torch(fn):
    with pytest.raises(Exception) as t_info:
        fn(torch)
    with pytest.raises(t_info.type) as g_info:
        fn(glassgrad)
    assert str(g_info.value).split(" size")[0] == str(t_info.value).split(" size")[0]


# LinearCrossEntropyLoss / F.linear_cross_entropy (torch 2.13), from copied weights
@pytest.mark.parametrize("kwargs,target", [
    ({"bias": True}, np.array([0, 3, 5, 1, 2, 4, 4, 0, 1])),
    ({"out_features": (2,), "bias": True, "label_smoothing": 0.1},
     np.array([[0, 1], [3, 5], [5, 5], [1, 0], [2, 2], [4, 3], [4, 4], [0, 1], [1, 2]])),
    ({"weight": np.arange(1.0, 7.0), "ignore_index": 4, "reduction": "sum",
      "options": "chunked"}, np.array([0, 3, 5, 1, 2, 4, 4, 0, 1])),
    ({"reduction": "none", "options": "chunked"}, np.array([0, 3, 5, 1, 2, 4, 4, 0, 1])),
])
def test_linear_cross_entropy_loss_matches_torch(kwargs, target):
    mods = []
    for lib in (torch, glassgrad):
        kw = dict(kwargs)
        if kw.get("options") == "chunked":
            kw["options"] = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=4)
        if "weight" in kw:
            kw["weight"] = lib.tensor(kw["weight"])
        torch.manual_seed(0)
        mods.append(getattr(lib.nn, "LinearCrossEntropyLoss")(16, 6, dtype=lib.float64, **kw))
    ref, mod = mods
    mod.load_state_dict({k: glassgrad.tensor(v.detach().numpy().copy())
                         for k, v in ref.state_dict().items()})
    assert repr(mod) == repr(ref)
    xt, xg = torch.tensor(X, requires_grad=True), glassgrad.tensor(X, requires_grad=True)
    t_out, g_out = ref(xt, torch.tensor(target)), mod(xg, glassgrad.tensor(target))
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10)
    t_out.sum().backward()
    g_out.sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mod.linear.weight.grad.numpy(), ref.linear.weight.grad.numpy(),
                               rtol=1e-9, atol=1e-12)


def test_linear_cross_entropy_options_warn_and_errors():
    for lib in (torch, glassgrad):
        x, w = lib.ones(4, 3, dtype=lib.float64), lib.ones(5, 2, 3, dtype=lib.float64)
        with pytest.warns(UserWarning, match="``options`` ignored; chunked path needs"):
            lib.nn.functional.linear_cross_entropy(
                x, w, lib.zeros(4, 2, dtype=lib.int64), options=lib.nn.LinearCrossEntropyOptions())
    for fn in (lambda m: m.nn.LinearCrossEntropyOptions(acc_policy="x"),
               lambda m: m.nn.LinearCrossEntropyOptions(chunking_method="foo"),
               lambda m: m.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
               lambda m: m.nn.LinearCrossEntropyLoss(3, 4, weight=m.ones(3)),
               lambda m: m.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=2.0),
               lambda m: m.nn.functional.linear_cross_entropy(m.ones(2, 3), m.ones(4, 2),
                                                              m.tensor([0, 1])),
               lambda m: m.nn.functional.linear_cross_entropy(m.ones(3), m.ones(4, 2, 3),
                                                              m.tensor(0)),
               lambda m: m.nn.functional.linear_cross_entropy(m.ones(2, 3), m.ones(4, 3),
                                                              m.ones(2, 4), ignore_index=1)):
        with pytest.raises(Exception) as t_info:
            fn(torch)
        with pytest.raises(t_info.type) as g_info:
            fn(glassgrad)
        assert str(g_info.value).startswith(str(t_info.value).splitlines()[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        glassgrad.nn.LinearCrossEntropyOptions().batch_chunk_size = 3
