"""Property tests (hypothesis): random compositions of 2-6 differentiable ops on random shapes.

Each example draws a shape, a program (a list of ops, some reading a second leaf ``b`` of the same
shape or a square matrix ``w``) and the input values, then checks on glassgrad against torch and
against float64 central differences: the forward value, the gradient of a weighted sum of the
output, and the second derivative (a Hessian-vector product, through ``create_graph=True``).
Examples are derandomized (the same ones every run); set GLASSGRAD_PROPERTY_EXAMPLES to run more.
"""

from __future__ import annotations

import os

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import glassgrad
from tests import reliability_figures as figures

EXAMPLES = int(os.environ.get("GLASSGRAD_PROPERTY_EXAMPLES", "60"))

# name -> fn(lib, h, b, w): smooth everywhere, bounded so that six in a row stay finite;
# every op keeps h's shape (reductions keep their dim and broadcast back)
OPS = {
    "tanh": lambda m, h, b, w: m.tanh(h),
    "sin": lambda m, h, b, w: m.sin(h),
    "sigmoid": lambda m, h, b, w: m.sigmoid(h),
    "exp_tanh": lambda m, h, b, w: m.exp(m.tanh(h)),
    "square": lambda m, h, b, w: h * h,
    "soft_abs": lambda m, h, b, w: m.sqrt(h * h + 1),
    "log1p_sq": lambda m, h, b, w: m.log1p(h * h),
    "pow3": lambda m, h, b, w: m.tanh(h) ** 3,
    "softmax": lambda m, h, b, w: m.softmax(h, dim=-1),
    "log_softmax": lambda m, h, b, w: m.log_softmax(h, dim=0),
    "sum_keep": lambda m, h, b, w: h + h.sum(dim=-1, keepdim=True),
    "mean_keep": lambda m, h, b, w: h * h.mean(dim=0, keepdim=True),
    "var_keep": lambda m, h, b, w: h + h.var(dim=-1, keepdim=True, unbiased=False),
    "cumsum": lambda m, h, b, w: m.cumsum(h, dim=-1) * 0.5,
    "flip": lambda m, h, b, w: h.flip(-1) * 0.9 + h * 0.1,
    "logsumexp": lambda m, h, b, w: h - m.logsumexp(h, dim=-1, keepdim=True),
    "mul_b": lambda m, h, b, w: h * b,
    "add_b": lambda m, h, b, w: h + b,
    "sub_b": lambda m, h, b, w: b - h,
    "div_b": lambda m, h, b, w: h / (b * b + 1),
    "where_b": lambda m, h, b, w: m.where(b > 0, h, h * 2),
    "atan2_b": lambda m, h, b, w: m.atan2(h, b * b + 1),
    "matmul_w": lambda m, h, b, w: m.tanh(h @ w),
    "lerp_b": lambda m, h, b, w: m.lerp(h, b, 0.3),
}


@st.composite
def programs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    ops = draw(st.lists(st.sampled_from(sorted(OPS)), min_size=2, max_size=6))
    seed = draw(st.integers(0, 2**31 - 1))
    return shape, ops, seed


def _inputs(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1.5, 1.5, shape), rng.uniform(-1.5, 1.5, shape),
            rng.uniform(-0.8, 0.8, (shape[-1], shape[-1])), rng.standard_normal(shape))


def _run(lib, ops, arrays):
    a, b, w = (lib.from_numpy(x.copy()) for x in arrays)
    h = a
    for name in ops:
        h = OPS[name](lib, h, b, w)
    return h


def _grads(lib, ops, arrays, cot, v=None):
    """Value, gradient of sum(out * cot) and, with ``v``, the Hessian-vector product along v."""
    leaves = [lib.from_numpy(x.copy()).requires_grad_() for x in arrays]
    a, b, w = leaves
    h = a
    for name in ops:
        h = OPS[name](lib, h, b, w)
    loss = (h * lib.from_numpy(cot)).sum()
    grads = lib.autograd.grad(loss, leaves, create_graph=v is not None, allow_unused=True)
    grads = [lib.zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]
    if v is None:
        return h, grads, None
    dot = sum((g * lib.from_numpy(vi)).sum() for g, vi in zip(grads, v))
    if not dot.requires_grad:  # a linear program: its second derivative is zero
        return h, grads, [np.zeros(x.shape) for x in leaves]
    hvp = lib.autograd.grad(dot, leaves, allow_unused=True)
    hvp = [np.zeros(x.shape) if g is None else _np(g) for g, x in zip(hvp, leaves)]
    return h, grads, hvp


def _np(t):
    return t.detach().numpy().astype(np.float64)


def _numeric_grads(ops, arrays, cot, eps=1e-6):
    """Central differences of sum(out * cot) w.r.t. every element of every leaf, in float64."""
    def loss(xs):
        with glassgrad.no_grad():
            return float((_run(glassgrad, ops, xs) * glassgrad.from_numpy(cot)).sum())

    out = []
    for k, x in enumerate(arrays):
        g = np.zeros_like(x)
        for i in range(x.size):
            plus = [y.copy() for y in arrays]
            minus = [y.copy() for y in arrays]
            plus[k].reshape(-1)[i] += eps
            minus[k].reshape(-1)[i] -= eps
            g.reshape(-1)[i] = (loss(plus) - loss(minus)) / (2 * eps)
        out.append(g)
    return out


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(programs())
def test_random_compositions_match_torch_and_finite_differences(program):
    shape, ops, seed = program
    a, b, w, cot = _inputs(shape, seed)
    arrays = [a, b, w]
    rng = np.random.default_rng(seed + 1)
    v = [rng.standard_normal(x.shape) for x in arrays]
    where = f"ops {ops} on shape {shape} (seed {seed})"

    g_out, g_grads, g_hvp = _grads(glassgrad, ops, arrays, cot, v)
    t_out, t_grads, t_hvp = _grads(torch, ops, arrays, cot, v)
    np.testing.assert_allclose(_np(g_out), _np(t_out), rtol=1e-10, atol=1e-12,
                               err_msg=f"forward: {where}")
    for name, g, t in zip("abw", g_grads, t_grads):
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-9, atol=1e-11,
                                   err_msg=f"gradient of {name} vs torch: {where}")
    for name, g, t in zip("abw", g_hvp, t_hvp):
        np.testing.assert_allclose(g, t, rtol=1e-8, atol=1e-10,
                                   err_msg=f"second derivative of {name} vs torch: {where}")

    numeric = _numeric_grads(ops, arrays, cot)
    for name, g, n in zip("abw", g_grads, numeric):
        np.testing.assert_allclose(_np(g), n, rtol=1e-5, atol=1e-6,
                                   err_msg=f"gradient of {name} vs central differences: {where}")
    # the Hessian-vector product is the directional derivative of the gradient along v
    eps = 1e-5
    plus = _grads(glassgrad, ops, [x + eps * d for x, d in zip(arrays, v)], cot)[1]
    minus = _grads(glassgrad, ops, [x - eps * d for x, d in zip(arrays, v)], cot)[1]
    for name, hv, p, m in zip("abw", g_hvp, plus, minus):
        np.testing.assert_allclose(hv, (_np(p) - _np(m)) / (2 * eps), rtol=1e-4, atol=1e-5,
                                   err_msg=f"second derivative of {name} vs central "
                                           f"differences: {where}")
    figures.add("property_examples")
