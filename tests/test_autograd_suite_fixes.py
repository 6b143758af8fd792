"""Behaviours PyTorch's own autograd suite checks that glassgrad lacked (issue 15, lane agrad),
each run on torch and on glassgrad alike."""

from __future__ import annotations

import pytest
import torch

import glassgrad

LIBS = pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])


@LIBS
def test_post_accumulate_grad_hook_must_return_none(lib):
    t = lib.rand(2, 3, requires_grad=True)
    t.register_post_accumulate_grad_hook(lambda tensor: tensor.grad)
    with pytest.raises(RuntimeError, match="hooks should return None."):
        t.sum().backward()
    u = lib.rand(2, requires_grad=True)
    seen = []
    u.register_post_accumulate_grad_hook(lambda tensor: seen.append(tensor.grad.sum().item()))
    u.sum().backward()
    assert seen == [2.0]
