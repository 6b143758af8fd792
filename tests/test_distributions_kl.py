"""kl_divergence against torch: every pair torch registers between families glassgrad has,
values and first derivatives w.r.t. both distributions' parameters; the registry's dispatch
(most specific pair, NotImplementedError where torch has none, register_kl)."""

import numpy as np
import pytest
import torch

import glassgrad

D2 = [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
D2B = [[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]
# name: (constructor(m, *params), params of p, params of q)
FAMILIES = {
    "Normal": (lambda m, a, b: m.distributions.Normal(a, b), [[0.3, -1.0], [0.7, 2.0]],
               [[0.1, 0.5], [1.3, 0.9]]),
    "Laplace": (lambda m, a, b: m.distributions.Laplace(a, b), [[0.3, -1.0], [0.7, 2.0]],
                [[0.1, 0.5], [1.3, 0.9]]),
    "Cauchy": (lambda m, a, b: m.distributions.Cauchy(a, b), [[0.3, -1.0], [0.7, 2.0]],
               [[0.1, 0.5], [1.3, 0.9]]),
    "Gumbel": (lambda m, a, b: m.distributions.Gumbel(a, b), [[0.3, -1.0], [0.7, 2.0]],
               [[0.1, 0.5], [1.3, 0.9]]),
    "Uniform": (lambda m, a, b: m.distributions.Uniform(a, b), [[0.1, 0.3], [0.8, 0.9]],
                [[0.05, 0.4], [0.9, 0.95]]),
    "Exponential": (lambda m, r: m.distributions.Exponential(r), [[0.7, 2.0]], [[1.3, 0.4]]),
    "HalfNormal": (lambda m, s: m.distributions.HalfNormal(s), [[0.7, 2.0]], [[1.3, 0.4]]),
    "Pareto": (lambda m, s, a: m.distributions.Pareto(s, a), [[0.2, 1.0], [2.5, 3.5]],
               [[0.1, 1.2], [1.5, 2.5]]),
    "Bernoulli": (lambda m, p: m.distributions.Bernoulli(p), [[0.3, 0.6]], [[0.5, 0.2]]),
    "Geometric": (lambda m, p: m.distributions.Geometric(p), [[0.3, 0.6]], [[0.5, 0.2]]),
    "Categorical": (lambda m, p: m.distributions.Categorical(p), [D2], [D2B]),
    "OneHotCategorical": (lambda m, p: m.distributions.OneHotCategorical(p), [D2], [D2B]),
    "Independent": (lambda m, a, b: m.distributions.Independent(m.distributions.Normal(a, b), 1),
                    [[[0.3, -1.0]] * 2, [[0.7, 2.0]] * 2], [[[0.1, 0.5]] * 2, [[1.3, 0.9]] * 2]),
    "TransformedDistribution": (lambda m, a, b: m.distributions.TransformedDistribution(
        m.distributions.Normal(a, b), [m.distributions.ExpTransform()]),
        [[0.3, -1.0], [0.7, 2.0]], [[0.1, 0.5], [1.3, 0.9]]),
    "Gamma": (lambda m, a, b: m.distributions.Gamma(a, b), [[2.0, 3.0], [1.0, 0.5]],
              [[1.5, 0.7], [2.0, 1.3]]),
    "Beta": (lambda m, a, b: m.distributions.Beta(a, b), [[2.0, 3.0], [1.5, 0.5]],
             [[1.2, 0.7], [2.0, 1.3]]),
    "Dirichlet": (lambda m, a: m.distributions.Dirichlet(a), [[[1.0, 2.0, 3.0], [0.5, 0.5, 2.0]]],
                  [[[2.0, 1.0, 0.5], [1.5, 2.5, 1.0]]]),
    "Poisson": (lambda m, r: m.distributions.Poisson(r), [[2.0, 3.5]], [[1.0, 4.0]]),
    "Binomial": (lambda m, n, p: m.distributions.Binomial(n, p), [[5.0, 6.0], [0.3, 0.6]],
                 [[5.0, 4.0], [0.5, 0.2]]),
    "ContinuousBernoulli": (lambda m, p: m.distributions.ContinuousBernoulli(p),
                            [[0.3, 0.8]], [[0.6, 0.45]]),
    "ExponentialFamily": None,  # covered through its subclasses' same-family pairs
}


_COV = [[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]]
_COVB = [[1.0, -0.3, 0.0], [-0.3, 2.5, 0.4], [0.0, 0.4, 0.8]]
FAMILIES["MultivariateNormal"] = (
    lambda m, a, c: m.distributions.MultivariateNormal(a, covariance_matrix=c @ c.mT),
    [[[0.3, -1.0, 0.5], [0.0, 0.2, 0.1]], np.linalg.cholesky(_COV)],
    [[0.1, 0.5, -0.3], np.linalg.cholesky(_COVB)])
FAMILIES["LowRankMultivariateNormal"] = (
    lambda m, a, w, d: m.distributions.LowRankMultivariateNormal(a, w, d),
    [[0.3, -1.0, 0.5], [[0.5, 0.1], [-0.3, 0.8], [0.2, 0.2]], [1.0, 0.5, 2.0]],
    [[[0.1, 0.5, -0.3], [0.0, 0.2, 0.1]], [[0.2, -0.4], [0.6, 0.1], [0.3, 0.9]], [0.7, 1.5, 0.9]])


def _build(m, name, which):
    make, p_params, q_params = FAMILIES[name]
    params = [m.tensor(np.asarray(v), dtype=m.float64, requires_grad=True)
              for v in (p_params if which == "p" else q_params)]
    return make(m, *params), params


def _torch_pairs():
    from torch.distributions.kl import _KL_REGISTRY

    return sorted({(p.__name__, q.__name__) for p, q in _KL_REGISTRY})


PAIRS = [(p, q) for p, q in _torch_pairs()
         if FAMILIES.get(p) is not None and FAMILIES.get(q) is not None]


def test_every_torch_pair_is_registered():
    """glassgrad registers exactly torch's pairs among the families it has."""
    from glassgrad.distributions.kl import _KL_REGISTRY

    have = {n for n in dir(glassgrad.distributions) if isinstance(
        getattr(glassgrad.distributions, n), type)}
    mine = sorted({(p.__name__, q.__name__) for p, q in _KL_REGISTRY})
    wanted = [pq for pq in _torch_pairs() if pq[0] in have and pq[1] in have]
    assert mine == wanted


def _kl(m, p_name, q_name):
    p, pp = _build(m, p_name, "p")
    q, qp = _build(m, q_name, "q")
    try:
        kl = m.distributions.kl_divergence(p, q)
    except NotImplementedError:
        return None
    params = pp + qp
    finite = np.isfinite(kl.detach().numpy())
    if not finite.any() or not kl.requires_grad:
        return kl.detach().numpy(), None
    kl_f = m.where(m.tensor(finite), kl, m.zeros_like(kl))
    grads = m.autograd.grad(kl_f.sum(), params, allow_unused=True)
    return kl.detach().numpy(), [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_kl_values_and_gradients(pair):
    expected = _kl(torch, *pair)
    got = _kl(glassgrad, *pair)
    if expected is None:
        assert got is None, f"torch raises NotImplementedError for {pair}"
        return
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-7, atol=1e-10)
    if expected[1] is not None:
        for e, g in zip(expected[1], got[1]):
            if e is not None:
                np.testing.assert_allclose(np.zeros_like(e) if g is None else g, e, rtol=1e-6,
                                           atol=1e-9)


def test_missing_pair_raises_like_torch():
    for m in (torch, glassgrad):
        with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented "
                                                      "for p type Cauchy and q type Normal"):
            m.distributions.kl_divergence(m.distributions.Cauchy(0.0, 1.0),
                                          m.distributions.Normal(0.0, 1.0))


def test_register_kl_most_specific_and_type_check():
    D = glassgrad.distributions

    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    base = D.kl_divergence(p, q)
    np.testing.assert_allclose(base.numpy(), torch.distributions.kl_divergence(
        torch.distributions.Normal(0.0, 1.0), torch.distributions.Normal(1.0, 2.0)).numpy())

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return glassgrad.tensor(42.0)

    try:
        assert float(D.kl_divergence(p, q)) == 42.0  # the subclass pair wins
        assert float(D.kl_divergence(D.Normal(0.0, 1.0), q)) == float(base)
    finally:
        from glassgrad.distributions.kl import _KL_MEMOIZE, _KL_REGISTRY

        del _KL_REGISTRY[MyNormal, D.Normal]
        _KL_MEMOIZE.clear()
    for m in (torch, glassgrad):
        with pytest.raises(TypeError):
            m.distributions.register_kl(3, m.distributions.Normal)

