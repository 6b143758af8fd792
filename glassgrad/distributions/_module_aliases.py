"""torch's one-module-per-family paths (``torch.distributions.normal``,
``torch.distributions.transformed_distribution``, ...) as aliases of glassgrad's grouped
modules, so ``from torch.distributions.normal import Normal`` ports unchanged."""

from __future__ import annotations

import sys
import types

# torch module name -> the public names it holds (all re-exported by the package)
_ALIASES = {
    "bernoulli": ["Bernoulli"], "beta": ["Beta"], "binomial": ["Binomial"],
    "categorical": ["Categorical"], "cauchy": ["Cauchy"], "chi2": ["Chi2"],
    "continuous_bernoulli": ["ContinuousBernoulli"], "dirichlet": ["Dirichlet"],
    "exponential": ["Exponential"], "fishersnedecor": ["FisherSnedecor"], "gamma": ["Gamma"],
    "generalized_pareto": ["GeneralizedPareto"], "geometric": ["Geometric"],
    "gumbel": ["Gumbel"], "half_cauchy": ["HalfCauchy"], "half_normal": ["HalfNormal"],
    "independent": ["Independent"], "inverse_gamma": ["InverseGamma"],
    "kumaraswamy": ["Kumaraswamy"], "laplace": ["Laplace"], "lkj_cholesky": ["LKJCholesky"],
    "log_normal": ["LogNormal"], "logistic_normal": ["LogisticNormal"],
    "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
    "mixture_same_family": ["MixtureSameFamily"], "multinomial": ["Multinomial"],
    "negative_binomial": ["NegativeBinomial"], "normal": ["Normal"],
    "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"],
    "pareto": ["Pareto"], "poisson": ["Poisson"],
    "relaxed_bernoulli": ["RelaxedBernoulli", "LogitRelaxedBernoulli"],
    "relaxed_categorical": ["RelaxedOneHotCategorical", "ExpRelaxedCategorical"],
    "studentT": ["StudentT"], "transformed_distribution": ["TransformedDistribution"],
    "uniform": ["Uniform"], "von_mises": ["VonMises"], "weibull": ["Weibull"],
    "wishart": ["Wishart"],
}


def install(package) -> None:
    """Register each alias module under ``package`` (in sys.modules and as an attribute)."""
    for short, names in _ALIASES.items():
        full = f"{package.__name__}.{short}"
        module = types.ModuleType(full, f"``torch.distributions.{short}`` (an alias)")
        for name in names:
            # the logit-space relaxed bases are not in torch.distributions itself
            setattr(module, name, getattr(package, name, None) or getattr(package.relaxed, name))
        module.__all__ = list(names)
        sys.modules[full] = module
        setattr(package, short, module)
