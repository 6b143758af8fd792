"""Non-reentrant checkpoint recomputation as torch's (issue 15, lane agrad): early stop and its
context manager, backward inside the checkpointed function, a second backward started from a
hook, autocast replayed, the debug hint, and the reentrant variant's refusal of ``grad()``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import glassgrad
import glassgrad.utils.checkpoint as gcp


def _run(lib, cp, early_stop):
    """How often the checkpointed function's tail runs, and the gradient."""
    calls = [0]

    def clone(x):
        calls[0] += 1
        return x.clone()

    def fn(x):
        return clone(x.sin().cos())

    a = lib.tensor(1.0, requires_grad=True)
    with cp.set_checkpoint_early_stop(early_stop):
        out = cp.checkpoint(fn, a, use_reentrant=False)
    out.backward()
    return calls[0], float(a.grad)


@pytest.mark.parametrize("early_stop", [True, False])
def test_early_stop_is_taken_when_checkpoint_is_called(early_stop):
    assert _run(glassgrad, gcp, early_stop) == pytest.approx(_run(torch, tcp, early_stop))


def _nested(lib, cp):
    """A checkpointed function that itself calls autograd.grad, differentiated twice."""
    def g(x):
        a = x.sin().exp().sin()
        (ga,) = lib.autograd.grad(a, x, create_graph=True)
        return ga * x.cos()

    x = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
    with cp.set_checkpoint_early_stop(False):
        out = cp.checkpoint(g, x, use_reentrant=False)
    (gx,) = lib.autograd.grad(out, x, create_graph=True)
    (ggx,) = lib.autograd.grad(gx, x)
    return out.item(), gx.item(), ggx.item()


def test_backward_inside_the_checkpointed_function():
    np.testing.assert_allclose(_nested(glassgrad, gcp), _nested(torch, tcp), rtol=1e-12)


def _reentrant_hook(lib, cp):
    a = lib.tensor(1.0, requires_grad=True)

    def fn(a):
        x = a.sin().cos()
        return x, x.sin()

    x, out = cp.checkpoint(fn, a, use_reentrant=False)
    out.grad_fn.register_hook(lambda *_: x.backward(retain_graph=True))
    out.backward(retain_graph=True)
    return float(a.grad)


def test_a_backward_started_by_a_hook_recomputes_for_itself():
    assert _reentrant_hook(glassgrad, gcp) == pytest.approx(_reentrant_hook(torch, tcp))


def test_unpacking_twice_in_one_backward_raises_torchs_error():
    msgs = []
    for lib, cp in ((torch, tcp), (glassgrad, gcp)):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                ctx.saved_tensors
                with pytest.raises(RuntimeError) as info:
                    ctx.saved_tensors
                msgs.append(str(info.value))
                return grad * 2

        x = lib.tensor(1.0, requires_grad=True)
        cp.checkpoint(lambda t: Twice.apply(t * 1), x, use_reentrant=False).backward()
    key = "Unpack is being triggered for a tensor that was already unpacked once"
    assert key in msgs[0] and key in msgs[1]


def test_autocast_state_is_replayed_in_recomputation():
    dtypes = []
    for lib, cp in ((torch, tcp), (glassgrad, gcp)):
        seen = []

        def foo(x, y):
            z = lib.mm(x, y)
            seen.append(str(z.dtype).split(".")[-1])
            return z

        x, y = lib.ones(3, 3, requires_grad=True), lib.ones(3, 3, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16), cp.set_checkpoint_early_stop(False):
            loss = cp.checkpoint(foo, x, y, use_reentrant=False).float().sum()
        loss.backward()  # recomputes outside the autocast block
        dtypes.append(seen)
    assert dtypes[1] == dtypes[0] == ["bfloat16", "bfloat16"]


def test_debug_hint_and_reentrant_grad_refusal():
    for lib, cp in ((torch, tcp), (glassgrad, gcp)):
        calls = [0]

        def fn(x):
            calls[0] += 1
            return x.sin() if calls[0] == 1 else x.reshape(1, 1).sin()

        a = lib.ones(1, requires_grad=True)
        with pytest.raises(RuntimeError, match="because you passed `debug=True` to checkpoint"):
            with cp.set_checkpoint_debug_enabled(True):
                out = cp.checkpoint(fn, a, use_reentrant=False)
            out.sum().backward()
        b = cp.checkpoint(lib.exp, a, use_reentrant=True).sum()
        with pytest.raises(RuntimeError, match="torch.utils.checkpoint is incompatible with "
                           r"\.grad\(\)"):
            lib.autograd.grad(b, (a,))
