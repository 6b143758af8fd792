"""``glassgrad.utils.checkpoint`` against ``torch.utils.checkpoint``: gradients equal the
un-checkpointed ones and torch's, the graph really keeps fewer saved tensors, dropout replays its
mask, double backward, ``CheckpointError`` and ``checkpoint_sequential``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import glassgrad
import glassgrad.utils.checkpoint as gcp
from glassgrad.autograd.graph import SavedTensor


def _models():
    torch.manual_seed(0)
    layers = [torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.GELU(),
              torch.nn.Linear(16, 16), torch.nn.Sigmoid(), torch.nn.Linear(16, 3)]
    tm = torch.nn.Sequential(*layers).double()
    gm = glassgrad.nn.Sequential(
        glassgrad.nn.Linear(6, 16), glassgrad.nn.Tanh(), glassgrad.nn.Linear(16, 16),
        glassgrad.nn.GELU(), glassgrad.nn.Linear(16, 16), glassgrad.nn.Sigmoid(),
        glassgrad.nn.Linear(16, 3)).double()
    gm.load_state_dict({k: glassgrad.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return tm, gm


X = np.random.default_rng(0).standard_normal((5, 6))


def saved_in_graph(out) -> tuple[int, int]:
    """(count, bytes) of the tensors the graph behind ``out`` holds for backward: walks
    ``grad_fn.next_functions`` and inspects each node's ``_saved``."""
    count = nbytes = 0
    seen, stack = set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for s in node._saved or ():
            if type(s) is SavedTensor:
                held = s._tensor if s._unpack_hook is None else s._packed
                if isinstance(held, glassgrad.Tensor):
                    count += 1
                    nbytes += held.nbytes
        stack.extend(n for n, _ in node.next_functions)
    return count, nbytes


def _grads(model, loss):
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_match_plain_and_torch(use_reentrant):
    tm, gm = _models()
    gx = glassgrad.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    head, tail = gm[:4], gm[4:]
    out = gcp.checkpoint(head, gx, use_reentrant=use_reentrant)
    (tail(out) ** 2).sum().backward()
    ours = [p.grad.numpy().copy() for p in gm.parameters()] + [gx.grad.numpy().copy()]
    for p in gm.parameters():
        p.grad = None
    gx.grad = None
    (gm(gx) ** 2).sum().backward()
    plain = [p.grad.numpy() for p in gm.parameters()] + [gx.grad.numpy()]
    tout = tcp.checkpoint(tm[:4], tx, use_reentrant=use_reentrant)
    (tm[4:](tout) ** 2).sum().backward()
    theirs = [p.grad.numpy() for p in tm.parameters()] + [tx.grad.numpy()]
    for a, b, c in zip(ours, plain, theirs):
        np.testing.assert_allclose(a, b, atol=1e-12)
        np.testing.assert_allclose(a, c, atol=1e-10)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_saved_tensors_really_drop(use_reentrant):
    _, gm = _models()
    gx = glassgrad.tensor(X, requires_grad=True)
    plain = gm(gx).sum()
    segments = [gm[0:2], gm[2:4], gm[4:6], gm[6:]]
    h = gx
    for seg in segments:
        h = gcp.checkpoint(seg, h, use_reentrant=use_reentrant)
    ckpt = h.sum()
    n_plain, b_plain = saved_in_graph(plain)
    n_ckpt, b_ckpt = saved_in_graph(ckpt)
    assert n_plain >= 2 * len(segments)  # every segment saves something without checkpointing
    # the non-reentrant graph keeps every node but no saved data; the reentrant one keeps one node
    # per segment holding only that segment's input
    assert n_ckpt <= (len(segments) if use_reentrant else 0)
    assert b_ckpt < b_plain / 3
    ckpt.backward()  # and it still computes the gradients after that
    assert all(p.grad is not None for p in gm.parameters())


def test_dropout_mask_is_replayed():
    glassgrad.manual_seed(3)
    w = glassgrad.tensor(np.random.default_rng(1).standard_normal((6, 6)), requires_grad=True)
    x = glassgrad.tensor(X)

    def block(t):
        return glassgrad.nn.functional.dropout((t @ w).tanh(), 0.5) @ w

    glassgrad.manual_seed(7)
    gcp.checkpoint(block, x, use_reentrant=False).pow(2).sum().backward()
    ckpt = w.grad.numpy().copy()
    w.grad = None
    glassgrad.manual_seed(7)
    block(x).pow(2).sum().backward()
    np.testing.assert_allclose(ckpt, w.grad.numpy(), atol=1e-12)
    # without preserve_rng_state the recomputation draws another mask
    w.grad = None
    glassgrad.manual_seed(7)
    gcp.checkpoint(block, x, use_reentrant=False, preserve_rng_state=False).pow(2).sum().backward()
    assert not np.allclose(ckpt, w.grad.numpy())


def test_autograd_grad_kwargs_and_double_backward_match_torch():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal(4), rng.standard_normal((4, 4))

    def run(lib, cp):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w, requires_grad=True)

        def f(a, scale=1.0):
            return ((wt @ a).sin() * a).sum() * scale

        y = cp.checkpoint(f, xt, use_reentrant=False, scale=2.0)
        gx, gw = lib.autograd.grad(y, (xt, wt), create_graph=True)
        (hx,) = lib.autograd.grad((gx ** 2).sum() + gw.sum(), xt)
        return gx, gw, hx

    for a, b in zip(run(glassgrad, gcp), run(torch, tcp)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-10)


def test_nested_checkpoints_and_retain_graph():
    rng = np.random.default_rng(4)
    x = glassgrad.tensor(rng.standard_normal(5), requires_grad=True)

    def inner(t):
        return t.exp() * t

    def outer(t):
        return gcp.checkpoint(inner, t.sin(), use_reentrant=False).cos()

    y = gcp.checkpoint(outer, x, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()  # a second backward recomputes again
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, atol=1e-12)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    (tx.sin().exp() * tx.sin()).cos().sum().backward()
    np.testing.assert_allclose(first, tx.grad.numpy(), atol=1e-12)


def test_checkpoint_error_on_different_metadata():
    calls = []

    def changing(t):
        calls.append(1)
        return (t[: 4 - len(calls)] * 2).exp().sum()

    x = glassgrad.tensor(np.ones(4), requires_grad=True)
    y = gcp.checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(gcp.CheckpointError, match="Recomputed values for the following tensors "
                                                  "have different metadata than during the "
                                                  "forward pass"):
        y.backward()
    x2 = torch.ones(4, requires_grad=True)
    calls.clear()
    y2 = tcp.checkpoint(lambda t: changing(t), x2, use_reentrant=False)
    with pytest.raises(tcp.CheckpointError, match="different metadata"):
        y2.backward()
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        gcp.checkpoint(changing, x, use_reentrant=False, determinism_check="strict")


def test_use_reentrant_warning_and_errors():
    x = glassgrad.ones(3, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed"):
        gcp.checkpoint(lambda t: t * 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        gcp.checkpoint(lambda t, scale: t * scale, x, use_reentrant=True, scale=2)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        gcp.checkpoint(lambda t: t * 2, glassgrad.ones(3), use_reentrant=True)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential_matches_torch(use_reentrant):
    tm, gm = _models()
    gx = glassgrad.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = gcp.checkpoint_sequential(gm, 3, gx, use_reentrant=use_reentrant)
        tout = tcp.checkpoint_sequential(tm, 3, tx, use_reentrant=use_reentrant)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-12)
    out.sum().backward()
    tout.sum().backward()
    for p, q in zip(gm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), atol=1e-10)
