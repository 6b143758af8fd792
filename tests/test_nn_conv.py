"""Convolution and pooling against torch: forward, gradients of input/weight/bias, double
backward (gradient-penalty style), PyTorch's error messages, modules and their default init."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.ops import conv as conv_ops
from tests.nn_oracle import check_module
from tests.oracle import assert_close

TOL = {np.float64: (1e-10, 1e-8), np.float32: (1e-4, 1e-4)}

# (input shape, weight shape, bias?, kwargs): stride 1/2, padding 0/1/'same', dilation 2,
# groups 2, odd sizes, asymmetric everything
CONV2D = [
    ((2, 3, 7, 9), (4, 3, 3, 3), True, {}),
    ((2, 3, 7, 9), (4, 3, 3, 3), True, {"stride": 2}),
    ((2, 3, 7, 9), (4, 3, 3, 3), False, {"padding": 1}),
    ((2, 3, 7, 9), (4, 3, 2, 3), True, {"padding": "same"}),
    ((2, 3, 8, 7), (4, 3, 3, 3), True, {"padding": "valid", "stride": (1, 2)}),
    ((2, 3, 9, 9), (5, 3, 3, 3), True, {"dilation": 2, "padding": 2}),
    ((2, 4, 7, 7), (6, 2, 3, 3), True, {"groups": 2, "stride": 2, "padding": 1}),
    ((1, 6, 5, 6), (6, 1, 3, 2), True, {"groups": 6, "padding": (1, 0)}),  # depthwise
    ((3, 2, 5, 5), (3, 2, 1, 1), True, {"padding": 1}),  # padding wider than the kernel
    ((2, 16, 6, 6), (8, 16, 3, 3), True, {"padding": 1}),  # adjoint as a conv, one-GEMM dW
    ((2, 2, 6, 5), (8, 2, 3, 3), True, {"padding": 1}),  # few input channels: col2im adjoint
    ((2, 3, 11, 10), (4, 3, 5, 4), True, {"stride": 3, "padding": 2, "dilation": (1, 2)}),
    ((3, 7, 7), (4, 3, 3, 3), True, {"padding": 1}),  # unbatched
]


def _pair(x_shape, w_shape, bias, dtype, rng, requires_grad=True):
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    if bias:
        arrays.append(rng.standard_normal(w_shape[0] if len(w_shape) else 1))
    out = []
    for lib in (glassgrad, torch):
        out.append([lib.tensor(a.astype(dtype), requires_grad=requires_grad) for a in arrays])
    return out


def _conv_case(fn_name, x_shape, w_shape, bias, kwargs, dtype, rng, out_channels=None):
    ours, theirs = _pair(x_shape, w_shape, False, dtype, rng)
    if bias:
        b = rng.standard_normal(out_channels or w_shape[0]).astype(dtype)
        ours.append(glassgrad.tensor(b, requires_grad=True))
        theirs.append(torch.tensor(b, requires_grad=True))
    results = []
    for lib, args in ((glassgrad, ours), (torch, theirs)):
        fn = getattr(lib.nn.functional, fn_name)
        y = fn(*args, **kwargs)
        cot = lib.tensor(np.random.default_rng(5).standard_normal(tuple(y.shape)).astype(dtype))
        grads = lib.autograd.grad(y, args, cot, create_graph=True)
        # WGAN-GP shape: penalise the input gradient's norm, differentiate w.r.t. the weight
        penalty = (grads[0] ** 2).sum() + (grads[1] * grads[1]).sum()
        second = lib.autograd.grad(penalty, args[:2])
        results.append((y, grads, second))
    atol, rtol = TOL[dtype]
    (y0, g0, s0), (y1, g1, s1) = results
    assert y0.dtype == glassgrad.float64 if dtype == np.float64 else glassgrad.float32
    assert_close(y0, y1, atol, rtol, what="forward")
    for k, (a, b) in enumerate(zip(g0, g1)):
        assert_close(a, b, atol, rtol, what=f"grad {k}")
    for k, (a, b) in enumerate(zip(s0, s1)):
        assert_close(a, b, atol * 10, rtol * 10, what=f"grad-of-grad-penalty {k}")


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", CONV2D, ids=[str(c[3]) + str(c[0]) for c in CONV2D])
def test_conv2d_matches_torch(case, dtype):
    x_shape, w_shape, bias, kwargs = case
    _conv_case("conv2d", x_shape, w_shape, bias, kwargs, dtype, np.random.default_rng(0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", [
    ((2, 3, 9), (4, 3, 3), True, {"stride": 2, "padding": 1}),
    ((2, 4, 10), (6, 2, 4), True, {"groups": 2, "dilation": 2, "padding": "same"}),
    ((3, 8), (2, 3, 3), False, {}),
], ids=["stride-pad", "groups-dilation-same", "unbatched"])
def test_conv1d_matches_torch(case, dtype):
    x_shape, w_shape, bias, kwargs = case
    _conv_case("conv1d", x_shape, w_shape, bias, kwargs, dtype, np.random.default_rng(1))


def test_conv3d_matches_torch():
    _conv_case("conv3d", (2, 2, 4, 5, 3), (3, 2, 2, 3, 2), True, {"padding": 1, "stride": 2},
               np.float64, np.random.default_rng(2))


CONV_T = [
    ((2, 4, 3, 5), (4, 3, 3, 3), {}),
    ((2, 4, 3, 5), (4, 3, 3, 3), {"stride": 2}),
    ((2, 4, 4, 4), (4, 2, 4, 4), {"stride": 2, "padding": 1}),  # DCGAN upsampling block
    ((2, 4, 3, 4), (4, 3, 3, 2), {"stride": (2, 3), "padding": 1, "output_padding": (1, 2)}),
    ((2, 4, 3, 3), (4, 2, 3, 3), {"groups": 2, "stride": 2, "dilation": 2,
                                  "output_padding": 1}),
    ((4, 3, 3), (4, 2, 2, 2), {"stride": 2}),  # unbatched
    ((2, 2, 4, 4), (2, 6, 3, 3), {"dilation": 2, "output_padding": (1, 0)}),  # stride 1
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", CONV_T, ids=[str(c[2]) + str(c[0]) for c in CONV_T])
def test_conv_transpose2d_matches_torch(case, dtype):
    x_shape, w_shape, kwargs = case
    out_channels = w_shape[1] * kwargs.get("groups", 1)
    _conv_case("conv_transpose2d", x_shape, w_shape, True, kwargs, dtype,
               np.random.default_rng(3), out_channels)


def test_conv_transpose1d_matches_torch():
    _conv_case("conv_transpose1d", (2, 3, 5), (3, 2, 3), True, {"stride": 2, "padding": 1,
                                                               "output_padding": 1},
               np.float64, np.random.default_rng(4), out_channels=2)


def _pool_case(fn_name, x, kwargs, dtype=np.float64):
    results = []
    for lib in (glassgrad, torch):
        t = lib.tensor(x.astype(dtype), requires_grad=True)
        out = getattr(lib.nn.functional, fn_name)(t, **kwargs)
        y = out[0] if isinstance(out, tuple) else out
        cot = lib.tensor(np.random.default_rng(6).standard_normal(tuple(y.shape)).astype(dtype),
                         requires_grad=True)
        (g,) = lib.autograd.grad(y, t, cot, create_graph=True)
        w = lib.tensor(np.random.default_rng(7).standard_normal(tuple(g.shape)).astype(dtype))
        (gg,) = lib.autograd.grad((g * w).sum(), cot)
        results.append((out, g, gg))
    (o0, g0, gg0), (o1, g1, gg1) = results
    atol, rtol = TOL[dtype]
    if isinstance(o1, tuple):
        assert np.array_equal(o0[1].numpy(), o1[1].numpy()), "indices"
        assert o0[1].dtype == glassgrad.int64
        o0, o1 = o0[0], o1[0]
    assert_close(o0, o1, atol, rtol, what=f"{fn_name} forward")
    assert_close(g0, g1, atol, rtol, what=f"{fn_name} grad")
    assert_close(gg0, gg1, atol, rtol, what=f"{fn_name} grad-of-grad")


POOL = [
    ("max_pool2d", {"kernel_size": 2}),
    ("max_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "return_indices": True}),
    ("max_pool2d", {"kernel_size": 3, "stride": 2, "ceil_mode": True, "return_indices": True}),
    ("max_pool2d", {"kernel_size": (2, 3), "dilation": 2, "padding": (1, 0)}),
    ("max_pool2d", {"kernel_size": 2, "stride": 1}),  # overlapping windows accumulate
    ("avg_pool2d", {"kernel_size": 2}),
    ("avg_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ("avg_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg_pool2d", {"kernel_size": 2, "ceil_mode": True, "count_include_pad": False}),
    ("avg_pool2d", {"kernel_size": (2, 3), "divisor_override": 4}),
    ("adaptive_avg_pool2d", {"output_size": 1}),
    ("adaptive_avg_pool2d", {"output_size": (3, 3)}),  # overlapping bins of 7 and 9
    ("adaptive_avg_pool2d", {"output_size": (4, 5)}),
    ("adaptive_avg_pool2d", {"output_size": (None, 2)}),
    ("adaptive_avg_pool2d", {"output_size": (7, 3)}),  # equal bins: plain average pooling
    ("adaptive_max_pool2d", {"output_size": (3, 4), "return_indices": True}),
    ("adaptive_max_pool2d", {"output_size": 1}),
    ("interpolate", {"scale_factor": 2}),
    ("interpolate", {"size": (10, 4)}),
    ("interpolate", {"scale_factor": (1.5, 0.5)}),
    ("unfold", {"kernel_size": (2, 3), "stride": 2, "padding": 1}),
]


@pytest.mark.parametrize("fn_name,kwargs", POOL, ids=[f"{n}{k}" for n, k in POOL])
def test_pool_matches_torch(fn_name, kwargs):
    x = np.random.default_rng(8).standard_normal((2, 3, 7, 9))
    _pool_case(fn_name, x, kwargs)


@pytest.mark.parametrize("fn_name,kwargs", [
    ("max_pool2d", {"kernel_size": 2, "return_indices": True}),
    ("avg_pool2d", {"kernel_size": 3, "padding": 1, "stride": 2}),
    ("adaptive_avg_pool2d", {"output_size": 3}),
    ("adaptive_max_pool2d", {"output_size": 2, "return_indices": True}),
    ("max_pool1d", {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool1d", {"kernel_size": 2}),
    ("adaptive_avg_pool1d", {"output_size": 4}),
], ids=lambda v: str(v))
def test_pool_unbatched_float32_and_1d(fn_name, kwargs):
    x = np.random.default_rng(9).standard_normal((3, 5, 7))
    _pool_case(fn_name, x, kwargs, np.float32)


def test_max_pool_ties_and_nan_like_torch():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 1, 1] = x[0, 0, 2, 3] = 5.0
    x[0, 0, 3, 0] = np.nan
    for lib in (glassgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        y, idx = lib.nn.functional.max_pool2d(t, 2, return_indices=True)
        y.sum().backward()
        if lib is glassgrad:
            ours = (y.detach().numpy(), idx.numpy(), t.grad.numpy())
        else:
            theirs = (y.detach().numpy(), idx.numpy(), t.grad.numpy())
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_adaptive_bins_are_pytorchs():
    start, end = glassgrad.ops.pool.adaptive_bins(10, 4)
    assert start.tolist() == [math.floor(i * 10 / 4) for i in range(4)]
    assert end.tolist() == [math.ceil((i + 1) * 10 / 4) for i in range(4)]


def test_empty_batch():
    for lib in (glassgrad, torch):
        x = lib.zeros(0, 3, 8, 8)
        y = lib.nn.functional.conv2d(x, lib.zeros(4, 3, 3, 3), padding=1)
        p = lib.nn.functional.max_pool2d(y, 2)
        assert tuple(y.shape) == (0, 4, 8, 8) and tuple(p.shape) == (0, 4, 4, 4)


def test_first_order_records_nothing_and_skips_unwanted_grads(monkeypatch):
    calls = []
    original = conv_ops.ConvolutionBackwardInput.forward

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(conv_ops.ConvolutionBackwardInput, "forward", staticmethod(spy))
    x = glassgrad.randn(2, 3, 6, 6)  # an image batch: no gradient wanted
    w = glassgrad.randn(4, 3, 3, 3, requires_grad=True)
    y = glassgrad.nn.functional.conv2d(x, w, padding=1)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    (g,) = glassgrad.autograd.grad(y.sum(), w)
    assert not calls, "grad-input computed for an input that does not require grad"
    assert g.grad_fn is None and not g.requires_grad
    with glassgrad.no_grad():
        assert glassgrad.nn.functional.conv2d(x, w).grad_fn is None


def _torch_error(fn):
    with pytest.raises(Exception) as info:
        fn(torch)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("fn", [
    lambda m: m.nn.functional.conv2d(m.zeros(2, 4, 8, 8), m.zeros(8, 3, 3, 3)),
    lambda m: m.nn.functional.conv2d(m.zeros(3, 8), m.zeros(8, 3, 3, 3)),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8, 8), m.zeros(8, 3, 3, 3)),
    lambda m: m.nn.functional.conv1d(m.zeros(2, 3, 4, 4), m.zeros(4, 3, 2)),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 2, 2), m.zeros(8, 3, 3, 3)),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 4, 4), m.zeros(8, 3, 3, 3), dilation=2),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3), groups=2),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 4, 8, 8), m.zeros(6, 2, 3, 3), groups=4),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3), m.zeros(7)),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3), stride=2,
                                     padding="same"),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3), padding="foo"),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3), stride=0),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3), padding=-1),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3), groups=0),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3, dtype=m.float64)),
    lambda m: m.nn.functional.conv2d(m.zeros(2, 3, 8, 8), m.zeros(8, 3, 3, 3),
                                     m.zeros(8, dtype=m.float64)),
    lambda m: m.nn.functional.conv_transpose2d(m.zeros(2, 4, 4, 4), m.zeros(3, 2, 3, 3)),
    lambda m: m.nn.functional.conv_transpose2d(m.zeros(2, 3, 4, 4), m.zeros(3, 2, 3, 3),
                                               stride=2, output_padding=2),
    lambda m: m.nn.functional.max_pool2d(m.zeros(2, 3, 8, 8), 3, padding=2),
    lambda m: m.nn.functional.max_pool2d(m.zeros(2, 3, 2, 2), 3),
    lambda m: m.nn.functional.max_pool2d(m.zeros(2, 3, 8, 8), 2, stride=0),
    lambda m: m.nn.functional.max_pool2d(m.zeros(2, 0, 8, 8), 2),
    lambda m: m.nn.functional.avg_pool2d(m.zeros(2, 3, 8, 8), 2, divisor_override=0),
    lambda m: m.nn.functional.avg_pool2d(m.zeros(2, 3, 8, 8), 3, padding=2),
    lambda m: m.nn.functional.adaptive_avg_pool2d(m.zeros(3, 8), 2),
    lambda m: m.nn.functional.adaptive_max_pool2d(m.zeros(3, 8), 2),
    lambda m: m.nn.functional.max_pool2d(m.zeros(3, 8), 2),
    lambda m: m.nn.functional.max_pool1d(m.zeros(2, 3, 4, 4), 2),
    lambda m: m.nn.functional.max_pool2d(m.zeros(2, 3, 8, 8), 2, stride=-1),
    lambda m: m.nn.functional.max_pool2d(m.zeros(2, 3, 8, 8), 2, dilation=0),
    lambda m: m.nn.functional.interpolate(m.zeros(3, 8), scale_factor=2),
], ids=lambda f: "")
def test_errors_match_torch(fn):
    err_type, message = _torch_error(fn)
    with pytest.raises(err_type) as info:
        fn(glassgrad)
    # PyTorch's key phrase first; glassgrad may add an explanation after it
    ours = str(info.value)
    key = message.split("\n")[0]
    assert ours.startswith(key[:60]) or key[:60] in ours, f"\nours:  {ours}\ntorch: {message}"


def test_error_messages_named_in_the_brief():
    with pytest.raises(RuntimeError, match=re_escape(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            "[2, 3]")):
        glassgrad.nn.functional.conv2d(glassgrad.zeros(2, 3), glassgrad.zeros(8, 3, 3, 3))
    with pytest.raises(RuntimeError, match=re_escape(
            "Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 4, 8, 8] to have 3 "
            "channels, but got 4 channels instead")):
        glassgrad.nn.functional.conv2d(glassgrad.zeros(2, 4, 8, 8), glassgrad.zeros(8, 3, 3, 3))


def re_escape(s):
    import re

    return re.escape(s)


# --- modules --------------------------------------------------------------------------------

MODULES = [
    (lambda m: m.nn.Conv2d(3, 4, 3, padding=1), (2, 3, 6, 5)),
    (lambda m: m.nn.Conv2d(4, 6, (3, 2), stride=2, groups=2, bias=False), (2, 4, 7, 6)),
    (lambda m: m.nn.Conv2d(3, 4, 3, padding="same", dilation=2), (2, 3, 6, 6)),
    (lambda m: m.nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"), (2, 3, 5, 6)),
    (lambda m: m.nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode="circular"), (2, 3, 5, 6)),
    (lambda m: m.nn.Conv2d(3, 4, 2, padding="same", padding_mode="replicate"), (2, 3, 5, 6)),
    (lambda m: m.nn.Conv1d(3, 4, 3, stride=2), (2, 3, 9)),
    (lambda m: m.nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1), (2, 4, 3, 3)),
    (lambda m: m.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, output_padding=1), (4, 3, 3)),
    (lambda m: m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.MaxPool2d(2),
                               m.nn.AvgPool2d(2, ceil_mode=True), m.nn.AdaptiveAvgPool2d(1),
                               m.nn.Flatten()), (2, 3, 9, 9)),
    (lambda m: m.nn.Sequential(m.nn.AdaptiveMaxPool2d((2, 3)), m.nn.Upsample(scale_factor=2)),
     (2, 3, 5, 7)),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("make,shape", MODULES, ids=[str(i) for i in range(len(MODULES))])
def test_modules_match_torch(make, shape):
    x = np.random.default_rng(10).standard_normal(shape)
    check_module(make, [x], double=True)


def test_conv_transpose_output_size():
    x = np.random.default_rng(11).standard_normal((1, 4, 3, 3))
    check_module(lambda m: _OutputSize(m.nn.ConvTranspose2d(4, 2, 3, stride=2)), [x],
                 dtypes=(np.float64,))
    conv = glassgrad.nn.ConvTranspose2d(4, 2, 3, stride=2)
    with pytest.raises(ValueError, match="requested an output size of"):
        conv(glassgrad.zeros(1, 4, 3, 3), output_size=(9, 9))


class _OutputSize(torch.nn.Module):
    """Wrap a ConvTranspose2d so that check_module calls it with output_size=(8, 8)."""

    def __new__(cls, inner):
        lib = glassgrad if isinstance(inner, glassgrad.nn.Module) else torch

        class Wrapped(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = inner

            def forward(self, x):
                return self.conv(x, output_size=(8, 8))

        return Wrapped()


@pytest.mark.parametrize("make", [
    lambda m: m.nn.Conv2d(6, 8, (3, 5), groups=2),
    lambda m: m.nn.ConvTranspose2d(6, 8, 3, groups=2),
    lambda m: m.nn.Conv1d(5, 7, 4),
])
def test_default_init_matches_torch_distribution(make):
    glassgrad.manual_seed(0)
    ours, theirs = make(glassgrad), make(torch)
    assert ours.weight.shape == theirs.weight.shape
    fan_in = theirs.weight[0].numel()
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) and the bias rule agree
    for name in ("weight", "bias"):
        w = getattr(ours, name).detach().numpy()
        t = getattr(theirs, name).detach().numpy()
        assert np.abs(w).max() <= bound + 1e-7 and np.abs(t).max() <= bound + 1e-7
        if w.size > 50:  # uniform on the full interval: same spread as torch's draw
            assert np.abs(w).max() > 0.85 * bound
            assert abs(w.std() - t.std()) < 0.25 * t.std()


def test_module_argument_errors_match_torch():
    for kwargs in ({"groups": 2}, {"padding": "same", "stride": 2}, {"padding": "foo"},
                   {"padding_mode": "foo"}):
        args = (3, 4, 3)
        with pytest.raises(ValueError) as theirs:
            torch.nn.Conv2d(*args, **kwargs)
        with pytest.raises(ValueError) as ours:
            glassgrad.nn.Conv2d(*args, **kwargs)
        # NOTE: torch formats the padding modes as a set: their order varies per process
        assert str(ours.value).split("{")[0] == str(theirs.value).split("{")[0]
    assert repr(glassgrad.nn.Conv2d(3, 4, 3, stride=2, bias=False, groups=1, dilation=2)) == repr(
        torch.nn.Conv2d(3, 4, 3, stride=2, bias=False, groups=1, dilation=2))
    assert repr(glassgrad.nn.MaxPool2d(2)) == repr(torch.nn.MaxPool2d(2))


def test_conv_critic_gradient_penalty_matches_torch():
    """WGAN-GP through a conv critic: the penalty's gradient w.r.t. every critic weight."""

    def critic(m):
        return m.nn.Sequential(
            m.nn.Conv2d(1, 4, 4, stride=2, padding=1), m.nn.LeakyReLU(0.2),
            m.nn.Conv2d(4, 8, 3, stride=2, padding=1), m.nn.LeakyReLU(0.2),
            m.nn.Flatten(), m.nn.Linear(8 * 2 * 2, 1))

    rng = np.random.default_rng(12)
    real, fake = rng.standard_normal((2, 3, 1, 8, 8))
    alpha = rng.uniform(size=(3, 1, 1, 1))
    grads = []
    t_net = critic(torch).double()
    g_net = critic(glassgrad).double()
    g_net.load_state_dict({k: glassgrad.tensor(v.detach().numpy())
                           for k, v in t_net.state_dict().items()})
    for lib, net in ((torch, t_net), (glassgrad, g_net)):
        mix = lib.tensor(alpha * real + (1 - alpha) * fake, requires_grad=True)
        out = net(mix)
        (g,) = lib.autograd.grad(out.sum(), mix, create_graph=True)
        penalty = ((g.reshape(3, -1).norm(2, dim=1) - 1) ** 2).mean()
        grads.append(lib.autograd.grad(penalty, list(net.parameters()), allow_unused=True))
    for a, b in zip(grads[1], grads[0]):
        assert_close(a, b, 1e-10, 1e-8, what="gradient-penalty weight grad")
