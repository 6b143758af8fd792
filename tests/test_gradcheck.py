"""gradcheck as torch's (issue 15, lane agrad): each case runs on torch and on glassgrad and
must end alike (True, False, or the same error type and key phrase)."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])


def _gc(lib):
    return importlib.import_module(f"{lib.__name__}.autograd.gradcheck")


def _hooked(lib):
    def fn(x):
        y = x.clone()
        y.register_hook(lambda g: g + 1e-2)  # grad mode is on in the numerical pass too
        return y
    return fn


@LIBS
@pytest.mark.parametrize("fast", [False, True])
def test_mismatch_error_and_raise_exception(lib, fast):
    gc = _gc(lib)
    x = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
    with pytest.raises(gc.GradcheckError, match="Jacobian mismatch for output 0 with respect "
                                                "to input 0,"):
        gc.gradcheck(_hooked(lib), (x,), fast_mode=fast)
    assert gc.gradcheck(_hooked(lib), (x,), fast_mode=fast, raise_exception=False) is False
    assert gc.gradcheck(lambda t: t.sin() * t, (x,), fast_mode=fast) is True

    def other(t):
        raise RuntimeError("Not a GradcheckError!")
    with pytest.raises(RuntimeError, match="Not a GradcheckError!"):
        gc.gradcheck(other, (x,), fast_mode=fast, raise_exception=False)


def _nondet(lib):
    class NonDet(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, jitter):
            ctx.jitter = jitter
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return NonDet.apply(g, ctx.jitter) * (1 + lib.rand_like(g) * ctx.jitter), None
    return NonDet


@LIBS
def test_nondeterministic_backward(lib):
    gc, NonDet = _gc(lib), _nondet(lib)
    x = lib.tensor(np.random.default_rng(0).standard_normal((3, 3)), requires_grad=True)
    assert gc.gradcheck(lambda t: NonDet.apply(t, 0.0), x)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gc.gradcheck(lambda t: NonDet.apply(t, 1e-6), x)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gc.gradgradcheck(lambda t: NonDet.apply(t, 1e-12), x)
    assert gc.gradcheck(lambda t: NonDet.apply(t, 1e-6), x, nondet_tol=1e-5)
    assert gc.gradgradcheck(lambda t: NonDet.apply(t, 1e-12), x, nondet_tol=1e-5)


@LIBS
def test_outputs_and_inputs_checked(lib):
    gc = _gc(lib)
    x = lib.ones(1, dtype=lib.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Numerical gradient for function expected to be zero"):
        gc.gradcheck(lambda t: lib.tensor([t.item()]), x)
    assert gc.gradcheck(lambda t: (), (x,))
    with pytest.raises(AssertionError, match="return outputs with the same shape when inputs "
                                             "are perturbed"):
        gc.gradcheck(lambda t: lib.cat([t, t]) if lib.all(t >= 1) else t, (x,))
    with pytest.raises(AssertionError, match="same dtype when inputs are perturbed"):
        gc.gradcheck(lambda t: t.to(lib.float32) if lib.all(t >= 1) else t, (x,))
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gc.gradcheck(lambda t: t, (lib.ones(2),), raise_exception=False)
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gc.gradcheck(lambda t: t, (x.expand(2, 2),), raise_exception=False)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        gc.gradcheck(lambda t: t, (lib.ones(1, requires_grad=True),), atol=1e-1)


@LIBS
def test_backward_not_multiplied_by_grad_output(lib):
    gc = _gc(lib)

    class Const(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 0 + 1

        @staticmethod
        def backward(ctx, g):
            return lib.zeros_like(g) + 1e-9  # ignores g

    x = lib.ones(3, dtype=lib.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="backward not multiplied by grad_output"):
        gc.gradcheck(Const.apply, (x,))


@LIBS
def test_batched_grad_check_passes_a_vmappable_backward(lib):
    gc = _gc(lib)
    x = lib.tensor(np.random.default_rng(1).standard_normal((2, 3)), requires_grad=True)
    w = lib.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    assert gc.gradcheck(lambda a, b: (a @ b).tanh(), (x, w), check_batched_grad=True)
    assert gc.gradgradcheck(lambda a, b: (a @ b).tanh(), (x, w), check_batched_grad=True)


@LIBS
def test_deprecated_jacobian_getters(lib):
    gc = _gc(lib)
    rng = np.random.default_rng(3)
    a = lib.tensor(rng.random((2, 2)), requires_grad=True)
    b = lib.tensor(rng.random((2, 2)), requires_grad=True)
    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` was part of PyTorch's "
                                           "private API"):
        jac = gc.get_numerical_jacobian(lambda i: (2 * i[0] + i[1], i[0]), (a, b), eps=1e-6)
    np.testing.assert_allclose(jac[0].numpy(), 2 * np.eye(4), atol=1e-8)
    np.testing.assert_allclose(jac[1].numpy(), np.eye(4), atol=1e-8)
    with pytest.warns(FutureWarning):
        (only,) = gc.get_numerical_jacobian(lambda i: 3 * i[0] * i[1], (a, b), target=a)
    np.testing.assert_allclose(only.numpy(), np.diag(3 * b.detach().numpy().reshape(-1)),
                               atol=1e-6)
    with pytest.raises(ValueError, match="Expected grad_out to be 1.0"):
        gc.get_numerical_jacobian(lambda i: i[0], (a,), grad_out=2.0)
    out = a[:1] * 2 + b.sum()
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` was part of PyTorch's"):
        jacs, reentrant, sizes, types = gc.get_analytical_jacobian((a, b), out)
    assert reentrant and sizes and types and tuple(jacs[0].shape) == (4, 2)
    want = np.zeros((4, 2))
    want[[0, 1], [0, 1]] = 2
    np.testing.assert_allclose(jacs[0].numpy(), want)
    np.testing.assert_allclose(jacs[1].numpy(), np.ones((4, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nondet = _nondet(lib).apply(a, 1e-6)
        assert gc.get_analytical_jacobian((a,), nondet)[1] is False
        with pytest.raises(ValueError, match="Expected grad_out to be 1.0"):
            gc.get_analytical_jacobian((a,), nondet, grad_out=2.0)
