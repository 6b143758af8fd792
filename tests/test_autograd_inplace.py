"""Version counters and in-place operations under autograd, against torch: the saved-tensor check,
leaves, views (CopySlices), parameter updates under no_grad, ``.data``, and the GAN pattern."""

from __future__ import annotations

import numpy as np
import pytest

from tests.autograd_oracle import same, same_error

INPLACE = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: "
)


def test_sigmoid_output_modified_in_place_exact_message():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        y = x.sigmoid()
        z = y.sum()
        y.mul_(2)
        (y * z).sum().backward()

    msg = same_error(
        run,
        RuntimeError,
        INPLACE + "[torch.FloatTensor [3]], which is output 0 of Sigmoid, is at "
        "version 1; expected version 0 instead. Hint: enable anomaly detection",
    )
    assert "glassgrad: SigmoidBackward0" in msg


def test_in_place_through_detach_is_detected():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        y = x.sigmoid()
        y.detach().zero_()
        y.sum().backward()

    same_error(
        run,
        RuntimeError,
        INPLACE + "[torch.FloatTensor [3]], which is output 0 of "
        "Sigmoid, is at version 1; expected version 0 instead.",
    )


def test_saved_input_names_its_current_producer():
    def run(torch):
        x = torch.ones(3, dtype=torch.float64, requires_grad=True)
        y = x * 1
        z = y.pow(2)
        y.add_(1)
        z.sum().backward()

    same_error(
        run,
        RuntimeError,
        INPLACE + "[torch.DoubleTensor [3]], which is output 0 of Add, "
        "is at version 1; expected version 0 instead.",
    )


def test_retained_graph_then_in_place_twice():
    def run(torch):
        x = torch.ones(2, 2, requires_grad=True)
        y = x.exp()
        loss = (y * y).sum()
        loss.backward(retain_graph=True)
        with torch.no_grad():
            y.add_(1)
            y.add_(1)
        loss.backward()

    same_error(run, RuntimeError, "is at version 2; expected version 0 instead.")


def test_in_place_on_leaf_raises_and_leaves_it_unchanged():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        try:
            x.add_(1)
        except RuntimeError as e:
            return str(e).split("\n")[0], x.detach(), x._version

    assert (
        same(run)[0] == "a leaf Variable that requires grad is being used in an in-place operation."
    )


@pytest.mark.parametrize("op", ["add_", "mul_", "zero_", "iadd", "setitem"])
def test_in_place_on_leaf_allowed_under_no_grad(op):
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        with torch.no_grad():
            if op == "iadd":
                x += 2
            elif op == "setitem":
                x[1] = 5.0
            elif op == "zero_":
                x.zero_()
            else:
                getattr(x, op)(3.0)
        (x * x).sum().backward()
        return x.detach(), x._version, x.is_leaf, x.requires_grad, x.grad

    same(run)


@pytest.mark.parametrize("view", ["index", "view", "slice", "t"])
def test_in_place_on_view_of_leaf(view):
    def run(torch):
        x = torch.ones(3, 2, requires_grad=True)
        v = {
            "index": lambda: x[0],
            "view": lambda: x.view(-1),
            "slice": lambda: x[1:],
            "t": lambda: x.t(),
        }[view]()
        v.mul_(2)

    same_error(
        run,
        RuntimeError,
        "a view of a leaf Variable that requires grad is being used in an in-place operation.",
    )


def test_sgd_step_under_no_grad_keeps_a_leaf():
    def run(torch):
        p = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        lr = 0.1
        for _ in range(3):
            loss = (p**2).sum()
            loss.backward()
            with torch.no_grad():
                p -= lr * p.grad
            p.grad.zero_()
        return p.detach(), p.is_leaf, p.grad_fn, p._version, p.grad

    same(run)


def test_data_updates_bypass_the_version_counter():
    def run(torch):
        p = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (p * p).sum()
        p.data -= 0.5
        p.data.mul_(2)
        y.backward()  # PyTorch computes with the changed value and says nothing
        q = torch.zeros(2)
        q.data = torch.tensor([3.0, 4.0])
        return p.detach(), p.grad, p._version, q

    same(run)


def test_copy_slices_setitem_and_in_place_view():
    def run(torch):
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        z = torch.tensor([5.0, 6.0], requires_grad=True)
        y = x.clone()
        y[0] = z * 2
        y[:, 1].mul_(3)
        (y * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return x.grad, z.grad, y.detach(), y._version

    same(run)


def test_in_place_through_a_flat_view():
    def run(torch):
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x.clone()
        v = y.view(-1)
        v.mul_(2)
        (y**2).sum().backward()
        return x.grad, y._version, v._version, y.detach()

    same(run)


def test_in_place_unary_through_a_row_view_double_backward():
    def run(torch):
        x = torch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=torch.float64, requires_grad=True)
        y = x * 1
        y[1].exp_()
        (g,) = torch.autograd.grad((y**2).sum(), x, create_graph=True)
        (h,) = torch.autograd.grad(g.sum(), x)
        return g, h

    same(run)


def test_iadd_on_non_leaf():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        y += 1
        y *= 3
        y.sum().backward()
        return x.grad, y.grad_fn.name(), y._version

    same(run)


def test_mul_in_place_when_both_sides_require_grad():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
        y = x * 1
        y.mul_(w)
        (y**2).sum().backward()
        return x.grad, w.grad, y.grad_fn.name()

    same(run)


def test_mul_in_place_by_itself_raises_at_backward():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        y.mul_(y)
        y.sum().backward()

    same_error(
        run,
        RuntimeError,
        INPLACE + "[torch.FloatTensor [3]], which is output 0 of Mul, is "
        "at version 1; expected version 0 instead.",
    )


def test_in_place_ops_chain_values_and_grads():
    def run(torch):
        x = torch.tensor([0.2, 0.5, 0.9], dtype=torch.float64, requires_grad=True)
        y = x * 1
        y.sin_().mul_(3).add_(x).pow_(2).sigmoid_()
        y.sum().backward()
        return y.detach(), x.grad

    same(run)


def _gan(torch, use_t: bool):
    rng = np.random.default_rng(0)
    w = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    g = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    z = torch.tensor(rng.standard_normal((4, 2)))
    fake = z @ g
    d_out = fake @ (w if not use_t else w.t().t())
    d_loss = d_out.sigmoid().mean()
    g_loss = -d_out.mean()
    d_loss.backward(retain_graph=True)
    with torch.no_grad():  # opt_d.step()
        w.sub_(0.1 * w.grad)
    g_loss.backward()


@pytest.mark.parametrize("use_t", [False, True])
def test_gan_pattern_step_between_backwards(use_t):
    msg = same_error(
        lambda t: _gan(t, use_t), RuntimeError, INPLACE + "[torch.DoubleTensor [3, 2]]"
    )
    assert "is at version 1; expected version 0 instead." in msg
    assert "optimizer.step()" in msg


def test_gan_pattern_fixed_order():
    def run(torch):
        rng = np.random.default_rng(1)
        w = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
        g = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
        z = torch.tensor(rng.standard_normal((4, 2)))
        fake = z @ g
        d_loss = (fake.detach() @ w).sigmoid().mean()
        d_loss.backward()
        with torch.no_grad():
            w.sub_(0.1 * w.grad)
        g_loss = -(fake @ w).mean()
        g_loss.backward()
        return w.detach(), w.grad, g.grad

    same(run)
