"""torch's argument conventions (issue 15, lane agrad), each run on torch and glassgrad alike:
``out=`` with its autograd refusal, resize warning and dtype rule; a ``GradientEdge`` as
``inputs`` of ``grad``/``backward``; ``inference_mode(mode=...)``; the ``*_like`` factories'
keywords; ``where`` with two numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])
A = np.random.default_rng(0).standard_normal((2, 3))


@LIBS
def test_out_writes_resizes_and_refuses_autograd(lib):
    a, b = lib.tensor(A), lib.tensor(A + 1)
    x = lib.zeros(2, 3, dtype=lib.float64)
    assert lib.mul(a, b, out=x) is x
    np.testing.assert_allclose(x.numpy(), A * (A + 1))
    y = lib.zeros(4, dtype=lib.float64)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        lib.add(a, b, out=y)
    assert tuple(y.shape) == (2, 3)
    e = lib.zeros(0, dtype=lib.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lib.sub(a, b, out=e)  # an empty out is resized without a word
    np.testing.assert_allclose(e.numpy(), -np.ones((2, 3)))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        lib.mul(a, b, out=lib.zeros(2, 3, dtype=lib.int64))
    g = lib.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support "
                                           "automatic differentiation"):
        lib.mul(g, b, out=x)
    with lib.no_grad():
        lib.mul(g, b, out=x)
    v, i = lib.zeros(2, dtype=lib.float64), lib.zeros(2, dtype=lib.int64)
    res = lib.max(a, 1, out=(v, i))
    assert res.values is v and res.indices is i
    np.testing.assert_array_equal(i.numpy(), A.argmax(1))


@LIBS
def test_out_into_an_inference_tensor_outside_inference_mode(lib):
    with lib.inference_mode():
        c = lib.ones(2, 3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        lib.mul(lib.ones(2, 3), lib.ones(2, 3), out=c)


@LIBS
def test_gradient_edge_as_inputs(lib):
    GradientEdge = lib.autograd.graph.GradientEdge
    x = lib.tensor(A, requires_grad=True).clone()
    edge = lib.autograd.graph.get_gradient_edge(x)
    x *= 2  # the edge still names the gradient the old x gets
    g_old, g_new = lib.autograd.grad(x.sum(), (edge, x))
    np.testing.assert_allclose(g_old.numpy(), 2 * np.ones((2, 3)))
    np.testing.assert_allclose(g_new.numpy(), np.ones((2, 3)))
    y = lib.tensor(A, requires_grad=True).clone()
    out = y.clone()
    (g,) = lib.autograd.grad(out.sum(), GradientEdge(y.grad_fn, y.output_nr))
    np.testing.assert_allclose(g.numpy(), np.ones((2, 3)))
    lib.autograd.backward(out.sum(), inputs=(GradientEdge(y.grad_fn, y.output_nr),))
    z = lib.tensor(A, requires_grad=True).clone()
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given "
                                           "input is a GradientEdge"):
        lib.autograd.grad(out.sum(), (y, GradientEdge(z.grad_fn, z.output_nr)),
                          allow_unused=True, materialize_grads=True)


@LIBS
def test_inference_mode_takes_mode_by_keyword(lib):
    for mode in (True, False):
        with lib.inference_mode(mode=mode):
            t = lib.ones(2, requires_grad=True) * 2
        assert t.requires_grad is (not mode) and lib.is_inference(t) is mode
        decorated = lib.inference_mode(mode=mode)(lambda: lib.ones(1, requires_grad=True) * 2)
        assert decorated().requires_grad is (not mode)


@LIBS
def test_like_factories_take_torchs_keywords(lib):
    x = lib.ones(2, 3, dtype=lib.float64)
    kw = dict(layout=lib.strided, device="cpu")
    for name in ("randn_like", "rand_like", "zeros_like", "ones_like", "empty_like"):
        out = getattr(lib, name)(x, requires_grad=True, **kw)
        assert out.requires_grad and out.dtype == lib.float64 and tuple(out.shape) == (2, 3)
    assert lib.full_like(x, 7, **kw).sum().item() == 42
    r = lib.randint_like(x, 3, 5, dtype=lib.int64, **kw)
    assert r.dtype == lib.int64 and 3 <= r.min().item() and r.max().item() < 5


@LIBS
def test_where_with_two_numbers(lib):
    c = lib.tensor([True, False])
    for a, b, dtype in ((1, 3, lib.int64), (1.0, 3, lib.float32), (True, False, lib.bool)):
        r = lib.where(c, a, b)
        assert r.dtype == dtype and r.tolist() == [a, b]


@LIBS
def test_numpy_under_no_grad_and_materialized_grads(lib):
    x = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    with lib.no_grad():
        assert x.numpy().shape == (2,)
    a, t = lib.tensor(1.0, requires_grad=True), lib.tensor(0.5, requires_grad=True)
    d = lib.autograd.grad(t * a, t, create_graph=True)
    (z,) = lib.autograd.grad(d, t, create_graph=True, allow_unused=True, materialize_grads=True)
    assert z.item() == 0 and z.requires_grad
    (zz,) = lib.autograd.grad(z, t, materialize_grads=True)  # the zeros differentiate again
    assert zz.item() == 0 and not zz.requires_grad


@pytest.mark.parametrize("py_type", [float, int, bool, complex])
def test_tensor_takes_python_scalar_types_as_dtype(py_type):
    ours = glassgrad.tensor([1, 0], dtype=py_type)
    theirs = torch.tensor([1, 0], dtype=py_type)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
