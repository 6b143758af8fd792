"""The article's graph lifecycle (§1, §2.1, §4.2), the backward/grad API and its errors, leaf flags,
and gradient accumulation: each case runs the same code on torch and glassgrad."""

from __future__ import annotations

import pytest

from tests.autograd_oracle import same, same_error, same_warning


# --- the article -------------------------------------------------------------------------------
def test_article_1_1_lifecycle():
    def run(torch):
        x = torch.tensor(2.0, requires_grad=True)
        y = x**2
        y.backward()
        return x.grad, x.is_leaf, y.is_leaf, y.grad_fn.name()

    assert same(run)[0].item() == 4.0


def test_article_2_1_second_backward_raises():
    def run(torch):
        x = torch.tensor(2.0, requires_grad=True)
        y = x**2
        y.backward()
        y.backward()

    msg = same_error(run, RuntimeError, "Trying to backward through the graph a second time")
    assert "Specify retain_graph=True" in msg and "glassgrad: PowBackward0" in msg


def test_article_2_1_two_losses_share_a_graph():
    def run(torch, retain):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()
        loss1, loss2 = (h * 2).sum(), (h**2).sum()
        loss1.backward(retain_graph=retain)
        loss2.backward()
        return x.grad

    same_error(lambda t: run(t, False), RuntimeError, "Trying to backward through the graph")
    same(lambda t: run(t, True))


def test_article_retain_graph_accumulates():
    def run(torch):
        x = torch.tensor(2.0, requires_grad=True)
        y = x**2
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()
        return first, x.grad

    assert same(run)[1].item() == 8.0


def test_article_4_2_second_derivative():
    def run(torch):
        x = torch.tensor(2.0, requires_grad=True)
        y = x**3
        dy_dx = torch.autograd.grad(y, x, create_graph=True)[0]
        d2y_dx2 = torch.autograd.grad(dy_dx, x)[0]
        return dy_dx, d2y_dx2, dy_dx.requires_grad

    ours = same(run)
    assert (ours[0].item(), ours[1].item()) == (12.0, 12.0)


def test_third_derivative():
    def run(torch):
        x = torch.tensor([0.5, -1.5], dtype=torch.float64, requires_grad=True)
        y = (x.sin() * x**3).sum()
        (g1,) = torch.autograd.grad(y, x, create_graph=True)
        (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = torch.autograd.grad(g2.sum(), x)
        return g1, g2, g3

    same(run)


@pytest.mark.parametrize("make", ["sum", "add_sum", "view_sum"])
def test_backward_twice_through_nodes_that_saved_nothing(make):
    # the rule: a second backward fails only at a node that had to free saved tensors
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        y = {
            "sum": lambda: x.sum(),
            "add_sum": lambda: (x + 1).sum(),
            "view_sum": lambda: (x.view(3, 1) - 2).sum(),
        }[make]()
        y.backward()
        y.backward()
        return x.grad

    same(run)


def test_backward_twice_through_a_mul_by_constant_raises():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        y = (x * 2.0).sum()  # MulBackward0 saved the constant
        y.backward()
        y.backward()

    same_error(run, RuntimeError, "Trying to backward through the graph a second time")


def test_gradient_taken_without_create_graph_is_not_differentiable():
    def run(torch):
        x = torch.tensor(2.0, requires_grad=True)
        (g,) = torch.autograd.grad(x**3, x)
        torch.autograd.grad(g, x)

    same_error(
        run, RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"
    )


# --- backward / grad API -------------------------------------------------------------------------
def test_backward_with_gradient_argument_and_autograd_backward():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        (x * w).backward(torch.tensor([1.0, 10.0, 100.0]))
        a, b = x.grad.clone(), w.grad.clone()
        torch.autograd.backward([(x * w).sum(), (x**2).sum()])
        torch.autograd.backward(x * 3, grad_tensors=torch.ones(3))
        return a, b, x.grad, w.grad

    same(run)


def test_implicit_gradient_of_non_scalar():
    same_error(
        lambda t: (t.ones(3, requires_grad=True) * 2).backward(),
        RuntimeError,
        "grad can be implicitly created only for scalar outputs",
    )

    def grad(torch):
        x = torch.ones(3, requires_grad=True)
        torch.autograd.grad(x * 2, x)

    same_error(grad, RuntimeError, "grad can be implicitly created only for scalar outputs")


def test_backward_on_tensor_without_grad():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        with torch.no_grad():
            y = (x * 2).sum()
        y.backward()

    same_error(
        run, RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"
    )
    same_error(lambda t: t.ones(3).sum().backward(), RuntimeError, "element 0 of tensors")


def _two_inputs(torch, **kwargs):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    return torch.autograd.grad((x * x).sum(), [x, w], **kwargs)


def test_grad_unused_input():
    same_error(
        _two_inputs,
        RuntimeError,
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True",
    )
    same(lambda t: _two_inputs(t, allow_unused=True))
    same(lambda t: _two_inputs(t, materialize_grads=True))
    same_error(
        lambda t: _two_inputs(t, materialize_grads=True, allow_unused=False),
        ValueError,
        "Expected allow_unused to be True or not passed when materialize_grads=True",
    )


def test_grad_outputs_shape_mismatch():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        torch.autograd.grad(x * 2, x, grad_outputs=torch.ones(4))

    same_error(run, RuntimeError, "Mismatch in shape: grad_output[0] has a shape of ")
    msg = same_error(run, RuntimeError, "and output[0] has a shape of ")
    assert "Size([4])" in msg and "Size([3])" in msg


def test_grad_wrt_tensor_not_requiring_grad():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        w = torch.ones(3)
        torch.autograd.grad((x * w).sum(), [w])

    same_error(run, RuntimeError, "One of the differentiated Tensors does not require grad")


def test_grad_with_grad_outputs_retain_and_only_inputs():
    def run(torch):
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x.exp() * x
        (g,) = torch.autograd.grad(
            y, x, grad_outputs=torch.ones_like(y), retain_graph=True, only_inputs=True
        )
        (h,) = torch.autograd.grad(outputs=[y], inputs=[x], grad_outputs=[torch.full_like(y, 2.0)])
        return g, h, x.grad

    same(run)


def test_grad_of_non_leaf_and_multiple_outputs():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        y = h.exp().sum()
        z = (h**2).sum()
        return torch.autograd.grad([y, z], [h, x])

    same(run, rtol=1e-5)


def test_is_grads_batched_gives_the_jacobian():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x**2 * torch.tensor([1.0, -1.0, 0.5])
        return torch.autograd.grad(y, x, torch.eye(3), is_grads_batched=True)

    same(run)


def test_backward_inputs_fills_only_those():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0], requires_grad=True)
        h = x * w
        (h * 2).sum().backward(inputs=[w], retain_graph=True)
        r = (x.grad, w.grad.clone())
        (h.exp()).sum().backward(inputs=[x])
        return r, x.grad, w.grad

    same(run)


def test_backward_inputs_non_leaf():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        (h**2).sum().backward(inputs=[h])
        return h.grad, x.grad

    same(run)


def test_create_graph_warning_and_differentiable_grad():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x**3).sum().backward(create_graph=True)
        g = x.grad
        has_fn = g.grad_fn is not None
        x.grad = None
        g.sum().backward()
        return has_fn, g, x.grad

    same_warning(
        run, UserWarning, "Using backward() with create_graph=True will create a reference cycle"
    )


def test_accumulating_backward_with_retain():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        for _ in range(3):
            y.backward(retain_graph=True)
        return x.grad

    same(run)


# --- leaves and flags ---------------------------------------------------------------------------
def test_non_leaf_grad_warns_and_is_none():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        y.sum().backward()
        return y.grad, y.is_leaf, y.requires_grad

    same_warning(
        run,
        UserWarning,
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
    )


def test_requires_grad_flags_on_non_leaf():
    def set_attr(torch, value):
        y = torch.ones(3, requires_grad=True) * 2
        y.requires_grad = value

    same_error(
        lambda t: set_attr(t, False),
        RuntimeError,
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach().",
    )
    same_error(
        lambda t: set_attr(t, True),
        RuntimeError,
        "you can only change requires_grad flags of leaf variables.",
    )
    same(lambda t: (t.ones(3, requires_grad=True) * 2).requires_grad_().requires_grad)
    same_error(
        lambda t: (t.ones(3, requires_grad=True) * 2).requires_grad_(False),
        RuntimeError,
        "you can only change requires_grad flags of leaf variables. If you want",
    )


def test_integer_tensors_cannot_require_grad():
    same_error(
        lambda t: t.tensor([1, 2], requires_grad=True),
        RuntimeError,
        "Only Tensors of floating point and complex dtype can require gradients",
    )
    same_error(
        lambda t: t.tensor([1, 2]).requires_grad_(),
        RuntimeError,
        "only Tensors of floating point dtype can require gradients",
    )

    def set_attr(torch):
        torch.tensor([1, 2]).requires_grad = True

    same_error(
        set_attr,
        RuntimeError,
        "only Tensors of floating point and complex dtype can require gradients",
    )


def test_numpy_on_requires_grad():
    same_error(
        lambda t: t.ones(3, requires_grad=True).numpy(),
        RuntimeError,
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
    )
    same(lambda t: t.ones(3, requires_grad=True).detach().numpy().tolist())


def test_assign_grad_of_wrong_size():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        x.grad = torch.ones(4)

    same_error(
        run,
        RuntimeError,
        "attempting to assign a gradient of size '[4]' to a tensor of size '[3]'. Please "
        "ensure that the gradient and the tensor are the same size",
    )

    def ok(torch):
        x = torch.ones(3, requires_grad=True)
        x.grad = torch.full((3,), 2.0)
        (x * x).sum().backward()
        return x.grad

    same(ok)


def test_detach_shares_storage_and_version_counter():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        d = x.detach()
        d.add_(1)
        return x.detach(), x._version, d._version, d.requires_grad, d.is_leaf, d.grad_fn

    same(run)


def test_float_on_float32_returns_self_and_to_float64_records():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        y = x.to(torch.float64)
        y.sum().backward()
        return (
            x.float() is x,
            x.to(torch.float32) is x,
            y.is_leaf,
            y.grad_fn.name(),
            x.double().grad_fn.name(),
            x.grad,
            x.grad.dtype == torch.float32,
        )

    same(run)


def test_output_nr_and_leaf_flags():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        a = x * 2
        return x.is_leaf, x.output_nr, a.output_nr, a.is_leaf, torch.ones(2).is_leaf

    same(run)


# --- execution order ------------------------------------------------------------------------------
@pytest.mark.parametrize("swap", [False, True])
def test_reverse_creation_order_on_a_diamond(swap):
    def run(torch):
        order = []
        x = torch.tensor(1.0, requires_grad=True)
        if swap:
            b = x * 3
            a = x * 2
        else:
            a = x * 2
            b = x * 3
        d = b.sin() if not swap else b.cos()
        c = a.exp()
        e = c + d
        for name, t in {"a": a, "b": b, "c": c, "d": d, "e": e}.items():
            t.register_hook(lambda g, name=name: order.append(name))
        x.register_hook(lambda g: order.append("x"))
        e.backward()
        return order, x.grad

    same(run)


def test_order_across_two_roots():
    def run(torch):
        order = []
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        p = x * 2
        q = x.exp()
        r = p * q
        for name, t in {"p": p, "q": q, "r": r}.items():
            t.register_hook(lambda g, name=name: order.append(name))
        torch.autograd.backward([r.sum(), (p**2).sum()])
        return order, x.grad

    same(run)


# --- gradient accumulation (article §3) -----------------------------------------------------------
def test_gradient_accumulation_equals_full_batch():
    import numpy as np

    rng = np.random.default_rng(0)
    data = rng.standard_normal((8, 3))
    target = rng.standard_normal((8, 1))
    w0 = rng.standard_normal((3, 1))

    def run(torch, steps):
        w = torch.tensor(w0, requires_grad=True)
        xs, ys = torch.tensor(data), torch.tensor(target)
        for i in range(steps):
            xb, yb = (
                xs[i * 8 // steps : (i + 1) * 8 // steps],
                ys[i * 8 // steps : (i + 1) * 8 // steps],
            )
            loss = ((xb @ w - yb) ** 2).mean() / steps
            loss.backward()
        return w.grad

    full = same(lambda t: run(t, 1))
    accumulated = same(lambda t: run(t, 4))
    np.testing.assert_allclose(accumulated.numpy(), full.numpy(), rtol=1e-10)
