"""The in-place-modified-saved-tensor error: raised once (no chained copy), and the optimizer
hint only where an optimizer step is the evidence. torch's key phrase is checked against torch."""
import traceback

import pytest
import torch as ref

import glassgrad as torch


def _inplace_traceback(lib, step):
    w = lib.randn(3, requires_grad=True)
    b = w * 2
    c = (b.sin() * w).sum()
    if step:
        lib.optim.SGD([w], lr=0.1).step() if w.grad is not None else None
        w.grad = lib.ones(3)
        lib.optim.SGD([w], lr=0.1).step()
    else:
        b.add_(1)
    try:
        c.backward()
    except RuntimeError:
        return traceback.format_exc()
    pytest.fail("no error raised")


@pytest.mark.parametrize("step", [False, True])
def test_inplace_error_raised_once(step):
    text = _inplace_traceback(torch, step)
    key = "modified by an inplace operation"
    assert key in _inplace_traceback(ref, step)
    assert text.count(key) == 1
    assert "During handling" not in text


def test_no_optimizer_hint_without_a_step():
    assert "GAN" not in _inplace_traceback(torch, step=False)


def test_optimizer_hint_after_a_step():
    assert "optimizer" in _inplace_traceback(torch, step=True).split("glassgrad:")[-1]
