"""The fused batch norm (ops/fused_norm.py) and ``MatMul`` (ops/linalg.py) after their performance
work, against torch: values, gradients, second order, running statistics, eval mode, every
``BatchNorm`` configuration; and the first-order array backward (NOTE [Array backward]) against
the Tensor backward that ``create_graph=True`` runs, which must give the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.ops.fused_norm import BatchNorm
from tests.oracle import assert_close

BN_CASES = [
    ("BatchNorm1d", (6, 3)),
    ("BatchNorm1d", (4, 3, 5)),
    ("BatchNorm2d", (2, 3, 2, 2)),
]
BN_KWARGS = [
    {},
    {"momentum": None},
    {"affine": False},
    {"track_running_stats": False},
    {"eps": 1e-3, "momentum": 0.3},
]


def _bn(lib, cls, kwargs):
    bn = getattr(lib.nn, cls)(3, **kwargs).double()
    if bn.affine:
        with lib.no_grad():
            bn.weight.copy_(lib.tensor([0.5, 2.0, -1.0], dtype=lib.float64))
            bn.bias.copy_(lib.tensor([0.1, -0.2, 0.3], dtype=lib.float64))
    return bn


@pytest.mark.parametrize("kwargs", BN_KWARGS, ids=lambda k: ",".join(map(str, k.items())) or "default")
@pytest.mark.parametrize("cls,shape", BN_CASES)
def test_batch_norm_module_training_then_eval_matches_torch(cls, shape, kwargs, rng):
    xs = [rng.standard_normal(shape) * (k + 1) + k for k in range(3)]
    weights = rng.standard_normal(shape)
    res = []
    for lib in (glassgrad, torch):
        bn = _bn(lib, cls, kwargs)
        out = []
        for k, x0 in enumerate(xs):
            if k == 2:
                bn.eval()
            x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
            y = bn(x)
            (y * lib.tensor(weights) * y.sin()).sum().backward()
            out += [y, x.grad]
            if bn.affine:
                out += [bn.weight.grad, bn.bias.grad]
                bn.weight.grad = bn.bias.grad = None
            if bn.track_running_stats:
                out += [bn.running_mean.clone(), bn.running_var.clone(), bn.num_batches_tracked]
        res.append(out)
    assert len(res[0]) == len(res[1])
    for k, (a, b) in enumerate(zip(*res)):
        assert_close(a, b, atol=1e-10, rtol=1e-9, what=f"item {k}")


@pytest.mark.parametrize("shape", [(64, 16), (8, 5, 3)])
def test_batch_norm_float32_first_order_matches_torch(shape, rng):
    x0 = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    g0 = rng.standard_normal(shape).astype(np.float32)
    w0, b0 = (rng.standard_normal(shape[1]).astype(np.float32) for _ in "wb")
    res = []
    for lib in (glassgrad, torch):
        bn = lib.nn.BatchNorm1d(shape[1])
        with lib.no_grad():
            bn.weight.copy_(lib.tensor(w0))
            bn.bias.copy_(lib.tensor(b0))
        x = lib.tensor(x0, requires_grad=True)
        y = bn(x)
        y.backward(lib.tensor(g0))
        res.append((y, x.grad, bn.weight.grad, bn.bias.grad, bn.running_mean, bn.running_var))
    for a, b in zip(*res):
        assert_close(a, b, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 2, 2)])
def test_functional_batch_norm_second_order_matches_torch(shape, rng):
    x0, w0, b0 = rng.standard_normal(shape) * 2 + 1, rng.standard_normal(3), rng.standard_normal(3)
    res = []
    for lib in (glassgrad, torch):
        x, w, b = (lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in (x0, w0, b0))
        y = lib.nn.functional.batch_norm(x, None, None, w, b, training=True)
        grads = lib.autograd.grad((y.tanh() * y).sum(), (x, w, b), create_graph=True)
        second = lib.autograd.grad(sum((g * g.cos()).sum() for g in grads), (x, w, b))
        res.append((y, *grads, *second))
    for a, b in zip(*res):
        assert_close(a, b, atol=1e-9, rtol=1e-8)


def _array_and_tensor_grads(fn, inputs):
    """Gradients of ``fn(*inputs)`` by a first-order ``backward`` (the array path) and by
    ``autograd.grad(create_graph=True)`` (the Tensor path), as arrays."""
    fn(*inputs).backward()
    by_arrays = [None if t.grad is None else t.grad.numpy().copy() for t in inputs]
    for t in inputs:
        t.grad = None
    wanted = [t for t in inputs if t.requires_grad]
    got = iter(glassgrad.autograd.grad(fn(*inputs), wanted, create_graph=True, allow_unused=True))
    by_tensors = [next(got).detach().numpy() if t.requires_grad else None for t in inputs]
    return by_arrays, by_tensors


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(64, 8), (4, 3, 5), (2, 3, 2, 2)])
@pytest.mark.parametrize("wants", ["all", "x", "weight", "bias", "params"])
@pytest.mark.parametrize("stats", [False, True])
def test_batch_norm_array_and_tensor_backward_agree(dtype, shape, wants, stats, rng):
    c = shape[1]
    dims = (0,) + tuple(range(2, len(shape)))
    dt = getattr(glassgrad, dtype)
    x = glassgrad.tensor(rng.standard_normal(shape) * 3 + 1, dtype=dt)
    w = glassgrad.tensor(rng.standard_normal(c), dtype=dt)
    b = glassgrad.tensor(rng.standard_normal(c), dtype=dt)
    for name, t in (("x", x), ("weight", w), ("bias", b)):
        t.requires_grad_(wants == "all" or wants == name or (wants == "params" and name != "x"))
    g = glassgrad.tensor(rng.standard_normal(shape), dtype=dt)
    gm = glassgrad.tensor(rng.standard_normal((1, c) + (1,) * (len(shape) - 2)), dtype=dt)

    def fn(x, w, b):
        out, mean, var = BatchNorm.apply(x, w, b, dims=dims, eps=1e-5)
        loss = (out * g).sum()
        return loss + (mean * gm).sum() + (var * var).sum() if stats else loss

    by_arrays, by_tensors = _array_and_tensor_grads(fn, (x, w, b))
    assert sum(a is not None for a in by_arrays) == {"all": 3, "params": 2}.get(wants, 1)
    for a, t in zip(by_arrays, by_tensors):
        assert (a is None) == (t is None)
        if a is not None:
            np.testing.assert_array_equal(a, t)


def test_batch_norm_forward_keeps_the_composite_values(rng):
    """The fused forward's values are the composite's (mean, centred, biased variance, affine)."""
    from glassgrad.nn import _functional_layers as fl

    for dtype in (np.float32, np.float64):
        x = glassgrad.tensor(rng.standard_normal((16, 4, 3)).astype(dtype))
        w, b = (glassgrad.tensor(rng.standard_normal(4).astype(dtype)) for _ in "wb")
        out, mean, var = BatchNorm.apply(x, w, b, dims=(0, 2), eps=1e-5)
        m = x.mean((0, 2), keepdim=True)
        centred = x - m
        v = (centred * centred).mean((0, 2), keepdim=True)
        ref = fl._affine(centred * (v + 1e-5).rsqrt(), w, b, (1, 4, 1))
        for a, r in ((out, ref), (mean, m), (var, v)):
            np.testing.assert_array_equal(a.numpy(), r.numpy())


MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((4, 1), (1, 3)),  # inner dim 1: the outer product (NOTE [GEMM shapes])
    ((4,), (4,)),
    ((0, 3), (3, 2)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_values_and_two_orders_match_torch(sa, sb, dtype, rng):
    a0, b0 = rng.standard_normal(sa), rng.standard_normal(sb)
    res = []
    for lib in (glassgrad, torch):
        dt = getattr(lib, dtype)
        a, b = (lib.tensor(v, dtype=dt, requires_grad=True) for v in (a0, b0))
        out = lib.matmul(a, b)
        first = lib.autograd.grad((out * out.sin()).sum(), (a, b), create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in first), (a, b))
        a.grad = b.grad = None
        lib.matmul(a, b).mean().backward()  # a broadcast (zero-stride) gradient, first order
        res.append((out, *first, *second, a.grad, b.grad))
    tol = 1e-4 if dtype == "float32" else 1e-10
    for a, b in zip(*res):
        assert_close(a, b, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
@pytest.mark.parametrize("wants", ["both", "a", "b"])
def test_matmul_array_and_tensor_backward_agree(sa, sb, dtype, wants, rng):
    dt = getattr(glassgrad, dtype)
    a = glassgrad.tensor(rng.standard_normal(sa), dtype=dt, requires_grad=wants != "b")
    b = glassgrad.tensor(rng.standard_normal(sb), dtype=dt, requires_grad=wants != "a")
    out_shape = np.matmul(np.zeros(sa), np.zeros(sb)).shape
    c = glassgrad.tensor(rng.standard_normal(out_shape), dtype=dt)
    by_arrays, by_tensors = _array_and_tensor_grads(lambda a, b: (a @ b * c).sum(), (a, b))
    for x, t in zip(by_arrays, by_tensors):
        assert (x is None) == (t is None)
        if x is not None:
            np.testing.assert_array_equal(x, t)


def test_matmul_under_vmap_matches_torch(rng):
    a0, b0 = rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 5))
    res = []
    for lib in (glassgrad, torch):
        a, b = lib.tensor(a0), lib.tensor(b0)
        out = lib.func.vmap(lambda x, lib=lib, b=b: lib.matmul(x, b))(a)
        grads = lib.func.vmap(lib.func.grad(lambda x, lib=lib, b=b: lib.matmul(x, b).sin().sum()))(a)
        res.append((out, grads))
    for x, y in zip(*res):
        assert_close(x, y, atol=1e-12)
