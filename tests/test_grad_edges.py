"""Gradients at ties, kinks, zeros and non-finite upstream gradients (issue 18, part 2): the same
inputs on torch and glassgrad, values and gradients compared with NaN, inf and signed zeros.

Where an op's local derivative is identically 0, PyTorch's backward selects (``where`` /
``masked_fill``) or returns zeros, so an inf or NaN upstream gradient gives 0 there; a backward
that multiplies by a 0/1 mask gives NaN. Each case runs with the upstream gradient 1, inf and NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from .adversarial_util import LIBS, _same

INF, NAN = math.inf, math.nan
UPSTREAM = (1.0, INF, NAN)


def _grads(lib, fn, inputs, up):
    """``fn(lib, *leaves)`` backpropagated with an upstream gradient full of ``up``: the output,
    and each leaf's gradient."""
    leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in inputs]
    out = fn(lib, *leaves)
    out.backward(lib.full_like(out, up))
    return out.detach(), [t.grad for t in leaves]


def _check(fn, inputs, up):
    ours, theirs = (_grads(lib, fn, inputs, up) for lib in LIBS[::-1])
    _same(ours[0], theirs[0], "value")
    for i, (a, b) in enumerate(zip(ours[1], theirs[1])):
        what = f"grad {i} (upstream {up})"
        if b is None or a is None:
            assert a is None or not np.any(a.numpy()), what
            assert b is None or not np.any(b.numpy()), what
        else:
            _same(a, b, what)
            # signed zeros too: PyTorch's selections give +0 or the upstream's sign
            a, b = a.numpy(), b.numpy()
            signed = ~np.isnan(b)
            np.testing.assert_array_equal(np.signbit(a[signed]), np.signbit(b[signed]), what)


def _zeroed(lib, x):
    b = x * 1
    b.zero_()
    return b


ZERO_DERIVATIVE = {  # torch's result is an exact 0 wherever the local derivative is 0
    "zero_": (_zeroed, [[1.0, 2.0]]),
    "zero_ then sqrt (the issue's repro)": (lambda L, x: _zeroed(L, x).sqrt(), [[1.0, 2.0]]),
    "fill_": (lambda L, x: (x * 1).fill_(3.0), [[1.0, 2.0]]),
    "fill_ tensor": (lambda L, x: (x * 1).fill_(L.tensor(3.0, dtype=L.float64)), [[1.0, 2.0]]),
    "copy_": (lambda L, x, s: (x * 1).copy_(s), [[1.0, 2.0], [5.0, 6.0]]),
    "clamp": (lambda L, x: x.clamp(0, 1), [[-1.0, 0.5, 2.0, 0.0, 1.0, NAN]]),
    "clamp_min": (lambda L, x: x.clamp_min(0), [[-1.0, 0.5, 2.0, 0.0]]),
    "clamp_max": (lambda L, x: x.clamp_max(0), [[-1.0, 0.5, 2.0, 0.0]]),
    "clamp min > max": (lambda L, x: x.clamp(1, 0), [[-1.0, 0.5, 2.0]]),
    "clamp_ in place": (lambda L, x: (x * 1).clamp_(0, 1), [[-1.0, 0.5, 2.0]]),
    "max()": (lambda L, x: x.max(), [[1.0, 3.0, 2.0]]),
    "max() tie": (lambda L, x: x.max(), [[3.0, 3.0, 2.0]]),
    "min()": (lambda L, x: x.min(), [[1.0, 3.0, 2.0]]),
    "max() nan": (lambda L, x: x.max(), [[1.0, NAN, 2.0]]),
    "max(dim)": (lambda L, x: x.max(1).values, [[[1.0, 3.0], [2.0, 2.0]]]),
    "min(dim)": (lambda L, x: x.min(0).values, [[[1.0, 3.0], [2.0, 2.0]]]),
    "amax (torch multiplies by the mask)": (lambda L, x: x.amax(0), [[1.0, 3.0, 3.0]]),
    "amin": (lambda L, x: x.amin(), [[1.0, 3.0, 1.0]]),
    "sort": (lambda L, x: x.sort().values[:2], [[1.0, 3.0, 2.0]]),
    "topk": (lambda L, x: x.topk(2).values, [[1.0, 3.0, 2.0]]),
    "maximum": (lambda L, x, y: L.maximum(x, y), [[1.0, 3.0, 2.0, NAN], [2.0, 2.0, 2.0, 1.0]]),
    "minimum": (lambda L, x, y: L.minimum(x, y), [[1.0, 3.0, 2.0, NAN], [2.0, 2.0, 2.0, 1.0]]),
    "maximum broadcast": (lambda L, x, y: L.maximum(x, y), [[[1.0], [3.0]], [2.0, 3.0]]),
    "sign": (lambda L, x: x.sign(), [[1.0, -3.0, 0.0]]),
    "floor": (lambda L, x: x.floor(), [[1.5, -3.0, 0.0]]),
    "ceil": (lambda L, x: x.ceil(), [[1.5, -3.0, 0.0]]),
    "round": (lambda L, x: x.round(), [[1.5, -3.0, 0.0]]),
    "round(decimals)": (lambda L, x: x.round(decimals=1), [[1.55, -3.0, 0.0]]),
    "trunc": (lambda L, x: x.trunc(), [[1.5, -3.0, 0.0]]),
    "frac": (lambda L, x: x.frac(), [[1.5, -3.0, 0.0]]),
    "floor_ in place": (lambda L, x: (x * 1).floor_(), [[1.5, -3.0]]),
    "where": (lambda L, x, y: L.where(x > 0, x, y), [[1.0, -4.0, 0.0], [1.0, 1.0, 1.0]]),
    "masked_fill": (lambda L, x: x.masked_fill(x > 0, 0.0), [[1.0, -4.0, 0.0]]),
    "index_put_": (lambda L, x: (x * 1).index_put_((L.tensor([0]),),
                                                   L.tensor([9.0], dtype=L.float64)),
                   [[1.0, -4.0, 0.0]]),
    "pow 0": (lambda L, x: x ** 0, [[0.0, 2.0, -1.0, INF]]),
    "relu": (lambda L, x: L.relu(x), [[1.0, -3.0, 0.0]]),
}


@pytest.mark.parametrize("up", UPSTREAM)
@pytest.mark.parametrize("case", list(ZERO_DERIVATIVE))
def test_zero_derivative_with_non_finite_upstream(case, up):
    fn, inputs = ZERO_DERIVATIVE[case]
    _check(fn, inputs, up)


def _setitem(lib, x):
    b = x * 1
    b[0] = 5.0
    return b


CLAMP_TENSOR = {  # tensor bounds: a tie gives x the gradient (never a 0.5/0.5 split)
    "both": (lambda L, x, a, b: x.clamp(a, b), [[-1.0, 0.5, 2.0, 0.0, 1.0, NAN], [0.0] * 6,
                                               [1.0] * 6]),
    "min only": (lambda L, x, a: x.clamp(min=a), [[-1.0, 0.5, 0.0], [0.0] * 3]),
    "max only": (lambda L, x, b: x.clamp(max=b), [[-1.0, 0.5, 0.0], [0.0] * 3]),
    "min > max": (lambda L, x, a, b: x.clamp(a, b), [[-1.0, 0.5, 2.0], [1.0] * 3, [0.0] * 3]),
    "min == max": (lambda L, x, a, b: x.clamp(a, b), [[-1.0, 0.5, 2.0], [0.5] * 3, [0.5] * 3]),
    "clamp_min": (lambda L, x, a: L.clamp_min(x, a), [[-1.0, 0.5, 0.0], [0.0] * 3]),
    "clamp_max": (lambda L, x, b: L.clamp_max(x, b), [[-1.0, 0.5, 0.0], [0.0] * 3]),
    "broadcast bound": (lambda L, x, a: x.clamp(min=a), [[[-1.0, 0.5], [0.0, 3.0]], [0.0]]),
    "setitem": (_setitem, [[1.0, -4.0, 0.0]]),
}


@pytest.mark.parametrize("up", UPSTREAM)
@pytest.mark.parametrize("case", list(CLAMP_TENSOR))
def test_clamp_tensor_bounds(case, up):
    fn, inputs = CLAMP_TENSOR[case]
    _check(fn, inputs, up)


def test_clamp_tensor_bounds_node_names_and_dtype():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        t = lib.tensor([1.5], dtype=lib.float64)
        assert x.clamp(t, t).grad_fn.name() == "ClampBackward0"
        assert x.clamp(min=t).grad_fn.name() == "ClampBackward0"
        assert lib.clamp_min(x, t).grad_fn.name() == "ClampMinBackward1"
        assert lib.clamp_max(x, t).grad_fn.name() == "ClampMaxBackward1"
        assert x.clamp(t, t).dtype == lib.float64
        assert lib.tensor([1, 2]).clamp(min=lib.tensor(1.5)).dtype == lib.float32


POW_BASES = (0.0, -0.0, 2.0, -2.0, INF, 0.5)
POW_EXPONENTS = (2.0, 1.0, 0.0, -1.0, -2.0, 3.0, INF, -INF)


@pytest.mark.parametrize("up", UPSTREAM)
@pytest.mark.parametrize("base", POW_BASES)
def test_pow_at_zero_base(base, up):
    """``x ** n``, ``x ** y`` and ``n ** y`` at every base/exponent pair (0 ** y for y < 0 is
    -inf with respect to y, as in PyTorch)."""
    for e in POW_EXPONENTS:
        _check(lambda L, x: x ** e, [[base]], up)
        _check(lambda L, x, y: x ** y, [[base], [e]], up)
        _check(lambda L, y: base ** y, [[e]], up)


@pytest.mark.parametrize("up", UPSTREAM)
def test_atan2_at_origin(up):
    _check(lambda L, x, y: L.atan2(x, y), [[0.0, 0.0, 1e-200, INF, 0.0, 1.0],
                                           [0.0, -0.0, 0.0, 1.0, INF, 0.0]], up)


def _activation(lib, name):
    F = lib.nn.functional
    special = {
        "threshold": lambda t: F.threshold(t, 0.5, 2.0),
        "prelu": lambda t: F.prelu(t, lib.tensor([0.25], dtype=t.dtype)),
        "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
        "softplus_beta": lambda t: F.softplus(t, beta=2.0, threshold=5.0),
        "hardtanh_bounds": lambda t: F.hardtanh(t, -0.5, 2.0),
        "sigmoid": lib.sigmoid,
        "tanh": lib.tanh,
    }
    return special.get(name) or getattr(F, name)


ACTIVATIONS = ("relu relu6 hardtanh hardtanh_bounds leaky_relu elu selu celu gelu gelu_tanh silu "
               "mish softplus softplus_beta hardsigmoid hardswish hardshrink softshrink tanhshrink "
               "softsign logsigmoid sigmoid tanh threshold prelu").split()
# the kinks (0, +-0.5, +-1, +-3, 6), the flat parts and the non-finite values
# NOTE: 64 elements: PyTorch's gradient at a NaN input differs between its vectorised loop and the
# scalar tail (hardtanh: 0 and 1); every element here is in the vectorised part, the usual case
ACTIVATION_X = [NAN, INF, -INF, -5.0, -3.0, -1.0, -0.5, 0.0, 0.3, 0.5, 1.0, 2.0, 3.0, 6.0, 7.0,
                25.0] * 4


@pytest.mark.parametrize("up", UPSTREAM)
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_at_kinks_nan_and_non_finite_upstream(name, up):
    """Values and gradients at NaN/inf inputs (hardshrink/softshrink/threshold keep NaN, NaN
    passes the gradient of hardtanh/elu/hardswish) and under inf/NaN upstream gradients (silu and
    mish give -inf where their slope is negative, hardswish 0 below -3)."""
    _check(lambda L, x: _activation(L, name)(x), [ACTIVATION_X], up)
