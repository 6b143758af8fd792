"""Padding, distance, pixel-shuffle and channel-shuffle modules and functions against torch:
outputs, input gradients and second order (tests/nn_oracle.py), reprs and error messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.nn_oracle import check_module
from tests.test_nn_attention import outcome

RNG = np.random.default_rng(0)
X1, X2, X3 = (RNG.standard_normal(s) for s in ((2, 3, 5), (2, 2, 4, 5), (1, 2, 3, 4, 5)))

PAD_CASES = [
    ("ZeroPad1d", (2,), X1), ("ZeroPad1d", ((1, 3),), X1[0]), ("ZeroPad2d", ((1, 1, 2, 0),), X2),
    ("ZeroPad3d", (1,), X3), ("ConstantPad1d", (2, 3.5), X1), ("ConstantPad2d", (1, -1.0), X2),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), X3), ("ReflectionPad1d", (2,), X1),
    ("ReflectionPad2d", ((1, 2, 0, 3),), X2), ("ReflectionPad3d", (1,), X3),
    ("ReplicationPad1d", ((3, 1),), X1), ("ReplicationPad2d", (2,), X2),
    ("ReplicationPad3d", ((1, 2, 0, 1, 1, 0),), X3), ("CircularPad1d", (2,), X1),
    ("CircularPad2d", ((1, 0, 2, 1),), X2), ("CircularPad3d", (1,), X3),
    ("ConstantPad2d", ((-1, 1, 0, -2), 0.0), X2),
]


@pytest.mark.parametrize("name, args, x", PAD_CASES, ids=[f"{c[0]}-{k}" for k, c in
                                                            enumerate(PAD_CASES)])
def test_padding_modules_match_torch(name, args, x):
    check_module(lambda lib: getattr(lib.nn, name)(*args), [x], double=True, what=name)
    assert repr(getattr(glassgrad.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@pytest.mark.parametrize("name, shape", [("CircularPad1d", (5,)), ("CircularPad2d", (5, 4)),
                                         ("CircularPad3d", (2, 1, 3, 4, 5, 6))])
def test_circular_pad_rank_error_matches_torch(name, shape):
    res = [outcome(getattr(lib.nn, name)(1), (lib.zeros(*shape),), {})
           for lib in (glassgrad, torch)]
    assert res[0] == res[1] and res[1][0] is ValueError


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.PairwiseDistance(), lambda lib: lib.nn.PairwiseDistance(1.0, 1e-3, True),
    lambda lib: lib.nn.CosineSimilarity(), lambda lib: lib.nn.CosineSimilarity(dim=0, eps=0.1),
])
def test_distance_modules_match_torch(make):
    a, b = RNG.standard_normal((4, 6)), RNG.standard_normal((4, 6))
    check_module(make, [a, b], double=True)
    assert repr(make(glassgrad)) == repr(make(torch))


SHUFFLE_CASES = [
    (lambda lib: lib.nn.PixelShuffle(2), RNG.standard_normal((2, 8, 3, 2))),
    (lambda lib: lib.nn.PixelShuffle(3), RNG.standard_normal((2, 1, 9, 2, 2))),
    (lambda lib: lib.nn.PixelShuffle(1), RNG.standard_normal((3, 2, 2))),
    (lambda lib: lib.nn.PixelUnshuffle(2), RNG.standard_normal((2, 3, 4, 6))),
    (lambda lib: lib.nn.PixelUnshuffle(3), RNG.standard_normal((1, 6, 3))),
    (lambda lib: lib.nn.ChannelShuffle(3), RNG.standard_normal((2, 6, 2, 2))),
    (lambda lib: lib.nn.ChannelShuffle(2), RNG.standard_normal((1, 4, 3))),
]


@pytest.mark.parametrize("k", range(len(SHUFFLE_CASES)))
def test_shuffle_modules_match_torch(k):
    make, x = SHUFFLE_CASES[k]
    check_module(make, [x], double=True)
    assert repr(make(glassgrad)) == repr(make(torch))


def test_shuffles_at_top_level_and_functional():
    x = RNG.standard_normal((1, 4, 2, 2))
    for name in ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"):
        ours = getattr(glassgrad, name)(glassgrad.tensor(x), 2)
        np.testing.assert_array_equal(ours.numpy(),
                                      getattr(torch, name)(torch.tensor(x), 2).numpy())
        assert getattr(glassgrad.nn.functional, name) is not None


@pytest.mark.parametrize("name, shape, factor", [
    ("pixel_shuffle", (4, 4), 2), ("pixel_shuffle", (1, 5, 2, 2), 2),
    ("pixel_shuffle", (1, 4, 2, 2), 0), ("pixel_shuffle", (1, 4, 2, 2), 1.5),
    ("pixel_unshuffle", (4, 4), 2), ("pixel_unshuffle", (1, 1, 3, 4), 2),
    ("pixel_unshuffle", (1, 1, 4, 3), 2), ("pixel_unshuffle", (1, 4, 2, 2), -1),
    ("channel_shuffle", (1, 6, 2, 2), 4), ("channel_shuffle", (6,), 2),
    ("channel_shuffle", (2, 6), 3), ("channel_shuffle", (1, 6, 2, 2), 0),
    ("channel_shuffle", (1, 6, 2, 2), 2.0),
])
def test_shuffle_errors_match_torch(name, shape, factor):
    res = [outcome(getattr(lib.nn.functional, name), (lib.zeros(*shape), factor), {})
           for lib in (glassgrad, torch)]
    assert isinstance(res[1], tuple) and res[0] == res[1]
