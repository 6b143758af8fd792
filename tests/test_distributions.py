"""torch.distributions on glassgrad against torch: the location-scale, discrete and transformed
families (values, first and second derivatives, shapes, reprs, sample moments)."""

import numpy as np
import pytest

from tests.distributions_oracle import METHODS, PROPERTIES, Spec, compare, compare_shapes

_V = [0.3, 1.7]
_TRIL = np.linalg.cholesky([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
_P = [0.2, 0.85]
SPECS = [
    Spec("Normal", lambda m, a, b: m.distributions.Normal(a, b), [[0.1, -1.0], [0.7, 2.0]],
         value=_V, prob=_P),
    Spec("Laplace", lambda m, a, b: m.distributions.Laplace(a, b), [[0.1, -1.0], [0.7, 2.0]],
         value=_V, prob=_P),
    Spec("Cauchy", lambda m, a, b: m.distributions.Cauchy(a, b), [[0.1, -1.0], [0.7, 2.0]],
         value=_V, prob=_P),
    Spec("Uniform", lambda m, a, b: m.distributions.Uniform(a, b), [[0.1, -1.0], [0.7, 2.0]],
         value=[0.3, 1.2], prob=_P),
    Spec("Exponential", lambda m, r: m.distributions.Exponential(r), [[0.7, 2.0]], value=_V,
         prob=_P),
    Spec("LogNormal", lambda m, a, b: m.distributions.LogNormal(a, b), [[0.1, -1.0], [0.7, 2.0]],
         value=_V, prob=_P),
    Spec("HalfNormal", lambda m, s: m.distributions.HalfNormal(s), [[0.7, 2.0]], value=_V,
         prob=_P),
    Spec("HalfCauchy", lambda m, s: m.distributions.HalfCauchy(s), [[0.7, 2.0]], value=_V,
         prob=_P),
    Spec("Gumbel", lambda m, a, b: m.distributions.Gumbel(a, b), [[0.1, -1.0], [0.7, 2.0]],
         value=_V, prob=_P),
    Spec("Pareto", lambda m, s, a: m.distributions.Pareto(s, a), [[0.2, 1.0], [2.5, 3.5]],
         value=[0.3, 1.7], prob=_P),
    Spec("LogisticNormal", lambda m, a, b: m.distributions.LogisticNormal(a, b),
         [[0.1, -1.0], [0.7, 2.0]], value=[0.2, 0.5, 0.3]),
    Spec("Independent", lambda m, a, b: m.distributions.Independent(
        m.distributions.Normal(a, b), 1), [[[0.1, -1.0]] * 3, [[0.7, 2.0]] * 3], value=_V),
    Spec("Bernoulli", lambda m, p: m.distributions.Bernoulli(p), [[0.3, 0.5, 0.9]],
         value=[1.0, 0.0, 1.0]),
    Spec("Bernoulli_logits", lambda m, x: m.distributions.Bernoulli(logits=x),
         [[0.3, -2.0, 1.5]], value=[1.0, 0.0, 1.0]),
    Spec("Categorical", lambda m, p: m.distributions.Categorical(p),
         [[[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]], value=[2, 0]),
    Spec("Categorical_logits", lambda m, x: m.distributions.Categorical(logits=x),
         [[[0.2, -0.3, 1.5], [0.6, 0.3, 0.1]]], value=[[2, 0], [1, 1]]),
    Spec("OneHotCategorical", lambda m, p: m.distributions.OneHotCategorical(p),
         [[[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]], value=[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
    Spec("OneHotCategoricalStraightThrough",
         lambda m, x: m.distributions.OneHotCategoricalStraightThrough(logits=x),
         [[0.2, -0.3, 1.5]], value=[0.0, 1.0, 0.0]),
    Spec("Geometric", lambda m, p: m.distributions.Geometric(p), [[0.3, 0.5, 0.9]],
         value=[0.0, 3.0, 1.0]),
    Spec("MultivariateNormal_cov", lambda m, a, c: m.distributions.MultivariateNormal(
        a, covariance_matrix=c @ c.mT), [[[0.3, -1.0, 0.5], [0.0, 0.2, 0.1]], _TRIL],
        value=[[0.1, 0.2, 0.3]]),
    Spec("MultivariateNormal_prec", lambda m, a, c: m.distributions.MultivariateNormal(
        a, precision_matrix=c @ c.mT), [[0.3, -1.0, 0.5], [_TRIL, _TRIL * 0.5]],
        value=[[0.1, 0.2, 0.3], [1.0, -0.5, 0.0]]),
    Spec("MultivariateNormal_tril", lambda m, a, c: m.distributions.MultivariateNormal(
        a, scale_tril=c.tril()), [[0.3, -1.0, 0.5], _TRIL], value=[[0.1, 0.2, 0.3]]),
    Spec("LowRankMultivariateNormal", lambda m, a, w, d: m.distributions.
         LowRankMultivariateNormal(a, w, d), [[[0.3, -1.0, 0.5], [0.0, 0.2, 0.1]],
                                              [[0.5, 0.1], [-0.3, 0.8], [0.2, 0.2]],
                                              [1.0, 0.5, 2.0]], value=[[0.1, 0.2, 0.3]]),
]


@pytest.mark.parametrize("what", METHODS + PROPERTIES)
@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_values_and_derivatives(spec, what):
    compare(spec, what)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_shapes_support_repr(spec):
    compare_shapes(spec)


MOMENTS = [
    ("Normal", lambda m: m.distributions.Normal(m.tensor([0.5, -2.0]), m.tensor([1.0, 3.0]))),
    ("Laplace", lambda m: m.distributions.Laplace(m.tensor([0.5, -2.0]), m.tensor([1.0, 3.0]))),
    ("Uniform", lambda m: m.distributions.Uniform(m.tensor([0.5, -2.0]), m.tensor([1.0, 3.0]))),
    ("Exponential", lambda m: m.distributions.Exponential(m.tensor([0.5, 2.0]))),
    ("Gumbel", lambda m: m.distributions.Gumbel(m.tensor([0.5, -2.0]), m.tensor([1.0, 3.0]))),
    ("LogNormal", lambda m: m.distributions.LogNormal(m.tensor([0.5, -2.0]), m.tensor([0.3, 0.5]))),
    ("HalfNormal", lambda m: m.distributions.HalfNormal(m.tensor([0.5, 2.0]))),
    ("Bernoulli", lambda m: m.distributions.Bernoulli(m.tensor([0.2, 0.7]))),
    ("Geometric", lambda m: m.distributions.Geometric(m.tensor([0.2, 0.7]))),
    ("Pareto", lambda m: m.distributions.Pareto(m.tensor([0.5, 2.0]), m.tensor([5.0, 6.0]))),
    ("OneHotCategorical", lambda m: m.distributions.OneHotCategorical(m.tensor([0.2, 0.35, 0.45]))),
]


@pytest.mark.parametrize("name,make", MOMENTS, ids=[n for n, _ in MOMENTS])
def test_sample_moments(name, make):
    """Mean and variance of 40000 seeded draws within 5 standard errors of the exact moments
    (a wrong sampler, e.g. a rate taken as a scale, is off by far more)."""
    import glassgrad

    glassgrad.manual_seed(0)
    d = make(glassgrad)
    n = 40000
    x = d.sample((n,)).numpy().astype(np.float64)
    mean, var = d.mean.numpy(), d.variance.numpy()
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / n)), (x.mean(0), mean)
    fourth = np.mean((x - mean) ** 4, axis=0)
    assert np.all(np.abs(x.var(0) - var) < 5 * np.sqrt((fourth - var ** 2) / n) + 1e-12)


@pytest.mark.parametrize("name", ["Normal", "Laplace", "Uniform", "Exponential", "Cauchy",
                                  "Bernoulli", "Geometric", "Categorical"])
def test_draws_equal_torch(name):
    """These families call the generator as torch does: after the same seed, the same draws."""
    import torch

    import glassgrad

    out = []
    for m in (torch, glassgrad):
        m.manual_seed(3)
        p = m.tensor([0.2, 0.7]) if name in ("Bernoulli", "Geometric") else None
        d = {"Normal": lambda: m.distributions.Normal(m.tensor([0.5, -2.0]), m.tensor([1.0, 3.0])),
             "Laplace": lambda: m.distributions.Laplace(m.zeros(2), m.ones(2)),
             "Uniform": lambda: m.distributions.Uniform(m.zeros(2), m.ones(2) * 3),
             "Exponential": lambda: m.distributions.Exponential(m.tensor([0.5, 2.0])),
             "Cauchy": lambda: m.distributions.Cauchy(m.zeros(2), m.ones(2)),
             "Bernoulli": lambda: m.distributions.Bernoulli(p),
             "Geometric": lambda: m.distributions.Geometric(p),
             "Categorical": lambda: m.distributions.Categorical(m.tensor([0.2, 0.3, 0.5])),
             }[name]()
        out.append((d.sample((50,)).numpy(), d.rsample((20,)).detach().numpy()
                    if d.has_rsample else None))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6, atol=1e-6)
    if out[0][1] is not None:
        np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("what", ["covariance_matrix", "precision_matrix", "scale_tril"])
@pytest.mark.parametrize("spec", [s for s in SPECS if "Multivariate" in s.name], ids=repr)
def test_multivariate_matrices(spec, what):
    compare(spec, what)


def test_torch_module_paths_exist():
    """Every torch.distributions submodule (normal, transformed_distribution, kl, ...) has a
    glassgrad counterpart holding the same public names, importable by its dotted path."""
    import importlib

    import torch.distributions as TD

    import glassgrad.distributions as GD

    modules = [n for n in dir(TD) if not n.startswith("_")
               and type(getattr(TD, n)).__name__ == "module"]
    assert len(modules) > 40
    for name in modules:
        mine = importlib.import_module(f"glassgrad.distributions.{name}")
        assert mine is getattr(GD, name)
        missing = [n for n in getattr(getattr(TD, name), "__all__", [])
                   if not hasattr(mine, n)]
        assert not missing, (name, missing)
    from glassgrad.distributions.normal import Normal

    assert Normal is GD.Normal
