"""torch.distributions on glassgrad against torch: the gamma family, the count families and
their samplers (values, first and second derivatives, shapes, implicit reparameterisation
gradients, sample moments)."""

import numpy as np
import pytest
import torch

import glassgrad
from tests.distributions_oracle import METHODS, PROPERTIES, Spec, compare, compare_shapes

_V = [0.3, 1.7]
SPECS = [
    Spec("Gamma", lambda m, a, b: m.distributions.Gamma(a, b), [[0.7, 2.5], [0.5, 2.0]],
         value=_V),
    Spec("Chi2", lambda m, d: m.distributions.Chi2(d), [[0.7, 3.0]], value=_V),
    Spec("InverseGamma", lambda m, a, b: m.distributions.InverseGamma(a, b),
         [[1.5, 3.5], [0.5, 2.0]], value=_V),
    Spec("Dirichlet", lambda m, a: m.distributions.Dirichlet(a),
         [[[0.7, 2.5, 1.0], [0.3, 0.5, 0.9]]], value=[[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]),
    Spec("Beta", lambda m, a, b: m.distributions.Beta(a, b), [[0.7, 2.5], [1.5, 3.0]],
         value=[0.3, 0.8]),
    Spec("StudentT", lambda m, d, a, b: m.distributions.StudentT(d, a, b),
         [[0.8, 1.5, 3.5], [0.1, -1.0, 2.0], [0.7, 2.0, 1.0]], value=[0.3, 1.7, -2.0]),
    Spec("FisherSnedecor", lambda m, a, b: m.distributions.FisherSnedecor(a, b),
         [[1.5, 3.0, 6.0], [2.5, 5.0, 7.0]], value=[0.3, 1.7, 2.0]),
    Spec("Poisson", lambda m, r: m.distributions.Poisson(r), [[0.7, 2.5]], value=[0.0, 3.0]),
    Spec("Binomial", lambda m, n, p: m.distributions.Binomial(n, p), [[6.0, 6.0], [0.3, 0.8]],
         value=[0.0, 3.0], int_params=(0,)),
    Spec("Binomial_logits", lambda m, n, x: m.distributions.Binomial(n, logits=x),
         [[5.0, 7.0], [0.3, -0.8]], value=[1.0, 3.0], int_params=(0,)),
    Spec("Multinomial", lambda m, p: m.distributions.Multinomial(5, p),
         [[[0.3, 0.2, 0.5], [0.1, 0.6, 0.3]]], value=[[1.0, 2.0, 2.0], [0.0, 5.0, 0.0]]),
    Spec("NegativeBinomial", lambda m, n, p: m.distributions.NegativeBinomial(n, p),
         [[5.0, 2.5], [0.3, 0.8]], value=[0.0, 3.0]),
]


@pytest.mark.parametrize("what", METHODS + PROPERTIES)
@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_values_and_derivatives(spec, what):
    compare(spec, what)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_shapes_support_repr(spec):
    compare_shapes(spec)


def test_standard_gamma_grad_matches_torch():
    """The implicit derivative dx/dalpha against torch's _standard_gamma_grad on a grid of
    shapes and quantiles (small, moderate and large alpha; both tails)."""
    import scipy.stats

    alpha = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 80.0, 600.0])
    q = np.array([0.01, 0.3, 0.5, 0.9, 0.999])
    a, qq = np.meshgrid(alpha, q)
    x = scipy.stats.gamma.ppf(qq, a)
    want = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    got = glassgrad.distributions._samplers._standard_gamma_grad(
        glassgrad.tensor(a), glassgrad.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-3)  # torch's approximation: ~5e-4 at worst
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    for i, j in [(0, 4), (4, 1), (4, 4), (2, 3)]:  # where torch's approximation is weakest
        ai, xi = a[i, j], x[i, j]
        dF = mp.diff(lambda s: mp.gammainc(s, 0, xi, regularized=True), ai)
        exact = -dF / mp.e ** ((ai - 1) * mp.log(xi) - xi - mp.loggamma(ai))
        np.testing.assert_allclose(got[i, j], float(exact), rtol=1e-7)


def test_rsample_gradient_is_first_order_only_as_in_torch():
    for m in (torch, glassgrad):
        a = m.tensor([1.5, 2.0], dtype=m.float64, requires_grad=True)
        x = m.distributions.Gamma(a, m.ones(2, dtype=m.float64)).rsample()
        assert x.grad_fn.name() == "DivBackward0"
        (g,) = m.autograd.grad(x.sum(), a, create_graph=True)
        with pytest.raises(NotImplementedError,
                           match="the derivative for '_standard_gamma_grad' is not implemented"):
            m.autograd.grad(g.sum(), a)


RSAMPLE = [  # (name, constructor on float64 params, params, statistic whose mean is exact)
    ("Gamma", lambda m, a, b: m.distributions.Gamma(a, b), [[0.4, 3.0], [1.5, 0.7]]),
    ("Beta", lambda m, a, b: m.distributions.Beta(a, b), [[0.6, 3.0], [1.5, 0.8]]),
    ("Dirichlet", lambda m, a: m.distributions.Dirichlet(a), [[0.6, 3.0, 1.2]]),
    ("Chi2", lambda m, d: m.distributions.Chi2(d), [[0.8, 5.0]]),
    ("InverseGamma", lambda m, a, b: m.distributions.InverseGamma(a, b), [[3.5, 4.0],
                                                                         [1.5, 0.7]]),
]


@pytest.mark.parametrize("name,make,params", RSAMPLE, ids=[r[0] for r in RSAMPLE])
def test_rsample_gradient_is_unbiased(name, make, params):
    """d/dtheta of the mean of 40000 reparameterised draws against d mean/dtheta from the
    closed form (torch's own values): a wrong implicit gradient is off by far more than the
    3% allowed (e.g. dropping the density term changes it by a factor)."""
    glassgrad.manual_seed(1)
    tp = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    want = torch.autograd.grad(make(torch, *tp).mean.sum(), tp)
    gp = [glassgrad.tensor(p, dtype=glassgrad.float64, requires_grad=True) for p in params]
    x = make(glassgrad, *gp).rsample((40000,))
    got = glassgrad.autograd.grad(x.mean(0).sum(), gp)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=0.03, atol=0.01)


MOMENTS = [
    ("Gamma", lambda m: m.distributions.Gamma(m.tensor([0.5, 3.0]), m.tensor([1.0, 2.0]))),
    ("Beta", lambda m: m.distributions.Beta(m.tensor([0.5, 3.0]), m.tensor([1.0, 2.0]))),
    ("Dirichlet", lambda m: m.distributions.Dirichlet(m.tensor([0.5, 3.0, 1.5]))),
    ("Poisson", lambda m: m.distributions.Poisson(m.tensor([0.5, 30.0]))),
    ("Binomial", lambda m: m.distributions.Binomial(m.tensor([10.0, 50.0]),
                                                    m.tensor([0.3, 0.9]))),
    ("Multinomial", lambda m: m.distributions.Multinomial(8, m.tensor([0.2, 0.35, 0.45]))),
    ("NegativeBinomial", lambda m: m.distributions.NegativeBinomial(m.tensor([3.0, 10.0]),
                                                                    m.tensor([0.3, 0.6]))),
    ("StudentT", lambda m: m.distributions.StudentT(m.tensor([5.0, 9.0]))),
    ("FisherSnedecor", lambda m: m.distributions.FisherSnedecor(m.tensor([5.0, 9.0]),
                                                                m.tensor([12.0, 15.0]))),
]


@pytest.mark.parametrize("name,make", MOMENTS, ids=[n for n, _ in MOMENTS])
def test_sample_moments(name, make):
    """Mean of 40000 seeded draws within 5 standard errors of the exact mean, and the
    sample variance within 10% of the exact one."""
    glassgrad.manual_seed(0)
    d = make(glassgrad)
    x = d.sample((40000,)).numpy().astype(np.float64)
    mean, var = d.mean.numpy(), d.variance.numpy()
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / len(x))), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=0.1)


def test_binomial_top_level():
    glassgrad.manual_seed(0)
    c = glassgrad.tensor([[10.0, 0.0], [5.0, 20.0]])
    p = glassgrad.tensor([[0.5, 0.3], [1.0, 0.0]])
    out = glassgrad.binomial(c, p)
    ref = torch.binomial(torch.tensor(c.numpy()), torch.tensor(p.numpy()))
    assert out.dtype == glassgrad.float32 and tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(out.numpy()[:, 1:], ref.numpy()[:, 1:])  # the certain ones
    np.testing.assert_array_equal(out.numpy()[1], [5.0, 0.0])


@pytest.mark.parametrize("name,make,params", [
    ("Normal", lambda m, a, b: m.distributions.Normal(a, b), [[0.3, -1.0], [0.7, 2.0]]),
    ("Exponential", lambda m, r: m.distributions.Exponential(r), [[0.7, 2.0]]),
    ("Bernoulli", lambda m, p: m.distributions.Bernoulli(p), [[0.3, 0.8]]),
    ("Poisson", lambda m, r: m.distributions.Poisson(r), [[0.7, 2.0]]),
    ("Gamma", lambda m, a, b: m.distributions.Gamma(a, b), [[0.7, 2.5], [0.5, 2.0]]),
    ("Beta", lambda m, a, b: m.distributions.Beta(a, b), [[0.7, 2.5], [1.5, 3.0]]),
    ("Dirichlet", lambda m, a: m.distributions.Dirichlet(a), [[[0.7, 2.5, 1.0]]]),
    ("ContinuousBernoulli", lambda m, p: m.distributions.ContinuousBernoulli(p), [[0.3, 0.8]]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_exponential_family_bregman_entropy(name, make, params):
    """ExponentialFamily.entropy (the Bregman divergence of the log normaliser, by autograd)
    equals torch's, and the family's closed-form entropy."""
    out = []
    for m in (torch, glassgrad):
        d = make(m, *[m.tensor(p, dtype=m.float64) for p in params])
        try:
            bregman = m.distributions.ExponentialFamily.entropy(d).detach().numpy()
        except NotImplementedError:  # no _mean_carrier_measure (Poisson, Beta, Dirichlet)
            bregman = None
        out.append((bregman, d))
    if out[0][0] is None:
        assert out[1][0] is None
        return
    out[1] = (out[1][0], out[1][1].entropy().detach().numpy())
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out[1][0], out[1][1], rtol=1e-9, atol=1e-12)


def test_binomial_errors_match_torch():
    for bad, err in [(lambda m: m.binomial(3.0, 0.5), TypeError),
                     (lambda m: m.binomial(m.tensor([3]), m.tensor([0.5])), ValueError)]:
        with pytest.raises(err) as te:
            bad(torch)
        with pytest.raises(err) as ge:
            bad(glassgrad)
        assert str(ge.value).split("\n")[0].split(", got")[0] == str(te.value).split(", got")[0]
