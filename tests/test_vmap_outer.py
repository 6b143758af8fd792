"""NOTE [Batched outer products] in glassgrad/func/_batched_numpy.py: under vmap, a matmul with an
inner dim of 1 is the broadcast product, bit for bit NumPy's matmul (the previous path) for
float32/float64 and every batch layout; other cases keep matmul; per-sample Linear gradients by
vmap(grad) are bit-equal to each sample's own grad and match torch.func."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.func import _batched_numpy


def _bits(a):
    return a.view(np.uint64 if a.dtype.itemsize == 8 else np.uint32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape_a, shape_b", [
    ((256, 784, 1), (256, 1, 256)),
    ((7, 5, 1), (1, 9)),
    ((3, 1), (4, 1, 6)),
    ((2, 3, 4, 1), (3, 1, 5)),
    ((6, 1, 1), (6, 1, 1)),
])
def test_outer_is_matmul_bit_for_bit(dtype, shape_a, shape_b):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(shape_a) * 10.0 ** rng.integers(-30, 30, shape_a)).astype(dtype)
    b = (rng.standard_normal(shape_b) * 10.0 ** rng.integers(-30, 30, shape_b)).astype(dtype)
    a.reshape(-1)[:3] = [np.inf, np.nan, -0.0]
    with np.errstate(all="ignore"):
        expected = np.matmul(a, b)
        got = _batched_numpy._outer(a, b)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(_bits(got), _bits(expected))


@pytest.mark.parametrize("a, b", [
    (np.ones((4, 3, 2)), np.ones((4, 2, 5))),  # inner dim 2
    (np.ones((4, 3, 1), np.complex128), np.ones((4, 1, 5), np.complex128)),
    (np.ones((4, 3, 1), np.float16), np.ones((4, 1, 5), np.float16)),
    (np.ones((4, 3, 1), np.int64), np.ones((4, 1, 5), np.int64)),
    (np.ones((4, 3, 1), np.float32), np.ones((4, 1, 5), np.float64)),
    (np.ones((4, 1)), np.ones(1)),  # a 1-D operand
])
def test_other_cases_keep_matmul(a, b):
    assert _batched_numpy._outer(a, b) is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_per_sample_linear_grads_bit_equal_to_each_sample(dtype):
    rng = np.random.default_rng(4)
    w_np = rng.standard_normal((5, 7))
    x_np, y_np = rng.standard_normal((8, 7)), rng.standard_normal((8, 5))
    gdt = glassgrad.float32 if dtype == torch.float32 else glassgrad.float64

    def results(lib, dt):
        w, x, y = (lib.tensor(v, dtype=dt) for v in (w_np, x_np, y_np))

        def loss(w, x, y):
            return ((lib.tanh(x @ w.T) - y) ** 2).sum()

        batched = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(w, x, y)
        alone = [lib.func.grad(loss)(w, x[i], y[i]) for i in range(8)]
        return batched.numpy(), np.stack([g.numpy() for g in alone])

    batched, alone = results(glassgrad, gdt)
    np.testing.assert_array_equal(_bits(batched), _bits(alone))
    torch_batched, _ = results(torch, dtype)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(batched, torch_batched, rtol=tol, atol=tol)
