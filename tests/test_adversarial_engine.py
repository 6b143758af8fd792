"""Adversarial checks, torch as the oracle: the first-order array engine (NOTE [Array backward]):
reused nodes, multi-output ops, targets, dtype casts, in-place errors."""

from __future__ import annotations

import numpy as np
import pytest

import glassgrad
from tests.adversarial_util import LIBS, _both, _same

# ---------------------------------------------------------------- 4. the array engine


def test_engine_reuse_diamonds_same_tensor_twice_and_multi_output():
    def run(lib):
        x = lib.tensor([0.3, -0.7, 1.1, 0.2], dtype=lib.float64, requires_grad=True)
        s = lib.tensor(0.4, dtype=lib.float64, requires_grad=True)
        a = x * x + x + x  # the same tensor twice in one op, then again
        b = a.tanh()
        p, q = b.split(2)
        u, v, *_ = (b * s).unbind(0)
        d = (p * q).sum() + (u * v) + s * s + (s**2).exp() + b.sum() * s
        d.backward()
        return [x.grad, s.grad]

    ours, theirs = _both(run)
    _same(ours, theirs, rtol=1e-12)


def test_engine_lstm_multi_output_matches_torch():
    def run(lib):
        lib.manual_seed(0)
        lstm = lib.nn.LSTM(3, 4, batch_first=True).double()
        sd = {k: lib.tensor(np.random.default_rng(i).standard_normal(tuple(v.shape)) * 0.3)
              for i, (k, v) in enumerate(sorted(lstm.state_dict().items()))}
        lstm.load_state_dict(sd)
        x = lib.tensor(np.linspace(-1, 1, 2 * 5 * 3).reshape(2, 5, 3), requires_grad=True)
        out, (h, c) = lstm(x)
        (out.sum() + (h * c).sum()).backward()
        return [x.grad] + [p.grad for _, p in sorted(lstm.named_parameters())]

    ours, theirs = _both(run)
    _same(ours, theirs, rtol=1e-9, atol=1e-12)


def test_engine_autograd_grad_some_inputs_retain_and_double_backward():
    def run(lib):
        x = lib.tensor(0.8, dtype=lib.float64, requires_grad=True)
        y = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        h = (x * y).sin() * x**2 + (x - 1).exp()
        out = h.sum()
        (gx,) = lib.autograd.grad(out, (x,), retain_graph=True)
        (gy,) = lib.autograd.grad(out, (y,), retain_graph=True)
        out.backward(retain_graph=True)
        out.backward()  # accumulates twice
        first = [gx, gy, x.grad, y.grad]
        x2 = lib.tensor(0.8, dtype=lib.float64, requires_grad=True)
        z = (x2**3 * 2.0 + x2.tanh()).exp()
        (g1,) = lib.autograd.grad(z, x2, create_graph=True)
        (g2,) = lib.autograd.grad(g1, x2, create_graph=True)
        (g3,) = lib.autograd.grad(g2, x2)
        return first + [g1, g2, g3]

    ours, theirs = _both(run)
    _same(ours, theirs, rtol=1e-10)


def test_engine_second_backward_without_retain_raises_torchs_error():
    for lib in LIBS:
        for shape in [(), (2,)]:
            x = lib.ones(shape, requires_grad=True)
            y = (x.exp() * 2.0).tanh().sum()
            y.backward()
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                y.backward()


def test_engine_mixed_dtype_gradients_match_torch():
    def run(lib):
        x = lib.tensor([0.5, -0.25], dtype=lib.float32, requires_grad=True)
        s = lib.tensor(1.5, dtype=lib.float32, requires_grad=True)
        a = (x * s).tanh()  # float32
        b = a.double() * lib.tensor([2.0, 3.0], dtype=lib.float64)  # into float64
        c = (s.double() ** 2) * b.sum() + a.sum() * 0.5
        c.backward()
        return [x.grad, s.grad, c]

    ours, theirs = _both(run)
    _same(ours, theirs, rtol=1e-6)


def test_engine_0d_and_1_element_broadcasting_mixes():
    def run(lib):
        s = lib.tensor(0.7, requires_grad=True)
        o = lib.tensor([1.3], requires_grad=True)
        m = lib.tensor([[0.5, -0.5, 2.0]], requires_grad=True)
        y = (s * o).exp() + (s**2) * m + o.tanh() - s.sin() * 3 + (2 - s) * (o**2)
        z = (y * y).sum() + (s + o).sum()
        z.backward()
        return [s.grad, o.grad, m.grad, z]

    for dtype in ("float32", "float64"):
        def typed(lib, dtype=dtype):
            lib.set_default_dtype(getattr(lib, dtype))
            try:
                return run(lib)
            finally:
                lib.set_default_dtype(lib.float32)

        ours, theirs = _both(typed)
        _same(ours, theirs, dtype, rtol=1e-5)


@pytest.mark.parametrize("shape", [(), (3,)])
@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "sin", "square", "cube"])
def test_engine_in_place_change_of_saved_value_raises_torchs_error(op, shape):
    fns = {"exp": lambda x: x.exp(), "tanh": lambda x: x.tanh(), "sigmoid": lambda x: x.sigmoid(),
           "sin": lambda x: x.sin(), "square": lambda x: x**2, "cube": lambda x: x**3}
    for lib in LIBS:
        x = lib.full(shape, 0.5, requires_grad=True)
        h = x * 1.0
        y = fns[op](h)
        if op in ("exp", "tanh", "sigmoid"):
            y.add_(1)  # the saved output
            out = y
        else:
            out = y * 1.0
            h.mul_(2)  # the saved input
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_engine_numpy_scalar_gradient_other_dtype_is_cast():
    def run(lib):
        x = lib.tensor(0.3, dtype=lib.float32, requires_grad=True)
        y = x.double().exp() * 2.0  # float64 scalar gradients arrive at float32 0-d input
        z = (x.tanh() ** 2 + y).sum()
        z.backward()
        return [x.grad, z]

    ours, theirs = _both(run)
    _same(ours, theirs, rtol=1e-6)
    assert ours[0].dtype == glassgrad.float32


def test_engine_targets_batched_grads_and_backward_inputs_on_0d_chain_match_torch():
    def run(lib):
        out = []
        x = lib.tensor(0.7, requires_grad=True)
        v = lib.tensor([0.2, -0.4], requires_grad=True)
        a = x.exp() * 2.0
        b = a.tanh() + v
        c = (b**2).sum() + a**3
        out += list(lib.autograd.grad(c, (a, x), retain_graph=True))  # a non-leaf target
        out += lib.autograd.grad(c, x, grad_outputs=lib.tensor([1.0, 2.0, -1.0]),
                                 is_grads_batched=True, retain_graph=True)
        c.backward(inputs=[v], retain_graph=True)
        out += [v.grad, x.grad is None]
        c.backward(inputs=[x])
        out += [v.grad, x.grad]
        out.append(lib.func.jacrev(lambda t: (t.sin() * 3.0 - t**2).exp())(lib.tensor([0.3, 0.6])))
        out.append(lib.autograd.functional.hessian(
            lambda t: (t**3 * 2.0).sum() + t.tanh().sum(), lib.tensor([0.3, -0.2])))
        return out

    ours, theirs = _both(run)
    _same(ours, theirs, rtol=1e-5)
