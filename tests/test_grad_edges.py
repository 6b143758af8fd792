"""Gradients at ties, kinks, zeros and non-finite upstream gradients (issue 18, part 2): the same
inputs on torch and glassgrad, values and gradients compared with NaN, inf and signed zeros.

Where an op's local derivative is identically 0, PyTorch's backward selects (``where`` /
``masked_fill``) or returns zeros, so an inf or NaN upstream gradient gives 0 there; a backward
that multiplies by a 0/1 mask gives NaN. Each case runs with the upstream gradient 1, inf and NaN.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from .adversarial_util import LIBS, _both, _same

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
    "setitem": (lambda L, x: _setitem(L, x), [[1.0, -4.0, 0.0]]),
    "index_put_": (lambda L, x: (x * 1).index_put_((L.tensor([0]),),
                                                   L.tensor([9.0], dtype=L.float64)),
                   [[1.0, -4.0, 0.0]]),
    "pow 0": (lambda L, x: x ** 0, [[0.0, 2.0, -1.0, INF]]),
    "relu": (lambda L, x: L.relu(x), [[1.0, -3.0, 0.0]]),
    "kthvalue": (lambda L, x: x.kthvalue(2).values, [[1.0, 3.0, 2.0]]),
    "gather": (lambda L, x: x.gather(0, L.tensor([0, 0])), [[1.0, 2.0, 3.0]]),
    "scatter": (lambda L, x, s: x.scatter(0, L.tensor([0]), s), [[1.0, 2.0, 3.0], [7.0]]),
    "index_fill": (lambda L, x: x.index_fill(0, L.tensor([0]), 5.0), [[1.0, -4.0, 0.0]]),
    "index_copy": (lambda L, x, s: x.index_copy(0, L.tensor([0]), s), [[1.0, -4.0], [7.0]]),
    "masked_scatter": (lambda L, x, s: x.masked_scatter(x > 0, s), [[1.0, -4.0], [7.0, 8.0]]),
    "pad crop": (lambda L, x: L.nn.functional.pad(x, (-1, 1)), [[1.0, 2.0]]),
    "embedding padding_idx": (lambda L, w: L.nn.functional.embedding(
        L.tensor([0, 1]), w.reshape(2, 1), padding_idx=0), [[1.0, 2.0]]),
    "hinge_embedding_loss": (lambda L, x: L.nn.functional.hinge_embedding_loss(
        x, L.tensor([1.0, -1.0, -1.0, 0.0], dtype=L.float64), reduction="none"),
        [[0.0, 1.0, 3.0, 0.5]]),
}


REDUCTIONS_AT_ZERO = {  # zeros in the input: PyTorch's exact rules, 0 or nan under inf/NaN grads
    "prod": lambda L, x: x.prod(),
    "prod(dim)": lambda L, x: x.reshape(2, 3).prod(1),
    "cumprod": lambda L, x: x.cumprod(0),
    "cumprod(dim 1)": lambda L, x: x.reshape(2, 3).cumprod(1),
    "norm": lambda L, x: x.norm(),
    "norm(0.5)": lambda L, x: x.norm(0.5),
    "norm(3)": lambda L, x: x.norm(3),
    "norm(1)": lambda L, x: x.norm(1),
    "std": lambda L, x: x.std(),
}
REDUCTION_INPUTS = ([0.0] * 6, [2.0, 0.0, 3.0, 0.0, 1.0, 1.0], [0.0, 2.0, 3.0, 4.0, 0.0, 5.0],
                    [2.0, 3.0, 0.0, 4.0, 5.0, 6.0], [1.0] * 6)


@pytest.mark.parametrize("up", UPSTREAM + (-2.0,))
@pytest.mark.parametrize("case", list(REDUCTIONS_AT_ZERO))
def test_reductions_at_zeros(case, up):
    for data in REDUCTION_INPUTS:
        _check(REDUCTIONS_AT_ZERO[case], [data], up)


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


def _class_loss(lib, name, shape, target, kw, nan_logit):
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape)
    if nan_logit:
        data.flat[0] = NAN
    x = lib.tensor(data, requires_grad=True)
    kw = dict(kw)
    if "weight" in kw:
        kw["weight"] = lib.tensor(kw["weight"], dtype=lib.float64)
    F = lib.nn.functional
    loss = (F.cross_entropy(x, lib.tensor(target), **kw) if name == "cross_entropy"
            else F.nll_loss(x.log_softmax(1 if x.ndim > 1 else 0), lib.tensor(target), **kw))
    loss.sum().backward()
    return [loss, x.grad]


IGNORED_TARGETS = [((3, 4), [-100, -100, -100]), ((3, 4), [1, -100, 2]),
                   ((2, 4, 3), [[-100] * 3] * 2), ((2, 4, 3), [[1, -100, 2], [-100] * 3]),
                   ((4,), -100)]
CLASS_LOSS_OPTIONS = [{}, {"label_smoothing": 0.1}, {"weight": [0.1, 0.2, 0.3, 0.4]},
                      {"weight": [0.1, 0.2, 0.3, 0.4], "label_smoothing": 0.2},
                      {"reduction": "sum"}, {"reduction": "none"}, {"weight": [0.0] * 4},
                      {"ignore_index": 1}]


@pytest.mark.parametrize("nan_logit", [False, True])
@pytest.mark.parametrize("kw", CLASS_LOSS_OPTIONS, ids=str)
@pytest.mark.parametrize("shape,target", IGNORED_TARGETS, ids=str)
@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
def test_ignored_targets_give_zero_gradient(name, shape, target, kw, nan_logit):
    """Every target ignored: PyTorch's mean is nan but the gradient 0 (one all-padding batch must
    not turn the weights to NaN); a zero class weight still gives nan (0 * grad / 0)."""
    if name == "nll_loss" and "label_smoothing" in kw:
        pytest.skip("nll_loss has no label_smoothing")
    try:
        theirs = _class_loss(LIBS[0], name, shape, target, kw, nan_logit)
    except Exception as e:  # (a target out of range once ignore_index moves)
        with pytest.raises(type(e)):
            _class_loss(LIBS[1], name, shape, target, kw, nan_logit)
        return
    _same(_class_loss(LIBS[1], name, shape, target, kw, nan_logit), theirs)


def test_all_padding_batch_leaves_weights_finite():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 4).double()
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for p, v in zip(model.parameters(), (np.ones((4, 3)), np.zeros(4))):
            with lib.no_grad():
                p.copy_(lib.tensor(v))
        loss = lib.nn.functional.cross_entropy(model(lib.ones(2, 3, dtype=lib.float64)),
                                               lib.tensor([-100, -100]))
        loss.backward()
        opt.step()
        return [loss.detach(), model.weight.detach(), model.bias.detach()]

    ours, theirs = (run(lib) for lib in LIBS[::-1])
    _same(ours, theirs)
    assert np.isfinite(ours[1].numpy()).all()


def _weighted_loss(lib, name, reduction):
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.random((3, 4)) * 0.8 + 0.1, requires_grad=True)
    t, w = lib.tensor(rng.random((3, 4))), lib.tensor(rng.random((3, 4)))
    F = lib.nn.functional
    fn = {"mse": F.mse_loss, "l1": F.l1_loss, "huber": F.huber_loss,
          "bce": F.binary_cross_entropy,
          "bce_with_logits": F.binary_cross_entropy_with_logits}[name]
    loss = fn(x, t, weight=w, reduction=reduction)
    loss.sum().backward()
    return [loss, x.grad]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["mse", "l1", "huber", "bce", "bce_with_logits"])
def test_weighted_losses_reduce_as_torch(name, reduction):
    """torch 2.13: weighted mse/l1 'mean' is sum(w * loss) / sum(w); huber's is mean(w * loss)."""
    ours, theirs = (_weighted_loss(lib, name, reduction) for lib in LIBS[::-1])
    _same(ours, theirs)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weighted_loss_weight_of_another_size_raises(name):
    for lib in LIBS:
        x = lib.ones(3, 4)
        with pytest.raises(ValueError, match="Weights and input must have the same size"):
            getattr(lib.nn.functional, name)(x, x, weight=lib.ones(4))


def _inplace_cases(lib):
    F, nn = lib.nn.functional, lib.nn
    return {
        "relu": lambda t: F.relu(t, inplace=True), "relu6": lambda t: F.relu6(t, inplace=True),
        "hardtanh": lambda t: F.hardtanh(t, -0.5, 0.5, True),
        "leaky_relu": lambda t: F.leaky_relu(t, 0.2, True), "elu": lambda t: F.elu(t, 1.5, True),
        "selu": lambda t: F.selu(t, True), "celu": lambda t: F.celu(t, 0.5, True),
        "silu": lambda t: F.silu(t, True), "mish": lambda t: F.mish(t, True),
        "hardsigmoid": lambda t: F.hardsigmoid(t, True),
        "hardswish": lambda t: F.hardswish(t, True),
        "threshold": lambda t: F.threshold(t, 0.1, 20.0, True),
        "elu_": F.elu_, "leaky_relu_": lambda t: F.leaky_relu_(t, 0.1), "hardtanh_": F.hardtanh_,
        "threshold_": lambda t: F.threshold_(t, 0.0, 1.0), "celu_": F.celu_, "selu_": F.selu_,
        "dropout eval": lambda t: F.dropout(t, 0.5, False, True),
        "dropout p=1": lambda t: F.dropout(t, 1.0, True, True),
        "dropout2d p=1": lambda t: F.dropout2d(t.reshape(1, 2, 2, 1), 1.0, True, True),
        "ReLU6": nn.ReLU6(inplace=True), "ELU": nn.ELU(inplace=True),
        "LeakyReLU": nn.LeakyReLU(inplace=True), "SiLU": nn.SiLU(inplace=True),
        "Mish": nn.Mish(inplace=True), "Hardswish": nn.Hardswish(inplace=True),
        "Hardsigmoid": nn.Hardsigmoid(inplace=True), "Threshold": nn.Threshold(0.0, 2.0, True),
        "SELU": nn.SELU(inplace=True), "CELU": nn.CELU(inplace=True),
        "Hardtanh": nn.Hardtanh(inplace=True), "Dropout p=1": nn.Dropout(1.0, inplace=True),
    }


def _inplace_run(lib, name, mode):
    fn = _inplace_cases(lib)[name]
    data = [-2.0, -0.3, 0.2, 1.5]
    if mode in ("leaf", "view of a leaf"):
        a = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        try:
            fn(a if mode == "leaf" else a[:])
        except RuntimeError as e:
            return str(e).splitlines()[0]
        return "accepted"
    if mode == "no_grad leaf":
        a = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        with lib.no_grad():
            out = fn(a)
        return [out is a or out._version == a._version, a._version, a.detach()]
    a = lib.tensor(data, dtype=lib.float64, requires_grad=True)
    y = a * 1
    out = fn(y)
    (out * lib.arange(4, dtype=lib.float64)).sum().backward()
    return [out is y or out._version == y._version, y._version, y.detach(), a.grad]


@pytest.mark.parametrize("mode", ["non-leaf", "leaf", "view of a leaf", "no_grad leaf"])
@pytest.mark.parametrize("name", list(_inplace_cases(LIBS[0])))
def test_inplace_functionals_write_into_their_input(name, mode):
    """inplace=True modifies the input and returns it (version bump, the same gradients), and
    PyTorch's leaf errors; ``dropout`` outside training returns the input untouched."""
    ours, theirs = (_inplace_run(lib, name, mode) for lib in LIBS[::-1])
    _same(ours, theirs)


def _retained(lib, inputs, hook, twice, create_graph):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    if hook:
        y.register_hook(lambda g: g * 2)
    z = (y * y).sum()
    chosen = {"y": [y], "y, x": [y, x]}[inputs]
    z.backward(inputs=chosen, retain_graph=twice, create_graph=create_graph)
    if twice:
        z.backward(inputs=chosen)
    return [y.grad.detach(), x.grad]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("twice", [False, True])
@pytest.mark.parametrize("hook", [False, True])
@pytest.mark.parametrize("inputs", ["y", "y, x"])
def test_retain_grad_and_backward_inputs_store_once(inputs, hook, twice, create_graph):
    """``y.retain_grad()`` and ``backward(inputs=[y])``: y.grad is the (hooked) gradient once."""
    if twice and create_graph:
        pytest.skip("one create_graph backward is enough here")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (create_graph's reference-cycle warning)
        ours, theirs = (_retained(lib, inputs, hook, twice, create_graph) for lib in LIBS[::-1])
    _same(ours, theirs)


def test_trace_gradient_keeps_nan_upstream_on_the_diagonal():
    # glassgrad multiplied by the identity: a NaN upstream (var of one value) made every entry NaN
    def run(lib):
        x = lib.tensor([[2.0, 1.0], [0.5, -1.0]], requires_grad=True)
        x.trace().var().backward()
        return x.grad

    _same(*_both(run), "trace")
