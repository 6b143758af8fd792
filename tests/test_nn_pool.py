"""Issue 16, lane pool: the pooling layers (AdaptiveMaxPool3d, FractionalMaxPool2d/3d,
LPPool1d/2d/3d) against torch: outputs, gradients, second order (tests/nn_oracle.py), int64
indices, reprs, state_dict keys and error messages. The functionals' values and derivatives are
in the op table (tests/op_db/pool_ops.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.nn_oracle import check_module
from tests.test_nn_attention import outcome

RNG = np.random.default_rng(16)
LIBS = (glassgrad, torch)


def _same_outcome(fn):
    """``fn(lib)`` on both libraries: the same error type and message (glassgrad may add its
    explanation after a newline), or both succeed."""
    ours, theirs = (outcome(fn, (lib,), {}) for lib in LIBS)
    if isinstance(theirs, tuple) and isinstance(theirs[0], type):
        assert isinstance(ours, tuple) and ours[0] is theirs[0], (ours, theirs)
        assert str(ours[1]).split("\nglassgrad")[0] == str(theirs[1]), (ours, theirs)
        return None
    assert not (isinstance(ours, tuple) and isinstance(ours[0], type)), ours
    return ours, theirs


MODULES = [
    (lambda lib: lib.nn.AdaptiveMaxPool3d((2, 3, 2)), (2, 3, 4, 5, 3)),
    (lambda lib: lib.nn.AdaptiveMaxPool3d(2), (3, 4, 4, 5)),
    (lambda lib: lib.nn.LPPool1d(2, 3, stride=2), (2, 3, 9)),
    (lambda lib: lib.nn.LPPool2d(1.5, (2, 3), ceil_mode=True), (2, 2, 5, 7)),
    (lambda lib: lib.nn.LPPool3d(3, 2), (1, 2, 4, 4, 5)),
    (lambda lib: lib.nn.LPPool2d(float("inf"), 2), (2, 5, 4)),
    (lambda lib: lib.nn.FractionalMaxPool2d(
        2, output_size=(4, 3), _random_samples=lib.tensor(SAMPLES2)), (2, 3, 8, 7)),
    (lambda lib: lib.nn.FractionalMaxPool3d(
        (2, 1, 2), output_ratio=0.5, _random_samples=lib.tensor(SAMPLES3)), (2, 3, 6, 5, 6)),
]
SAMPLES2 = RNG.uniform(size=(2, 3, 2))
SAMPLES3 = RNG.uniform(size=(2, 3, 3))


@pytest.mark.parametrize("make, shape", MODULES, ids=[f"m{i}" for i in range(len(MODULES))])
def test_pool_modules_match_torch(make, shape):
    # positive inputs: a fractional power of a negative number is NaN in both libraries
    x = RNG.uniform(0.2, 2.0, size=shape)
    check_module(make, [x], double=True)
    assert repr(make(glassgrad)) == repr(make(torch))
    assert list(make(glassgrad).state_dict()) == list(make(torch).state_dict())


@pytest.mark.parametrize("nd, shape, kernel, out", [
    (2, (2, 3, 9, 8), 3, (4, 5)), (2, (3, 7, 7), (2, 3), (5, 3)),
    (3, (2, 2, 6, 5, 7), 2, (3, 2, 4)), (3, (1, 5, 6, 7), (1, 2, 3), (4, 3, 2)),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_indices_match_torch(nd, shape, kernel, out, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    x.flat[::5] = x.flat[1]  # ties: the first position wins
    x.flat[7] = x.flat[9] = np.nan  # several NaNs in a window: the last one
    u = RNG.uniform(size=((shape[0] if len(shape) == nd + 2 else 1), shape[-nd - 1], nd))
    u = u.astype(dtype)
    res = [getattr(lib.nn.functional, f"fractional_max_pool{nd}d")(
        lib.tensor(x), kernel, out, return_indices=True, _random_samples=lib.tensor(u))
        for lib in LIBS]
    np.testing.assert_array_equal(res[0][1].numpy(), res[1][1].numpy())
    assert res[0][1].dtype == glassgrad.int64
    np.testing.assert_array_equal(res[0][0].numpy(), res[1][0].numpy())


def test_fractional_without_samples_draws_fresh_windows():
    x = glassgrad.randn(1, 1, 21, 21)  # alpha = 19 / 9: the starts depend on the samples
    m = glassgrad.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)
    _, i1 = m(x)
    _, i2 = m(x)
    assert i1.shape == (1, 1, 10, 10) and not (i1 == i2).all()


def test_max_unpool_takes_adaptive_and_fractional_indices():
    x = RNG.standard_normal((1, 2, 6, 6, 5))
    u = RNG.uniform(size=(1, 2, 3))
    backs = []
    for lib in LIBS:
        out, idx = lib.nn.functional.adaptive_max_pool3d(lib.tensor(x), 2, return_indices=True)
        backs.append(lib.nn.functional.max_unpool3d(out, idx, 3, output_size=(6, 6, 5)).numpy())
        out, idx = lib.nn.functional.fractional_max_pool3d(
            lib.tensor(x), 2, (3, 2, 2), return_indices=True, _random_samples=lib.tensor(u))
        backs.append(lib.nn.functional.max_unpool3d(out, idx, (2, 3, 3),
                                                    output_size=(6, 6, 5)).numpy())
    np.testing.assert_array_equal(backs[0], backs[2])
    np.testing.assert_array_equal(backs[1], backs[3])


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(2, 3, 7, 6), 2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(2, 3, 7, 6), 2,
                                                        output_ratio=0.5),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(2, 3, 7, 6), 2,
                                                        output_ratio=(0.5,) * 3),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(2, 3, 7, 6), 2,
                                                        output_size=(6, 6)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(2, 3, 7, 6), (2, 2, 2),
                                                        output_size=2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(3, 6), 2,
                                                        output_size=(2, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(2, 3, 0, 6), 2,
                                                        output_size=(2, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(2, 3, 7, 6), 2, output_size=3, _random_samples=lib.rand(2, 3, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(2, 3, 7, 6), 2, output_size=3, _random_samples=lib.rand(1, 3, 2)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(2, 3, 7, 6), 2, output_size=3, _random_samples=lib.rand(2, 2, 2)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(2, 3, 7, 6), 2, output_size=3,
        _random_samples=lib.rand(2, 3, 2, dtype=lib.float64)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.ones(2, 3, 7, 6, dtype=lib.int64), 2, output_size=3,
        _random_samples=lib.rand(2, 3, 2).long()),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(2, 3, 4, 5, 6), 2,
                                                        output_size=3),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(2, 3, 4, 5, 6), (2, 2),
                                                        output_size=2),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(3, 4, 5), 2, output_size=2),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(2, 0, 4, 5, 6), 2,
                                                        output_size=2),
    lambda lib: lib.nn.FractionalMaxPool2d(2),
    lambda lib: lib.nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda lib: lib.nn.functional.adaptive_max_pool3d(lib.randn(3, 4), 2),
    lambda lib: lib.nn.functional.lp_pool2d(lib.randn(5, 3, 3), 2, (2, 2, 2)),
    lambda lib: lib.nn.functional.lp_pool3d(lib.randn(5, 3, 3, 3), 2, (2,)),
    lambda lib: lib.nn.functional.lp_pool1d(lib.randn(3, 5), 2, (2,)).shape,
], ids=lambda f: "")
def test_pool_errors_match_torch(call):
    assert _same_outcome(call) is None


def test_with_indices_names_return_pairs():
    x = RNG.standard_normal((1, 2, 4, 5, 4))
    for name, args in [("max_pool3d_with_indices", (2,)),
                       ("adaptive_max_pool3d_with_indices", ((2, 3, 1),))]:
        ours, theirs = (getattr(lib.nn.functional, name)(lib.tensor(x), *args) for lib in LIBS)
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    y = RNG.standard_normal((2, 3, 7))
    ours, theirs = (lib.nn.functional.adaptive_max_pool1d_with_indices(lib.tensor(y), 3)
                    for lib in LIBS)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


def test_editing_returned_indices_leaves_the_gradient():
    """torch saves the indices and raises on backward after ``indices.add_(1)``; glassgrad's
    node holds its own copy, so the gradient stays the one of the forward."""
    x = glassgrad.tensor(RNG.standard_normal((1, 2, 4, 4)), requires_grad=True)
    out, idx = glassgrad.nn.functional.adaptive_max_pool2d(x, 2, return_indices=True)
    ref, = glassgrad.autograd.grad(out.sum(), x, retain_graph=True)
    idx.add_(1)
    again, = glassgrad.autograd.grad(out.sum(), x)
    np.testing.assert_array_equal(ref.numpy(), again.numpy())
