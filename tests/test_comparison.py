"""Comparisons, logical/bitwise ops, sort/topk/kthvalue, unique and searching against torch:
values, dtypes and shapes, and gradients through the values of sort/topk."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, assert_same_dtype

LIBS = (glassgrad, torch)


def _both(fn, *arrays):
    """Run ``fn(lib, *tensors)`` on both libraries with tensors made from the same arrays."""
    outs = []
    for lib in LIBS:
        outs.append(
            fn(lib, *[lib.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays])
        )
    return outs


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _check(fn, *arrays):
    ours, theirs = _both(fn, *arrays)
    if isinstance(theirs, bool):
        assert ours is theirs or ours == theirs
        return
    ours, theirs = _flat(ours), _flat(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_same_dtype(a, b)
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, atol=0, rtol=0, what=getattr(fn, "__name__", "op"))


@pytest.fixture
def data(rng):
    x = rng.integers(-3, 4, size=(3, 4)).astype(np.float64)
    x[0, 0] = np.nan
    x[1, 2] = np.inf
    return {
        "x": x,
        "y": rng.integers(-3, 4, size=(4,)).astype(np.float64),
        "i": rng.integers(-3, 4, size=(3, 4)),
        "j": rng.integers(-3, 4, size=(1, 4)).astype(np.int32),
        "b": rng.random((3, 4)) > 0.5,
        "u": rng.integers(0, 255, size=(3, 4)).astype(np.uint8),
    }


COMPARISONS = [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
]


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("pair", [("x", "y"), ("i", "j"), ("b", "b"), ("x", "i"), ("u", "i")])
def test_binary_comparisons(data, name, pair):
    a, b = data[pair[0]], data[pair[1]]
    _check(lambda m, p, q: getattr(m, name)(p, q), a, b)
    if not name.startswith("logical"):  # torch's logical ops take Tensors only
        _check(lambda m, p: getattr(m, name)(p, 1.5), a)  # a Python number on the right
        _check(lambda m, p: getattr(m, name)(p, 0), a)


@pytest.mark.parametrize("op", ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"])
def test_comparison_operators(data, op):
    _check(lambda m, p, q: getattr(p, op)(q), data["x"], data["y"])
    _check(lambda m, p: getattr(p, op)(2), data["i"])


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("pair", [("i", "j"), ("b", "b"), ("u", "u")])
def test_bitwise(data, name, pair):
    _check(lambda m, p, q: getattr(m, name)(p, q), data[pair[0]], data[pair[1]])


def test_bitwise_operators(data):
    _check(lambda m, p, q: (p & q, p | q, p ^ q, ~p), data["b"], data["b"][::-1].copy())
    _check(lambda m, p: (~p, m.bitwise_not(p)), data["i"])


@pytest.mark.parametrize(
    "name",
    ["logical_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "isreal"],
)
@pytest.mark.parametrize("key", ["x", "i", "b"])
def test_unary_predicates(data, name, key):
    if name in ("isposinf", "isneginf", "signbit") and key == "b":
        pytest.skip("torch rejects bool here")
    _check(lambda m, p: getattr(m, name)(p), data[key])


def test_equal_allclose_isclose(data):
    x = data["x"]
    near = x + 1e-9
    _check(lambda m, p, q: m.equal(p, q), x, x)
    _check(lambda m, p, q: m.equal(p, q), x[:, :3].copy(), x[:, :3].copy() + 1)
    _check(lambda m, p, q: m.allclose(p, q, equal_nan=True), x, near)
    _check(lambda m, p, q: m.allclose(p, q), x, near)
    _check(lambda m, p, q: m.isclose(p, q, rtol=1e-3, atol=1e-6, equal_nan=True), x, near)


def test_isin_count_nonzero(data):
    _check(lambda m, p, q: m.isin(p, q), data["i"], np.array([0, 2, -3]))
    _check(lambda m, p, q: m.isin(p, q, invert=True), data["i"], np.array([1]))
    for dim in (None, 0, 1, (0, 1)):
        _check(lambda m, p, dim=dim: m.count_nonzero(p, dim=dim), data["i"])
    _check(lambda m, p: p.count_nonzero(), data["b"])


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_with_ties_and_nan(data, descending, dim):
    # stable=True: ties keep their order, so indices are defined and must match
    _check(lambda m, p: m.sort(p, dim=dim, descending=descending, stable=True), data["x"])
    _check(lambda m, p: m.sort(p, stable=True, dim=dim, descending=descending), data["i"])
    _check(lambda m, p: p.sort(dim=dim, descending=descending, stable=True), data["b"])
    _check(lambda m, p: m.argsort(p, dim=dim, descending=descending, stable=True), data["u"])


def test_sort_shapes_and_msort(rng):
    x = rng.permutation(24).reshape(2, 3, 4).astype(np.float32)
    _check(lambda m, p: m.sort(p), x)
    _check(lambda m, p: m.sort(p.transpose(0, 2), dim=1, descending=True), x)
    _check(lambda m, p: m.msort(p), x)
    _check(lambda m, p: m.sort(p), np.array(3.0))
    _check(lambda m, p: m.sort(p, dim=0), np.zeros((0, 3)))


@pytest.mark.parametrize("largest", [True, False])
def test_topk(rng, largest):
    x = rng.permutation(20).reshape(4, 5).astype(np.float64)  # distinct: indices are defined
    for k, dim in ((2, -1), (3, 0), (0, 1), (5, 1)):
        _check(lambda m, p, k=k, dim=dim: m.topk(p, k, dim=dim, largest=largest), x)
    _check(lambda m, p: p.topk(3, largest=largest), x[0].astype(np.int64))


def test_kthvalue(rng):
    x = rng.permutation(20).reshape(4, 5).astype(np.float64)
    _check(lambda m, p: m.kthvalue(p, 2), x)
    _check(lambda m, p: m.kthvalue(p, 4, dim=0, keepdim=True), x)
    _check(lambda m, p: p.kthvalue(1, 0), x[:, 0].copy())


def test_sort_topk_values_are_differentiable(rng):
    x = rng.permutation(12).reshape(3, 4).astype(np.float64)
    cot = rng.standard_normal((3, 2))
    grads = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        out = lib.sort(t, dim=1, descending=True).values[:, :2] + lib.topk(t, 2).values
        out.backward(lib.tensor(cot))
        grads.append(t.grad)
    assert_close(*grads, what="sort/topk gradient")


def test_unique(rng):
    i = rng.integers(0, 4, size=(3, 5))
    _check(lambda m, p: m.unique(p), i)
    _check(lambda m, p: m.unique(p, return_inverse=True, return_counts=True), i)
    _check(lambda m, p: p.unique(return_counts=True), i.astype(np.float32))
    _check(lambda m, p: m.unique(p, return_inverse=True), np.array([True, False, True]))
    rows = np.array([[1, 2], [3, 4], [1, 2], [0, 9]])
    _check(lambda m, p: m.unique(p, dim=0, return_inverse=True, return_counts=True), rows)
    _check(lambda m, p: m.unique(p), np.zeros(0))


def test_unique_consecutive():
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    _check(lambda m, p: m.unique_consecutive(p), x)
    _check(lambda m, p: m.unique_consecutive(p, return_inverse=True, return_counts=True), x)
    _check(lambda m, p: p.unique_consecutive(return_counts=True), x.reshape(2, 4))


def test_searchsorted_and_bucketize():
    seq = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    values = np.array([[3.0, 6.0, 9.0], [0.0, 10.0, 5.0]])
    for right in (False, True):
        _check(lambda m, s, v, right=right: m.searchsorted(s, v, right=right), seq, values)
        _check(lambda m, v, b, right=right: m.bucketize(v, b, right=right), values, seq)
    _check(lambda m, s, v: m.searchsorted(s, v, side="right", out_int32=True), seq, values)
    batched = np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
    _check(lambda m, s, v: m.searchsorted(s, v), batched, np.array([[3.0, 6.0], [1.0, 4.0]]))
    _check(lambda m, v, b: m.bucketize(v, b, out_int32=True), np.array([2, 8]), seq)


@pytest.mark.parametrize(
    "case",
    [
        lambda m: m.eq(m.zeros(3), m.zeros(4)),
        lambda m: m.bitwise_and(m.zeros(3), m.zeros(3)),
        lambda m: m.topk(m.zeros(3), 4),
        lambda m: ~m.zeros(2),
        lambda m: m.bitwise_not(m.zeros(2)),
        lambda m: m.logical_and(m.zeros(2), 1.0),
    ],
)
def test_errors_match_torch(case):
    errors = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            case(lib)
        errors.append(info.value)
    ours, theirs = errors
    assert type(ours) is type(theirs), (ours, theirs)
    assert str(theirs).splitlines()[0].split(" (")[0] in str(ours)
