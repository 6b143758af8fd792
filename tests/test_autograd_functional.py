"""``autograd.functional`` (jacobian, hessian, vjp, jvp, hvp, vhp) against torch: values, tuple
structure, create_graph, strict-mode errors."""

from __future__ import annotations

import numpy as np
import pytest

from tests.autograd_oracle import same, same_error

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 3))
X = RNG.standard_normal(3)
Y = RNG.standard_normal(2)
V3 = RNG.standard_normal(3)
V2 = RNG.standard_normal(2)


def _f(torch):
    a = torch.tensor(A)
    return lambda x: (a @ x).tanh() * x.exp()


def _scalar(torch):
    a = torch.tensor(A)
    return lambda x: (x * (a @ x).sin()).sum() + (x**3).sum()


def _two_in_two_out(torch):
    return lambda x, y: (x.sin() * y.sum(), (x**2).sum() * y.exp())


def _two_in_scalar(torch):
    return lambda x, y: (x.sin() * y.sum()).sum() + (x**2).sum() * y.exp().sum()


def test_jacobian_single():
    same(lambda t: t.autograd.functional.jacobian(_f(t), t.tensor(X)))


def test_jacobian_tuples():
    def run(torch):
        jac = torch.autograd.functional.jacobian(
            _two_in_two_out(torch), (torch.tensor(X), torch.tensor(Y))
        )
        return jac, [[tuple(j.shape) for j in row] for row in jac]

    same(run)


def test_jacobian_of_unused_input_is_zero_and_strict_raises():
    f = lambda torch: lambda x, y: x * 2
    same(lambda t: t.autograd.functional.jacobian(f(t), (t.tensor(X), t.tensor(Y))))
    same_error(
        lambda t: t.autograd.functional.jacobian(f(t), (t.tensor(X), t.tensor(Y)), strict=True),
        RuntimeError,
        "Output 0 of the user-provided function is independent of input 1. "
        "This is not allowed in strict mode.",
    )


def test_jacobian_create_graph_is_differentiable():
    def run(torch):
        x = torch.tensor(X, requires_grad=True)
        jac = torch.autograd.functional.jacobian(_f(torch), x, create_graph=True)
        jac.sum().backward()
        return jac, x.grad

    same(run)


def test_jacobian_without_create_graph_is_detached():
    def run(torch):
        x = torch.tensor(X, requires_grad=True)
        jac = torch.autograd.functional.jacobian(_f(torch), x)
        return jac.requires_grad, x.grad

    same(run)


def test_hessian():
    same(lambda t: t.autograd.functional.hessian(_scalar(t), t.tensor(X)))
    same(lambda t: t.autograd.functional.hessian(_two_in_scalar(t), (t.tensor(X), t.tensor(Y))))


def test_hessian_errors():
    same_error(
        lambda t: t.autograd.functional.hessian(lambda x: x * 2, t.tensor(X)),
        RuntimeError,
        "The Tensor returned by the function given to hessian should contain a single element",
    )


def test_vjp():
    same(lambda t: t.autograd.functional.vjp(_f(t), t.tensor(X), t.tensor(V3)))
    same(lambda t: t.autograd.functional.vjp(_scalar(t), t.tensor(X)))
    same(
        lambda t: t.autograd.functional.vjp(
            _two_in_two_out(t), (t.tensor(X), t.tensor(Y)), (t.tensor(V3), t.tensor(V2))
        )
    )


def test_vjp_errors():
    same_error(
        lambda t: t.autograd.functional.vjp(_f(t), t.tensor(X)),
        RuntimeError,
        "The vector v can only be None if the user-provided function returns a single "
        "Tensor with a single element.",
    )
    msg = same_error(
        lambda t: t.autograd.functional.vjp(_f(t), t.tensor(X), t.tensor(V2)),
        RuntimeError,
        "v has invalid size: should be ",
    )
    assert "Size([3]) but got " in msg and msg.endswith("Size([2]).")
    same_error(
        lambda t: t.autograd.functional.vjp(_f(t), [t.tensor(X)]),
        TypeError,
        "The inputs given to vjp must be either a Tensor or a tuple of Tensors",
    )


def test_jvp_by_double_backward():
    same(lambda t: t.autograd.functional.jvp(_f(t), t.tensor(X), t.tensor(V3)))
    same(
        lambda t: t.autograd.functional.jvp(
            _two_in_two_out(t), (t.tensor(X), t.tensor(Y)), (t.tensor(V3), t.tensor(V2))
        )
    )


def test_jvp_create_graph():
    def run(torch):
        x = torch.tensor(X, requires_grad=True)
        out, jv = torch.autograd.functional.jvp(_f(torch), x, torch.tensor(V3), create_graph=True)
        (out.sum() + jv.sum()).backward()
        return out, jv, x.grad

    same(run)


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp(name):
    def run(torch):
        fn = getattr(torch.autograd.functional, name)
        single = fn(_scalar(torch), torch.tensor(X), torch.tensor(V3))
        pair = fn(
            _two_in_scalar(torch),
            (torch.tensor(X), torch.tensor(Y)),
            (torch.tensor(V3), torch.tensor(V2)),
        )
        return single, pair

    same(run)


def test_hvp_create_graph_and_strict():
    def run(torch):
        x = torch.tensor(X, requires_grad=True)
        _, hv = torch.autograd.functional.hvp(
            _scalar(torch), x, torch.tensor(V3), create_graph=True
        )
        hv.sum().backward()
        return hv, x.grad

    same(run)
    same_error(
        lambda t: t.autograd.functional.vhp(
            lambda x: (x * 2).sum(), t.tensor(X), t.tensor(V3), strict=True
        ),
        RuntimeError,
        "jacobian of the user-provided function with respect to input 0 is "
        "independent of the input",
    )
