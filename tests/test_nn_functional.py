"""``nn.functional`` helpers against torch: pad (all modes), one_hot, normalize,
cosine_similarity, pairwise_distance, linear, batch_norm without running stats; values,
gradients and double backward."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, to_lib

R = np.random.default_rng(0)


def _compare(fn, arrays, double=True, atol=1e-9, rtol=1e-7):
    """``fn(lib, *tensors)`` on both libraries: values, VJP, and (float64) double backward."""
    res = []
    for lib in (glassgrad, torch):
        args = [to_lib(lib, a) for a in arrays]
        out = fn(lib, *args)
        leaves = [a for a in args if isinstance(a, lib.Tensor) and a.requires_grad]
        cot = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)),
                         requires_grad=double)
        grads = lib.autograd.grad(out, leaves, cot, create_graph=double, allow_unused=True)
        second = None
        if double:
            total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
            if isinstance(total, lib.Tensor):
                second = lib.autograd.grad(total, leaves + [cot], allow_unused=True)
        res.append((out, grads, second))
    (o1, g1, s1), (o2, g2, s2) = res
    assert_close(o1, o2, atol, rtol, what="value")
    for a, b in zip(g1, g2):
        assert_close(a, b, atol, rtol, what="grad")
    if s2 is not None:
        assert s1 is not None
        for a, b in zip(s1, s2):
            assert_close(a, b, atol * 10, rtol * 10, what="grad of grad")


PADS = [
    ("constant", (1, 2), 3), ("constant", (1, 0, 2, 1), 4), ("constant", (-1, 2), 3),
    ("constant", (1, 1, 1, 1, 1, 1), 3), ("reflect", (2, 1), 3), ("reflect", (1, 2, 2, 1), 4),
    ("replicate", (3, 1), 3), ("replicate", (1, 2, 0, 3), 4), ("circular", (2, 1), 3),
    ("circular", (1, 2, 2, 1), 4),
]


@pytest.mark.parametrize("mode,pad,ndim", PADS, ids=[f"{p[0]}-{p[1]}" for p in PADS])
def test_pad_matches_torch(mode, pad, ndim):
    x = R.standard_normal((2, 3, 4, 5)[:ndim])
    kw = {"value": 0.5} if mode == "constant" else {}
    _compare(lambda m, t: m.nn.functional.pad(t, pad, mode=mode, **kw), [x])


def test_pad_errors():
    x = glassgrad.ones(2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        glassgrad.nn.functional.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two"):
        glassgrad.nn.functional.pad(x, (1, 1, 1, 1, 1, 1))


def test_one_hot_matches_torch():
    idx = np.array([[0, 3], [2, 1]])
    for n in (-1, 5):
        a = glassgrad.nn.functional.one_hot(glassgrad.tensor(idx), n)
        b = torch.nn.functional.one_hot(torch.tensor(idx), n)
        assert a.dtype == glassgrad.int64
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        glassgrad.nn.functional.one_hot(glassgrad.tensor([1.0]))


@pytest.mark.parametrize("p,dim", [(2, 1), (1, 0), (3, -1)])
def test_normalize(p, dim):
    _compare(lambda m, t: m.nn.functional.normalize(t, p=p, dim=dim), [R.standard_normal((3, 4))])


def test_cosine_similarity_and_pairwise_distance():
    a, b = R.standard_normal((4, 5)), R.standard_normal((4, 5))
    _compare(lambda m, x, y: m.nn.functional.cosine_similarity(x, y), [a, b])
    _compare(lambda m, x, y: m.nn.functional.cosine_similarity(x, y, dim=0), [a, b])
    _compare(lambda m, x, y: m.nn.functional.cosine_similarity(x, y), [a, b[:1]])
    _compare(lambda m, x, y: m.nn.functional.pairwise_distance(x, y), [a, b])
    _compare(lambda m, x, y: m.nn.functional.pairwise_distance(x, y, p=1.0, keepdim=True),
             [a, b], double=False)


def test_functional_layers():
    x, w, bias = R.standard_normal((4, 3)), R.standard_normal((2, 3)), R.standard_normal(2)
    _compare(lambda m, x, w, b: m.nn.functional.linear(x, w, b), [x, w, bias])
    _compare(lambda m, x, w: m.nn.functional.linear(x, w), [x, w])
    bw = R.standard_normal((2, 3, 4))
    _compare(lambda m, a, c, w: m.nn.functional.bilinear(a, c, w), [x, R.standard_normal((4, 4)),
                                                                   bw])
    xb = R.standard_normal((5, 3, 2))
    _compare(lambda m, t, g, b: m.nn.functional.batch_norm(t, None, None, g, b, training=True),
             [xb, R.standard_normal(3), R.standard_normal(3)])
    _compare(lambda m, t: m.nn.functional.group_norm(t, 3), [xb])
    _compare(lambda m, t, g: m.nn.functional.layer_norm(t, (3, 2), g), [xb, R.standard_normal(
        (3, 2))])
    _compare(lambda m, t: m.nn.functional.instance_norm(t), [xb])


def test_embedding_functional():
    w = R.standard_normal((5, 3))
    idx = np.array([[0, 4], [4, 2]])
    _compare(lambda m, t: m.nn.functional.embedding(m.tensor(idx), t, padding_idx=4), [w])


def test_dropout_functional_eval_is_identity():
    x = glassgrad.ones(3)
    assert glassgrad.nn.functional.dropout(x, 0.5, training=False) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        glassgrad.nn.functional.dropout(x, -0.1)
