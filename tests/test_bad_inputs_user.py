"""Bad input a new user meets (integer division by zero, bad factory and random arguments, ragged
lists, wrong loss targets, non-int sizes, mixed linear dtypes): glassgrad raises PyTorch's
exception type with PyTorch's key phrase (torch's first message line, or the given part), then a
"glassgrad:" sentence; never a raw NumPy error. Where PyTorch is silent (log(0), sqrt(-1), float
division by zero) glassgrad emits no warning, and where PyTorch warns (var with too few elements)
it warns the same."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad


def _f(m):
    return m.nn.functional


def _i(m, values, dtype=None):
    return m.tensor(values, dtype=dtype or m.int64)


# (id, fn(lib), key phrase or None for torch's whole first line)
CASES = [
    # 1. integer division by zero
    ("// tensor zero", lambda m: _i(m, [1, 5]) // _i(m, [0, 2]), None),
    ("% tensor zero", lambda m: _i(m, [1, 5]) % _i(m, [0, 2]), None),
    ("// int zero", lambda m: _i(m, [1, 5]) // 0, None),
    ("number // tensor zero", lambda m: 5 // _i(m, [0, 2]), None),
    ("number % tensor zero", lambda m: 5 % _i(m, [0, 2]), None),
    ("//= zero", lambda m: _i(m, [1, 5]).__ifloordiv__(0), None),
    ("remainder zero", lambda m: m.remainder(_i(m, [1, 5]), 0), None),
    ("fmod zero", lambda m: m.fmod(_i(m, [1, 5]), 0), None),
    ("fmod tensor zero", lambda m: m.fmod(_i(m, [1, 5]), _i(m, [0, 2])), None),
    ("fmod_ zero", lambda m: _i(m, [1, 5]).fmod_(0), None),
    ("div floor zero", lambda m: m.div(_i(m, [1, 5]), _i(m, [0, 2]), rounding_mode="floor"), None),
    ("div trunc zero", lambda m: m.div(_i(m, [1, 5]), 0, rounding_mode="trunc"), None),
    ("uint8 // zero", lambda m: _i(m, [1, 5], m.uint8) // 0, None),
    ("broadcast // zero", lambda m: _i(m, [[1], [2]]) // _i(m, [0, 1]), None),
    ("bool // bool", lambda m: m.tensor([True]) // m.tensor([False]), None),
    ("bool remainder", lambda m: m.remainder(m.tensor([True]), m.tensor([False])), None),
    # 2. factories and samplers: no raw NumPy errors
    ("eye negative", lambda m: m.eye(-1), None),
    ("eye negative m", lambda m: m.eye(2, -1), None),
    ("eye float", lambda m: m.eye(2.5), None),
    ("randint low >= high", lambda m: m.randint(5, 2, (3,)), None),
    ("randint empty range", lambda m: m.randint(5, 5, (3,)), None),
    ("randint negative high", lambda m: m.randint(-1, (3,)), None),
    ("randint_like", lambda m: m.randint_like(m.zeros(2), 5, 2), None),
    ("multinomial negative", lambda m: m.multinomial(m.tensor([-1.0, 2.0]), 1), None),
    ("multinomial nan", lambda m: m.multinomial(m.tensor([float("nan"), 1.0]), 1), None),
    ("multinomial inf", lambda m: m.multinomial(m.tensor([float("inf"), 1.0]), 1), None),
    ("multinomial zero row", lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1), None),
    ("multinomial too many", lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3), None),
    ("multinomial no samples", lambda m: m.multinomial(m.tensor([1.0, 2.0]), 0), None),
    ("multinomial 3-d", lambda m: m.multinomial(m.ones(1, 1, 2), 1), None),
    ("multinomial int", lambda m: m.multinomial(_i(m, [1, 2]), 1), None),
    ("linspace negative steps", lambda m: m.linspace(0, 1, -1), None),
    ("logspace negative steps", lambda m: m.logspace(0, 1, -1), None),
    ("arange wrong step sign", lambda m: m.arange(0, 5, -1), None),
    ("arange float wrong sign", lambda m: m.arange(0.0, 1.0, -0.5), None),
    ("arange inf", lambda m: m.arange(0, float("inf")), None),
    ("arange nan", lambda m: m.arange(0, float("nan")), None),
    ("uniform_ from > to", lambda m: m.empty(2).uniform_(1, 0), None),
    ("random_ from >= to", lambda m: m.empty(2).random_(5, 2), None),
    ("random_ to 0", lambda m: m.empty(2).random_(0), None),
    ("exponential_ lambda", lambda m: m.empty(2).exponential_(-1), None),
    ("geometric_ p", lambda m: m.empty(2).geometric_(1), None),
    ("log_normal_ std", lambda m: m.empty(2).log_normal_(0, 0), None),
    ("cauchy_ sigma", lambda m: m.empty(2).cauchy_(0, -1), None),
    ("tensor ragged", lambda m: m.tensor([[1, 2], [3]]), None),
    ("tensor ragged first", lambda m: m.tensor([[1], [2, 3]]), None),
    ("tensor ragged deep", lambda m: m.tensor([[[1, 2], [3, 4]], [[1, 2], [3]]]), None),
    ("tensor number among rows", lambda m: m.tensor([[1, 2], 3]), None),
    ("tensor row among ints", lambda m: m.tensor([1, [2, 3]]), None),
    ("tensor row among floats", lambda m: m.tensor([1.0, [2.0, 3.0]]), None),
    # 3. silently accepted before
    ("randperm negative", lambda m: m.randperm(-1), None),
    ("randperm float", lambda m: m.randperm(3.5), None),
    ("normal std < 0", lambda m: m.normal(0.0, -1.0, (2,)), None),
    ("normal std nan", lambda m: m.normal(0.0, float("nan"), (2,)), None),
    ("normal tensor std < 0", lambda m: m.normal(m.zeros(2), m.tensor([1.0, -1.0])), None),
    ("normal tensor mean", lambda m: m.normal(m.zeros(2), -1.0), None),
    ("normal_ std < 0", lambda m: m.empty(2).normal_(0, -1), None),
    ("bernoulli_ p > 1", lambda m: m.rand(2).bernoulli_(2.0), None),
    ("bernoulli_ p < 0", lambda m: m.rand(2).bernoulli_(-0.1), None),
    ("bernoulli_ tensor p", lambda m: m.rand(2).bernoulli_(m.tensor([2.0, 0.5])), "Expected p_in"),
    ("bernoulli input > 1", lambda m: m.bernoulli(m.tensor([2.0])), "Expected p_in"),
    ("bernoulli p > 1", lambda m: m.bernoulli(m.rand(2), 2.0), None),
    ("tensor of tensors", lambda m: m.tensor([m.ones(2), m.ones(2)]), None),
    ("tensor None", lambda m: m.tensor(None), None),
    ("tensor None in list", lambda m: m.tensor([1, None]), None),
    ("tensor None nested", lambda m: m.tensor([[1.0], [None]]), None),
    ("tensor dict", lambda m: m.tensor({}), None),
    # 4. messages
    ("cross_entropy float target", lambda m: _f(m).cross_entropy(
        m.zeros(4, 3), m.tensor([0.0, 1.0, 2.0, 0.0])), None),
    ("cross_entropy int32 target", lambda m: _f(m).cross_entropy(
        m.zeros(4, 3), _i(m, [0, 1, 2, 0], m.int32)), None),
    ("cross_entropy bool target", lambda m: _f(m).cross_entropy(
        m.zeros(4, 3), m.tensor([True, False, True, True])), None),
    ("cross_entropy 2-d float target", lambda m: _f(m).cross_entropy(
        m.zeros(4, 3), m.zeros(4, 2)), None),
    ("cross_entropy batch", lambda m: _f(m).cross_entropy(m.zeros(4, 3), m.zeros(5, 3)), None),
    ("cross_entropy (N, C, d) float", lambda m: _f(m).cross_entropy(
        m.zeros(4, 3, 2), m.zeros(4, 2)), None),
    ("cross_entropy (N, C, d) size", lambda m: _f(m).cross_entropy(
        m.zeros(4, 3, 2), _i(m, [0, 1, 2, 0])), None),
    ("nll_loss float target", lambda m: _f(m).nll_loss(
        m.zeros(4, 3), m.tensor([0.0, 1.0, 2.0, 0.0])), None),
    ("nll_loss 1-d target size", lambda m: _f(m).nll_loss(m.zeros(3), _i(m, [1, 2])), None),
    ("view str", lambda m: m.zeros(2).view("a"), "received an invalid combination of arguments"),
    ("view float", lambda m: m.zeros(2).view(2.0), "received an invalid combination of arguments"),
    ("view bool", lambda m: m.zeros(2).view(True), "received an invalid combination of arguments"),
    ("reshape str", lambda m: m.zeros(2).reshape("a"), None),
    ("reshape float", lambda m: m.zeros(2).reshape(2.0), None),
    ("permute float", lambda m: m.zeros(2).permute(0.0), None),
    ("expand float", lambda m: m.zeros(2).expand(2.0), None),
    ("repeat float", lambda m: m.zeros(2).repeat(2.0), None),
    ("repeat str", lambda m: m.zeros(2).repeat("a"), None),
    ("tile float", lambda m: m.zeros(2).tile(2.0), None),
    ("tile tuple of float", lambda m: m.tile(m.zeros(2), (2.0,)), "must be tuple of ints"),
    ("Linear float64 input", lambda m: m.nn.Linear(2, 2)(m.zeros(1, 2, dtype=m.float64)), None),
    ("Linear float64 3-d input", lambda m: m.nn.Linear(2, 2)(m.zeros(3, 1, 2, dtype=m.float64)),
     None),
    ("linear float64 bias", lambda m: _f(m).linear(
        m.zeros(1, 2), m.zeros(2, 2), m.zeros(2, dtype=m.float64)), None),
    ("linear float64 weight", lambda m: _f(m).linear(
        m.zeros(1, 2), m.zeros(2, 2, dtype=m.float64), m.zeros(2)), None),
    ("linear no bias", lambda m: _f(m).linear(m.zeros(1, 2, dtype=m.float64), m.zeros(2, 2)), None),
]


def _raise(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return info.value


@pytest.mark.parametrize("fn,key", [pytest.param(f, k, id=i) for i, f, k in CASES])
def test_error_matches_torch(fn, key):
    theirs = _raise(fn, torch)
    ours = _raise(fn, glassgrad)
    assert type(ours) is type(theirs), f"{type(ours).__name__}: {ours}\ntorch: {theirs!r}"
    phrase = key if key is not None else str(theirs).split("\n")[0]
    if type(theirs) is KeyError:
        phrase = phrase.strip("'\"")
    text = str(ours)
    assert phrase in text, f"torch: {theirs}\nglassgrad: {ours}"
    assert "\nglassgrad: " in text, f"no glassgrad explanation: {ours}"
    assert "numpy" not in text.lower(), text


# --- what stays legal, compared by value -------------------------------------------------------
def _values(fn):
    theirs, ours = fn(torch), fn(glassgrad)
    assert ours.dtype.__repr__().split(".")[-1] == theirs.dtype.__repr__().split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("fn", [
    pytest.param(lambda m: _i(m, [7, -7, 7, -7, 0]) // _i(m, [2, 2, -2, -2, 3]), id="//"),
    pytest.param(lambda m: _i(m, [7, -7, 7, -7, 0]) % _i(m, [2, 2, -2, -2, 3]), id="%"),
    pytest.param(lambda m: m.fmod(_i(m, [7, -7, 7, -7]), _i(m, [2, 2, -2, -2])), id="fmod"),
    pytest.param(lambda m: m.div(_i(m, [7, -7, 7, -7, 6, 2**62 + 1]), _i(m, [2, 2, -2, -2, 3, 3]),
                                 rounding_mode="trunc"), id="div trunc (exact)"),
    pytest.param(lambda m: m.div(_i(m, [7, -7]), 2, rounding_mode="floor"), id="div floor"),
    pytest.param(lambda m: _i(m, [], m.int64) // 0, id="empty // 0"),
    pytest.param(lambda m: m.tensor([1.0, -1.0, 0.0]) // 0, id="float // 0"),
    pytest.param(lambda m: m.tensor([1.0, -1.0, 0.0]) % 0, id="float % 0"),
    pytest.param(lambda m: m.fmod(m.tensor([1.0, -1.0]), 0.0), id="float fmod 0"),
    pytest.param(lambda m: m.tensor([1.0]) // _i(m, [0]), id="float // int 0"),
    pytest.param(lambda m: m.tensor([m.ones(1), m.ones(1, 1)]), id="one-element tensors"),
    pytest.param(lambda m: m.tensor([m.tensor(1.0), m.tensor(2.0)]), id="0-d tensors"),
    pytest.param(lambda m: m.eye(0), id="eye(0)"),
    pytest.param(lambda m: m.linspace(0, 1, 0), id="linspace 0 steps"),
    pytest.param(lambda m: m.arange(5, 0, -1), id="arange down"),
    pytest.param(lambda m: m.arange(1, 1, -1), id="arange empty"),
    pytest.param(lambda m: m.randperm(0), id="randperm(0)"),
    pytest.param(lambda m: m.arange(6).view(m.tensor(3), 2), id="0-d tensor size"),
    pytest.param(lambda m: m.normal(0.0, 0.0, (2,)), id="normal std 0"),
    pytest.param(lambda m: m.empty(2).uniform_(1, 1), id="uniform_ empty range"),
    pytest.param(lambda m: m.zeros(2).bernoulli_(1.0), id="bernoulli_ p=1"),
])
def test_legal_values_match_torch(fn):
    _values(fn)


@pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])
def test_random_fills_in_range(lib):
    lib.manual_seed(0)
    assert ((lib.empty(100).random_() >= 0) & (lib.empty(100).random_() <= 2**24)).all()
    assert lib.empty(100, dtype=lib.int64).random_().min() >= 0
    r = lib.empty(100).random_(5)
    assert ((r >= 0) & (r < 5) & (r == r.floor())).all()
    b = lib.empty(100).bernoulli_(lib.tensor([0.0, 1.0]).repeat(50))
    assert (b == lib.tensor([0.0, 1.0]).repeat(50)).all()
    assert lib.multinomial(lib.tensor([0.0, 1.0, 0.0]), 1).item() == 1


def test_loss_one_sample_matches_torch():
    x = [0.1, 0.5, -0.2]
    for fn in ("nll_loss", "cross_entropy"):
        ours = getattr(glassgrad.nn.functional, fn)(glassgrad.tensor(x), glassgrad.tensor([1]))
        theirs = getattr(torch.nn.functional, fn)(torch.tensor(x), torch.tensor([1]))
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-6)
    x = [[0.1, 0.2, 0.3], [0.5, -0.1, 0.2], [0.0, 1.0, 2.0], [1.0, 1.0, 0.0]]
    ours, theirs = (m.nn.functional.cross_entropy(m.tensor(x), m.tensor([0, 1, 2, 0], dtype=m.uint8))
                    for m in (glassgrad, torch))
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-6)


# --- warnings: none where PyTorch is silent, PyTorch's where it warns ---------------------------
def _x(m):
    return m.tensor([-1.0, 0.0, 2.0])


SILENT = [
    ("log", lambda m: m.log(_x(m))),
    ("log2", lambda m: m.log2(_x(m))),
    ("log10", lambda m: m.log10(_x(m))),
    ("log1p", lambda m: m.log1p(_x(m) - 1)),
    ("sqrt", lambda m: m.sqrt(_x(m))),
    ("rsqrt", lambda m: m.rsqrt(_x(m))),
    ("reciprocal", lambda m: m.reciprocal(_x(m))),
    ("asin", lambda m: m.asin(_x(m) * 2)),
    ("acos", lambda m: m.acos(_x(m) * 2)),
    # (exp overflow still warns: an errstate per call would cost more than a small exp)
    ("expm1 overflow", lambda m: m.expm1(m.tensor([1000.0]))),
    ("sinh overflow", lambda m: m.sinh(m.tensor([1000.0]))),
    ("cosh overflow", lambda m: m.cosh(m.tensor([1000.0]))),
    ("tensor / tensor zero", lambda m: _x(m) / m.zeros(3)),
    ("number / tensor", lambda m: 1 / _x(m)),
    ("div", lambda m: m.div(_x(m), m.zeros(3))),
    ("pow 0.5", lambda m: _x(m) ** 0.5),
    ("pow -1", lambda m: m.zeros(1) ** -1),
    ("pow tensor", lambda m: _x(m) ** m.tensor([0.5, -1.0, 1.0])),
    ("number ** tensor", lambda m: 0.0 ** m.tensor([-1.0])),
    ("float //", lambda m: _x(m) // m.zeros(3)),
    ("float %", lambda m: _x(m) % m.zeros(3)),
    ("float fmod", lambda m: m.fmod(_x(m), m.zeros(3))),
    ("float div floor", lambda m: m.div(_x(m), m.zeros(3), rounding_mode="floor")),
    ("float div trunc", lambda m: m.div(_x(m), m.zeros(3), rounding_mode="trunc")),
    ("int div trunc", lambda m: m.div(_i(m, [7, -7]), 2, rounding_mode="trunc")),
]


def _caught(fn, lib):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn(lib)
    return out, [str(w.message) for w in got]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in SILENT])
def test_no_warning_where_torch_is_silent(fn):
    theirs, their_warnings = _caught(fn, torch)
    ours, our_warnings = _caught(fn, glassgrad)
    assert their_warnings == []
    assert our_warnings == [], our_warnings
    np.testing.assert_allclose(ours.double().numpy(), theirs.double().numpy(), rtol=1e-3,
                               equal_nan=True)


@pytest.mark.parametrize("fn", [
    pytest.param(lambda m: m.tensor([1.0]).std(), id="std"),
    pytest.param(lambda m: m.tensor([1.0]).var(), id="var"),
    pytest.param(lambda m: m.tensor([[1.0]]).std(dim=1), id="std dim"),
    pytest.param(lambda m: m.tensor([1.0, 2.0]).var(correction=3), id="var correction"),
    pytest.param(lambda m: m.var_mean(m.tensor([1.0]))[0], id="var_mean"),
    pytest.param(lambda m: m.std_mean(m.tensor([1.0]))[0], id="std_mean"),
])
def test_degrees_of_freedom_warning_matches_torch(fn):
    theirs, their_warnings = _caught(fn, torch)
    ours, our_warnings = _caught(fn, glassgrad)
    assert len(their_warnings) == len(our_warnings) == 1, our_warnings
    assert their_warnings[0].split(" (Triggered")[0] == our_warnings[0]
    np.testing.assert_allclose(ours.double().numpy(), theirs.double().numpy(), equal_nan=True)


@pytest.mark.parametrize("values", [
    [float("inf"), float("nan"), -float("inf")], [1.0, float("inf")], [1.5, float("nan")],
    [float("nan")], [1e10, float("inf")], [1e-6, 2.0, float("nan")], float("nan"),
], ids=str)
def test_repr_of_non_finite_values_matches_torch(values):
    assert repr(glassgrad.tensor(values)) == repr(torch.tensor(values))


def test_division_by_a_zero_number_is_silent_with_torch_gradients():
    results = []
    for lib in (glassgrad, torch):
        x = lib.tensor([1.0, 0.0, -1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = x / 0
            y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
