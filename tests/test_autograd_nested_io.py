"""``autograd.NestedIOFunction``: torch 2.13 keeps the class (its instances cannot be called:
AttributeError from a removed ``_do_forward``), so the oracle here is the same computation
written as a torch ``autograd.Function`` on the flattened tensors."""

import numpy as np
import pytest
import torch

import glassgrad


class _Nested(glassgrad.autograd.NestedIOFunction):
    def forward_extended(self, pair, extra):
        a, b = pair
        self.save_for_backward(a, [b])
        return a * b, [a.exp() + extra["k"]]

    def backward_extended(self, g_prod, g_list):
        a, (b,) = self.saved_tensors
        g_exp = g_list[0]
        return (g_prod * b + g_exp * a.exp(), g_prod * a), g_exp


class _Flat(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        return a * b, a.exp() + k

    @staticmethod
    def backward(ctx, g_prod, g_exp):
        a, b = ctx.saved_tensors
        return g_prod * b + g_exp * a.exp(), g_prod * a, g_exp


def test_values_grads_and_nesting_match_flat_torch_function():
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(4) for _ in range(3)]
    weights = rng.standard_normal(4)
    a, b, k = (glassgrad.tensor(d, requires_grad=True) for d in data)
    prod, rest = _Nested()((a, b), {"k": k})
    assert isinstance(rest, list) and len(rest) == 1
    assert prod.grad_fn is not None and prod.grad_fn is rest[0].grad_fn
    (prod * glassgrad.tensor(weights) + rest[0] * 2).sum().backward()
    ta, tb, tk = (torch.tensor(d, requires_grad=True) for d in data)
    tprod, texp = _Flat.apply(ta, tb, tk)
    (tprod * torch.tensor(weights) + texp * 2).sum().backward()
    np.testing.assert_allclose(prod.detach().numpy(), tprod.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(rest[0].detach().numpy(), texp.detach().numpy(), rtol=1e-12)
    for g, t in ((a, ta), (b, tb), (k, tk)):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_saved_tensor_edited_in_place_is_refused_as_torch_refuses_saved_edits():
    a = glassgrad.randn(3, requires_grad=True)
    b = glassgrad.randn(3)
    prod, rest = _Nested()((a, b), {"k": glassgrad.zeros(3)})
    with glassgrad.no_grad():
        b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (prod.sum() + rest[0].sum()).backward()


def test_torch_keeps_the_same_method_names():
    for name in ("forward_extended", "backward_extended", "save_for_backward", "saved_tensors",
                 "mark_dirty", "mark_non_differentiable"):
        assert hasattr(torch.autograd.NestedIOFunction, name)
        assert hasattr(glassgrad.autograd.NestedIOFunction, name)
