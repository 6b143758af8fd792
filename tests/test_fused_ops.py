"""The fused primitives of the performance work against torch: the whole-layer LSTM (first and
second order, both directions, gradients reaching only some outputs), ``Unbind``, the fused
elementwise derivative kernels (double and triple backward), the Python-number operators and
multi-output primitives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.ops.rnn_fused import LSTMLayer, Unbind
from tests.oracle import assert_close, copy_params

ATOL = 1e-9


def _lstm_pair(**kwargs):
    torch.manual_seed(0)
    theirs = torch.nn.LSTM(3, 4, **kwargs).double()
    ours = glassgrad.nn.LSTM(3, 4, **kwargs).double()
    copy_params(theirs, ours)
    return ours, theirs


def _leaf(lib, arr):
    return lib.tensor(arr, dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("uses", ["all", "final_h", "final_c", "output"])
def test_lstm_gradient_penalty_matches_torch(bidirectional, uses, rng):
    """First and second order through the fused layer, whichever outputs the loss reads."""
    ours, theirs = _lstm_pair(num_layers=2, bidirectional=bidirectional)
    d = 2 if bidirectional else 1
    x = rng.standard_normal((5, 2, 3))
    h0, c0 = rng.standard_normal((2 * d, 2, 4)), rng.standard_normal((2 * d, 2, 4))
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        xs, hs, cs = _leaf(lib, x), _leaf(lib, h0), _leaf(lib, c0)
        out, (h, c) = module(xs, (hs, cs))
        loss = {"all": (out ** 2).sum() + (h * 2).sum() + (c * 3).sum(),
                "final_h": (h ** 2).sum(), "final_c": (c ** 2).sum(),
                "output": out.tanh().sum()}[uses]
        params = list(module.parameters())
        grads = lib.autograd.grad(loss, [xs, hs, cs] + params, create_graph=True)
        penalty = sum((g ** 2).sum() for g in grads)
        penalty.backward()
        res.append((loss, grads, penalty, xs, hs, cs))
    (la, ga, pa, *ia), (lb, gb, pb, *ib) = res
    assert_close(la, lb, atol=ATOL, what="loss")
    for a, b in zip(ga, gb):
        assert_close(a, b, atol=ATOL, what="first-order grad")
    assert_close(pa, pb, atol=ATOL, what="penalty")
    for a, b in zip(ia, ib):
        assert_close(a.grad, b.grad, atol=ATOL, what="second-order input grad")
    mine = dict(ours.named_parameters())
    for n, p in theirs.named_parameters():
        assert_close(mine[n].grad, p.grad, atol=ATOL, what=f"second-order grad of {n}")


def test_lstm_layer_float32_and_third_order(rng):
    ours, theirs = _lstm_pair()
    ours, theirs = ours.float(), theirs.float()
    x = rng.standard_normal((6, 3, 3)).astype(np.float32)
    outs = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        xs = lib.tensor(x, requires_grad=True)
        out, _ = module(xs)
        out.sum().backward()
        outs.append((out, xs.grad))
    assert_close(outs[0][0], outs[1][0], atol=1e-5, what="output")
    assert_close(outs[0][1], outs[1][1], atol=1e-5, what="input grad")
    # third order on the primitive itself, against float64 central differences
    gi = glassgrad.tensor(rng.standard_normal((3, 2, 8)), requires_grad=True)
    h0, c0 = (glassgrad.tensor(rng.standard_normal((2, 2)), requires_grad=True) for _ in "hc")
    w = glassgrad.tensor(rng.standard_normal((2, 8)) * 0.5, requires_grad=True)
    assert glassgrad.autograd.gradgradcheck(
        lambda *a: LSTMLayer.apply(*a, reverse=True)[:2], (gi, h0, c0, w))


def test_lstm_uses_one_node_per_layer_and_direction(rng):
    lstm = glassgrad.nn.LSTM(3, 4, bidirectional=True)
    out, _ = lstm(glassgrad.tensor(rng.standard_normal((30, 2, 3)), dtype=glassgrad.float32))
    names, stack, seen = [], [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(node.name())
        stack.extend(n for n, _ in node.next_functions)
    assert names.count("LSTMLayerBackward0") == 2
    assert len(names) < 40, names  # not ~12 nodes per time step


def test_unbind_primitive_gradients(rng):
    x = glassgrad.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    a, b = Unbind.apply(x), xt.unbind(0)
    assert a[0].grad_fn is a[3].grad_fn and [t.output_nr for t in a] == [0, 1, 2, 3]
    assert a[1].grad_fn.name() == b[1].grad_fn.name() == "UnbindBackward0"
    ((a[1] * a[3]).sum() + a[1].exp().sum()).backward()
    ((b[1] * b[3]).sum() + b[1].exp().sum()).backward()
    assert_close(x.grad, xt.grad, atol=ATOL)
    assert glassgrad.autograd.gradgradcheck(lambda t: Unbind.apply(t)[2] ** 2, (x,))


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "pow2", "pow3", "pow_half"])
def test_fused_derivative_kernels_to_third_order(op, rng):
    fn = {"tanh": lambda t: t.tanh(), "sigmoid": lambda t: t.sigmoid(),
          "pow2": lambda t: t ** 2, "pow3": lambda t: t ** 3,
          "pow_half": lambda t: t.abs() ** 0.5}[op]
    x0 = rng.uniform(0.2, 1.5, 5)
    res = []
    for lib in (glassgrad, torch):
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        (g1,) = lib.autograd.grad(fn(x).sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad((g1 * g1).sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        res.append((g1, g2, g3))
    for a, b in zip(*res):
        assert_close(a, b, atol=1e-9)


def test_python_number_operators_match_torch():
    def run(lib):
        x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        outs = [x + 2, 2 + x, x - 2, 2 - x, x * 3, 3 * x, x / 4, 4 / x, x ** 2, -x, x + 1.5e-3]
        names = [o.grad_fn.name() for o in outs]
        edges = [len(o.grad_fn.next_functions) for o in outs]
        total = sum((o * (k + 1)).sum() for k, o in enumerate(outs))
        (g,) = lib.autograd.grad(total, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return names, edges, outs, g, gg

    ours, theirs = run(glassgrad), run(torch)
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    for a, b in zip(ours[2] + [ours[3], ours[4]], theirs[2] + [theirs[3], theirs[4]]):
        assert_close(a, b, atol=1e-6)


def test_number_operand_keeps_dtype_and_int_tensors_promote():
    for dtype in (glassgrad.float16, glassgrad.float32, glassgrad.float64):
        x = glassgrad.ones(2, dtype=dtype)
        assert (x * 0.1).dtype == (0.1 * x).dtype == (x / 3).dtype == (1 - x).dtype == dtype
    i = glassgrad.tensor([1, 2])
    assert (i * 0.5).dtype == glassgrad.float32 and (i + 1).dtype == glassgrad.int64
    assert (i / 2).dtype == glassgrad.float32


def test_second_backward_through_mul_by_number_raises_but_add_does_not():
    x = glassgrad.ones(3, requires_grad=True)
    y = (x + 1.0).sum()
    y.backward()
    y.backward()  # AddBackward0 saved nothing, as in PyTorch
    z = (x * 2.0).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3), (3,), (0, 3)])
def test_fused_linear_to_second_order(shape, rng):
    x0, w0, b0 = rng.standard_normal(shape), rng.standard_normal((2, 3)), rng.standard_normal(2)
    res = []
    for lib in (glassgrad, torch):
        x, w, b = (lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in (x0, w0, b0))
        out = lib.nn.functional.linear(x, w, b)
        loss = (out.tanh() * out).sum()
        grads = lib.autograd.grad(loss, (x, w, b), create_graph=True)
        penalty = sum((g ** 2).sum() for g in grads)
        second = lib.autograd.grad(penalty, (x, w, b))
        res.append((out, *grads, *second, out.grad_fn.name()))
    assert res[0][-1] == ("AddmmBackward0" if len(shape) == 2 else "ViewBackward0")
    for a, b in zip(res[0][:-1], res[1][:-1]):
        assert_close(a, b, atol=ATOL)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_fused_cross_entropy_to_second_order(reduction, weighted, rng):
    x0 = rng.standard_normal((6, 4))
    t0 = np.array([0, 3, -100, 1, 3, 2])
    w0 = rng.uniform(0.5, 2.0, 4)
    res = []
    for lib in (glassgrad, torch):
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        w = lib.tensor(w0, dtype=lib.float64) if weighted else None
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(t0), weight=w, reduction=reduction)
        (g,) = lib.autograd.grad((loss * loss).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g.exp()).sum(), x)
        names = [loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()]
        res.append((loss, g, gg, names))
    assert res[0][3] == res[1][3] == ["NllLossBackward0", "LogSoftmaxBackward0"]
    for a, b in zip(res[0][:3], res[1][:3]):
        assert_close(a, b, atol=ATOL)


def test_fused_log_softmax_infinite_rows_and_empty():
    for lib in (glassgrad, torch):
        x = lib.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3])
        out = lib.log_softmax(x, 1)
        assert np.isinf(out[0, 1].item()) and not np.isfinite(out[1].numpy()).any()
    assert glassgrad.log_softmax(glassgrad.zeros(0, 3), 1).shape == (0, 3)


@pytest.mark.parametrize("geometry", [
    ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1)),
    ((3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),  # overlapping windows, padding
    ((2, 3), (1, 2), ((0, 1), (1, 1)), (2, 1)),  # dilation, uneven (ceil_mode-like) padding
    ((1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1)),
])
def test_tap_loop_max_pool_indices_match_the_reference(geometry, rng):
    from glassgrad.ops.pool import max_pool_indices
    from glassgrad.ops.pool_fast import max_pool2d_indices

    x = np.round(rng.standard_normal((2, 3, 7, 8)), 1).astype(np.float32)  # many ties
    x[0, 0] = 0.0  # a plane of ties
    for case in (x, np.where(rng.random(x.shape) < 0.05, np.nan, x).astype(np.float32),
                 (x * 10).astype(np.int32)):
        assert np.array_equal(max_pool2d_indices(np, case, *geometry),
                              max_pool_indices(np, case, *geometry))


@pytest.mark.parametrize("slope", [0.2, 1.0, 0.0, -0.5, 1.5])
def test_fused_leaky_relu_matches_torch_bitwise_and_to_second_order(slope, rng):
    x0 = np.concatenate([rng.standard_normal(20), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    res = []
    for lib in (glassgrad, torch):
        for dtype in (lib.float32, lib.float64):
            x = lib.tensor(x0, dtype=dtype, requires_grad=True)
            y = lib.nn.functional.leaky_relu(x, slope)
            (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
            (gg,) = lib.autograd.grad(g[:20].sum(), x)
            res.append((y.detach().numpy(), g.detach().numpy(), gg.numpy(), y.grad_fn.name()))
    for (y, g, gg, name), (yt, gt, ggt, namet) in zip(res[:2], res[2:]):
        assert name == namet == "LeakyReluBackward0"
        np.testing.assert_array_equal(y, yt)
        np.testing.assert_allclose(g[:20], gt[:20], rtol=1e-6)
        np.testing.assert_allclose(gg[:20], ggt[:20], rtol=1e-6)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 2, 2)])
def test_fused_batch_norm_to_second_order_and_running_stats(shape, rng):
    x0 = rng.standard_normal(shape) * 3 + 1
    res = []
    for lib in (glassgrad, torch):
        torch.manual_seed(0)
        bn = (lib.nn.BatchNorm1d if len(shape) < 4 else lib.nn.BatchNorm2d)(3).double()
        with lib.no_grad():
            bn.weight.copy_(lib.tensor([0.5, 2.0, -1.0], dtype=lib.float64))
            bn.bias.copy_(lib.tensor([0.1, -0.2, 0.3], dtype=lib.float64))
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        y = bn(x)
        loss = (y.sin() * y).sum()
        grads = lib.autograd.grad(loss, (x, bn.weight, bn.bias), create_graph=True)
        penalty = sum((g ** 2).sum() for g in grads)
        second = lib.autograd.grad(penalty, (x, bn.weight, bn.bias))
        res.append((y, *grads, *second, bn.running_mean, bn.running_var, y.grad_fn.name()))
    assert res[0][-1] == res[1][-1] == "NativeBatchNormBackward0"
    for a, b in zip(res[0][:-1], res[1][:-1]):
        assert_close(a, b, atol=1e-8)


def test_fused_batch_norm_statistics_outputs_get_gradients(rng):
    from glassgrad.ops.fused_norm import BatchNorm

    x = glassgrad.tensor(rng.standard_normal((5, 2)), requires_grad=True)
    w, b = (glassgrad.tensor(rng.standard_normal(2), requires_grad=True) for _ in "wb")

    def fn(x, w, b):
        out, mean, var = BatchNorm.apply(x, w, b, dims=(0,), eps=1e-5)
        return out.tanh().sum() + (mean * 3).sum() + var.exp().sum()

    assert glassgrad.autograd.gradcheck(fn, (x, w, b))
    assert glassgrad.autograd.gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["mse", "bce_logits"])
def test_fused_losses_to_second_order(loss, reduction, rng):
    x0, t0 = rng.standard_normal((4, 3)) * 3, rng.uniform(0, 1, (4, 3))
    res = []
    for lib in (glassgrad, torch):
        F = lib.nn.functional
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        t = lib.tensor(t0, dtype=lib.float64, requires_grad=loss == "mse")
        fn = F.mse_loss if loss == "mse" else F.binary_cross_entropy_with_logits
        out = fn(x, t, reduction=reduction)
        wrt = (x, t) if loss == "mse" else (x,)
        grads = lib.autograd.grad((out * out).sum(), wrt, create_graph=True)
        second = lib.autograd.grad(sum((g * g.cos()).sum() for g in grads), wrt)
        res.append((out, *grads, *second, out.grad_fn.name()))
    assert res[0][-1] == res[1][-1]
    for a, b in zip(res[0][:-1], res[1][:-1]):
        assert_close(a, b, atol=1e-9)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_fused_softmax_matches_torch_to_second_order(dim, rng):
    """``softmax`` is one op (SoftmaxBackward0) with its own first and second derivative."""
    x0 = rng.standard_normal((3, 4)) * 3
    w0 = rng.standard_normal((3, 4))
    res = []
    for lib in (glassgrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = lib.softmax(x, dim)
        (g,) = lib.autograd.grad((y * lib.tensor(w0)).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g.exp()).sum(), x)
        res.append((y, g, gg, y.grad_fn.name()))
    assert res[0][3] == res[1][3] == "SoftmaxBackward0"
    for a, b in zip(res[0][:3], res[1][:3]):
        assert_close(a, b, atol=ATOL)
    x = glassgrad.tensor(x0, requires_grad=True)
    assert glassgrad.autograd.gradcheck(lambda t: glassgrad.softmax(t, dim), (x,))
    assert glassgrad.autograd.gradgradcheck(lambda t: glassgrad.softmax(t, dim), (x,))


def test_fused_softmax_infinite_rows_and_empty():
    outs = []
    for lib in (glassgrad, torch):
        x = lib.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3, [float("inf"), 1.0, 0.0]])
        outs.append(lib.softmax(x, 1).numpy())
    np.testing.assert_array_equal(np.isnan(outs[0]), np.isnan(outs[1]))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-6)
    assert glassgrad.softmax(glassgrad.zeros(0, 3), 1).shape == (0, 3)
