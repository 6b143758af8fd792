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


@LIBS
def test_is_grads_batched_shape_mismatch(lib):
    x = lib.randn(2, 2, requires_grad=True)
    out = x.clone()
    (g,) = lib.autograd.grad(out, (x,), (lib.arange(3.0).expand(2, 2, 3).transpose(0, 2),),
                             is_grads_batched=True)
    assert tuple(g.shape) == (3, 2, 2) and g[2, 1, 0].item() == 2
    with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the first "
                                           "dimension of each grad_output as the batch"):
        lib.autograd.grad(out, (x,), (lib.ones(2, 2),), is_grads_batched=True)


@LIBS
def test_jacobian_and_hessian_refuse_strict_with_vectorize(lib):
    F = lib.autograd.functional
    x = lib.rand(4, dtype=lib.float64)
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not "
                                           "supported together"):
        F.jacobian(lambda t: t, x, strict=True, vectorize=True)
    with pytest.raises(RuntimeError, match="not supported together"):
        F.hessian(lambda t: (t**3).sum(), x, strict=True, vectorize=True)
    h = F.hessian(lambda t: (t**3).sum(), x, vectorize=True)
    assert tuple(h.shape) == (4, 4)


@LIBS
def test_setup_context_gets_forwards_defaults(lib):
    class Pow(lib.autograd.Function):
        @staticmethod
        def forward(x, y=3):
            return lib.pow(x, y)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x)
            ctx.y = y

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.y * lib.pow(x, ctx.y - 1), None

    x = lib.tensor(2.0, requires_grad=True)
    Pow.apply(x).backward()
    assert x.grad.item() == 12.0
    x.grad = None
    Pow.apply(x, 2).backward()
    assert x.grad.item() == 4.0


@LIBS
def test_saved_variables_is_deprecated_saved_tensors(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated; use "
                                                        "'saved_tensors'"):
                (x,) = ctx.saved_variables
            return g * 2 + x * 0

    x = lib.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
