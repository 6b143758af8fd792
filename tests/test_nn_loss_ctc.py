"""CTCLoss / F.ctc_loss / torch.ctc_loss against torch: losses and gradients (through
log_softmax, as torch's gradient assumes) for every target layout, reduction and
zero_infinity, torch's argument errors, and torch's refusal of a second derivative."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

_RNG = np.random.default_rng(2)
LOGITS = _RNG.standard_normal((8, 3, 6))
PADDED = np.array([[1, 2, 2, 5], [3, 1, 0, 0], [4, 4, 0, 0]])


def _run(lib, module_kwargs, targets, input_lengths, target_lengths):
    x = lib.tensor(LOGITS, requires_grad=True)
    loss = lib.nn.CTCLoss(**module_kwargs)
    out = loss(x.log_softmax(2), lib.tensor(targets), input_lengths, target_lengths)
    out.backward(lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape))))
    return repr(loss), out.detach().numpy(), x.grad.numpy()


CASES = [
    ({}, PADDED, (8, 7, 5), (4, 2, 2)),
    ({"reduction": "sum", "blank": 5}, PADDED[:, :3] % 5, (8, 8, 8), (3, 2, 1)),
    ({"reduction": "none"}, np.array([1, 2, 2, 5, 3, 1, 4, 4]), (8, 7, 5), (4, 2, 2)),
    ({"reduction": "none", "zero_infinity": True}, PADDED, (3, 7, 5), (4, 2, 0)),
    ({"reduction": "mean", "zero_infinity": True}, PADDED, (3, 0, 5), (4, 0, 2)),
]


@pytest.mark.parametrize("k", range(len(CASES)))
@pytest.mark.parametrize("as_tensors", [False, True])
def test_ctc_loss_matches_torch(k, as_tensors):
    kwargs, targets, ilen, tlen = CASES[k]
    results = []
    for lib in (torch, glassgrad):
        lengths = (lib.tensor(ilen), lib.tensor(tlen)) if as_tensors else (ilen, tlen)
        results.append(_run(lib, kwargs, targets, *lengths))
    (t_repr, t_out, t_grad), (g_repr, g_out, g_grad) = results
    assert g_repr == t_repr
    np.testing.assert_allclose(g_out, t_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-9, atol=1e-12)


def test_torch_ctc_loss_int_reduction_and_unbatched():
    lp_t = torch.tensor(LOGITS).log_softmax(2)
    lp_g = glassgrad.tensor(LOGITS).log_softmax(2)
    for args in ((), (0, 0), (0, 1), (0, 2)):
        t = torch.ctc_loss(lp_t, torch.tensor(PADDED), (8, 7, 5), (4, 2, 2), *args)
        g = glassgrad.ctc_loss(lp_g, glassgrad.tensor(PADDED), (8, 7, 5), (4, 2, 2), *args)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10)
    t = torch.nn.functional.ctc_loss(lp_t[:, 1], torch.tensor([3, 1]), torch.tensor(7),
                                     torch.tensor(2), reduction="none")
    g = glassgrad.nn.functional.ctc_loss(lp_g[:, 1], glassgrad.tensor([3, 1]),
                                         glassgrad.tensor(7), glassgrad.tensor(2),
                                         reduction="none")
    assert tuple(g.shape) == tuple(t.shape) == ()
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10)


ERRORS = [
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), (8, 7, 5), (5, 2, 2)),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), (8, 9, 5), (4, 2, 2)),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), (8, -1, 5), (4, 2, 2)),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), (8, 7), (4, 2, 2)),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), (8, 7, 5), (4, 2)),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), (8, 7, 5), (4, 2, 2), blank=6),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor([1, 2, 3]), (8, 7, 5), (4, 2, 2)),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), (8, 7, 5), (4, 2, 2),
                                           reduction="x"),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), m.tensor([8.0, 7, 5]),
                                           m.tensor([4, 2, 2])),
    lambda m, lp: m.nn.functional.ctc_loss(lp, m.tensor(PADDED), m.tensor([8, 7, 5]),
                                           [4, 2, 2]),
    lambda m, lp: m.nn.functional.ctc_loss(lp.long(), m.tensor(PADDED), (8, 7, 5), (4, 2, 2)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_ctc_errors_match_torch(k):
    with pytest.raises(Exception) as t_info:
        ERRORS[k](torch, torch.tensor(LOGITS).log_softmax(2))
    with pytest.raises(t_info.type) as g_info:
        ERRORS[k](glassgrad, glassgrad.tensor(LOGITS).log_softmax(2))
    assert str(g_info.value).startswith(str(t_info.value).splitlines()[0])


def test_ctc_double_backward_refused_as_torch():
    for lib in (torch, glassgrad):
        x = lib.tensor(LOGITS, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor(PADDED), (8, 7, 5),
                                          (4, 2, 2))
        (grad,) = lib.autograd.grad(loss, x, create_graph=True)
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not"):
            lib.autograd.grad(grad.sum(), x)


def test_ctc_empty_targets_and_inputs_match_torch():
    for ilen, tlen, targets in (((8, 8, 8), (0, 0, 0), np.zeros(0, dtype=np.int64)),
                                ((0, 0, 0), (0, 0, 0), np.ones((3, 2), dtype=np.int64)),
                                ((0, 0, 0), (1, 1, 1), np.ones((3, 2), dtype=np.int64)),
                                ((8, 5, 8), (0, 3, 0), np.array([1, 2, 2]))):
        out = []
        for lib in (torch, glassgrad):
            x = lib.tensor(LOGITS, requires_grad=True)
            loss = lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor(targets),
                                              lib.tensor(ilen), lib.tensor(tlen),
                                              reduction="none", zero_infinity=False)
            loss.sum().backward()
            out.append((loss.detach().numpy(), x.grad.numpy()))
        np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10)
        np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-9, atol=1e-12)
