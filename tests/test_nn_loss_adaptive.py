"""AdaptiveLogSoftmaxWithLoss against torch from copied weights: forward (output, loss), input
and parameter gradients, log_prob, predict, repr, state_dict keys and errors."""

from __future__ import annotations

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
