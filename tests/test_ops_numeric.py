"""Numerical composites and counting (issue 15, lane ops): torch's errors, the missing
derivatives torch reports, and the second derivatives glassgrad has where torch has none."""

import numpy as np
import pytest
import torch

import glassgrad
from tests.ops_errors import same_error


@pytest.mark.parametrize("fn,phrase", [
    (lambda lib: lib.gradient(lib.ones(3), spacing=[1.0, 2.0]), "expected spacing to be"),
    (lambda lib: lib.gradient(lib.ones(2), edge_order=2), "at least edge_order+1"),
    (lambda lib: lib.gradient(lib.ones(3), edge_order=3), "only supports edge_order=1 and"),
    (lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(4, 3)), "X1 and X2 must have the same"),
    (lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(4, 2), compute_mode="x"),
     "is not a valid value for compute_mode"),
    (lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(4, 2), p=-1), "only supports non-negative"),
    (lambda lib: lib.cdist(lib.ones(3), lib.ones(4, 3)), "cdist only supports at least 2D"),
    (lambda lib: lib.cdist(lib.ones(3, 2, dtype=lib.int64), lib.ones(4, 2)),
     "cdist only supports floating-point dtypes, X1 got: Long"),
    (lambda lib: lib.pdist(lib.ones(3)), "pdist only supports 2D tensors, got: 1D"),
    (lambda lib: lib.pdist(lib.ones(3, 2), p=-1), "pdist only supports non-negative p"),
    (lambda lib: lib.cov(lib.ones(2, 3, 4)), "expected input to have two or fewer dimensions"),
    (lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([1.0, 2, 3])),
     "expected fweights to have integral dtype"),
    (lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.tensor([1, 2, 3])),
     "expected aweights to have floating point dtype"),
    (lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([1, -2, 3])),
     "fweights cannot be negative"),
    (lambda lib: lib.corrcoef(lib.ones(2, 3, 4)), "expected input to have two or fewer"),
    (lambda lib: lib.trapezoid(lib.ones(3), lib.ones(4)), "There must be one `x` value"),
    (lambda lib: lib.renorm(lib.ones(3), 2, 0, 1), "input needs at least 2 dimensions"),
    (lambda lib: lib.renorm(lib.ones(3, 2), -1, 0, 1), "non-positive-norm not supported"),
    (lambda lib: lib.renorm(lib.ones(3, 2), 2, 0, -1), "expected maxnorm to be >= 0"),
    (lambda lib: lib.histc(lib.tensor([1, 2]), bins=3), "\"histogram_cpu\" not implemented"),
    (lambda lib: lib.histc(lib.ones(3), bins=0), "bins must be > 0"),
    (lambda lib: lib.histc(lib.ones(3), bins=3, min=2, max=1), "max must be larger than min"),
    (lambda lib: lib.histc(lib.tensor([1.0, float("inf")]), bins=2), "is not finite"),
    (lambda lib: lib.bincount(lib.tensor([-1, 2])), "bincount only supports 1-d non-negative"),
    (lambda lib: lib.bincount(lib.tensor([[1]])), "bincount only supports 1-d non-negative"),
    (lambda lib: lib.bincount(lib.tensor([1.0])), "\"bincount_cpu\" not implemented"),
    (lambda lib: lib.histogramdd(lib.tensor([[1, 2]]), bins=2), "not implemented for 'Long'"),
])
def test_errors(fn, phrase):
    same_error(fn, phrase)


@pytest.mark.parametrize("fn,what", [
    (lambda lib, x: lib.histogram(x, bins=3).hist, "aten::histogram"),
    (lambda lib, x: lib.histogramdd(x.reshape(-1, 1), bins=2).hist, "aten::_histogramdd"),
    (lambda lib, x: lib.bincount(lib.tensor([0, 2, 2, 1]), weights=x), "aten::bincount"),
])
def test_counting_has_no_derivative(fn, what):
    def run(lib):
        out = fn(lib, lib.tensor([0.5, 1.0, 2.5, 1.5], requires_grad=True))
        assert out.requires_grad
        out.sum().backward()

    same_error(run, f"derivative for {what}")
    for lib in (glassgrad, torch):
        assert not lib.histc(lib.tensor([0.5, 1.0], requires_grad=True), bins=2).requires_grad


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_cdist_pdist_second_derivative(p):
    """torch raises for cdist's/pdist's double backward; glassgrad's composite has one, checked
    against finite differences."""
    rng = np.random.default_rng(0)
    x1 = glassgrad.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    x2 = glassgrad.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    assert glassgrad.autograd.gradgradcheck(lambda a, b: glassgrad.cdist(a, b, p=p), (x1, x2))
    assert glassgrad.autograd.gradgradcheck(lambda a: glassgrad.pdist(a, p=p), (x1,))


def test_cdist_zero_distance_gradient_is_zero():
    for p in (1.0, 2.0, 3.0):
        grads = []
        for lib in (glassgrad, torch):
            x = lib.tensor([[1.0, 2.0], [1.0, 2.0], [3.0, 1.0]], requires_grad=True)
            lib.cdist(x, x, p=p).sum().backward()
            grads.append(x.grad.tolist())
        np.testing.assert_allclose(grads[0], grads[1], atol=1e-6)


@pytest.mark.parametrize("p,shape", [(2.0, (4, 3)), (1.0, (5, 2)), (2.5, (3, 4)),
                                     (float("inf"), (4, 2))])
def test_pdist_gradient_matches_torch(p, shape):
    """The op table runs pdist forward only (torch's backward crashes on an empty input, which
    the bad-input sweep would give it): first derivatives against torch here."""
    x = np.random.default_rng(3).standard_normal(shape)
    cot = np.random.default_rng(4).standard_normal(shape[0] * (shape[0] - 1) // 2)
    grads = []
    for lib in (glassgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(lib.pdist(t, p=p), t, lib.tensor(cot))
        grads.append(g.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)
    t = glassgrad.tensor(x[:3], requires_grad=True)
    assert glassgrad.autograd.gradcheck(lambda a: glassgrad.pdist(a, p=p), (t,))
