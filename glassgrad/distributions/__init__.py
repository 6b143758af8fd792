"""Probability distributions with PyTorch's API (``torch.distributions``): the families, the
transforms, ``constraints`` and ``kl_divergence``. Parameters are glassgrad Tensors, so
log_prob, entropy and reparameterised samples (``rsample``) are differentiable."""

import sys

from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Multinomial, NegativeBinomial, Poisson
from .derived import Gumbel, HalfCauchy, HalfNormal, LogisticNormal, LogNormal, Pareto
from .discrete import (Bernoulli, Categorical, Geometric, OneHotCategorical,
                       OneHotCategoricalStraightThrough)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma_family import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, InverseGamma, StudentT
from .kl import kl_divergence, register_kl
from .matrix_dists import LKJCholesky, Wishart
from .misc import ContinuousBernoulli, GeneralizedPareto, Kumaraswamy, VonMises, Weibull
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .relaxed import MixtureSameFamily, RelaxedBernoulli, RelaxedOneHotCategorical
from .transformed import Independent, TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CorrCholeskyTransform, CumulativeDistributionTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
                         PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
                         Transform, identity_transform)
from . import _kl_gamma, _kl_misc, _kl_mvn, _kl_pairs  # noqa: E402,F401 - register KL pairs

__all__ = [
    "Bernoulli", "Cauchy", "Categorical", "Distribution", "Exponential", "ExponentialFamily",
    "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "Laplace", "LogNormal",
    "LogisticNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "TransformedDistribution", "Uniform", "MultivariateNormal",
    "LowRankMultivariateNormal", "Beta", "Chi2", "Dirichlet", "FisherSnedecor", "Gamma",
    "InverseGamma", "StudentT", "Binomial", "Multinomial", "NegativeBinomial", "Poisson",
    "ContinuousBernoulli", "GeneralizedPareto", "Kumaraswamy", "VonMises", "Weibull",
    "MixtureSameFamily", "RelaxedBernoulli", "RelaxedOneHotCategorical", "LKJCholesky",
    "Wishart",
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
    "Transform", "identity_transform", "constraints", "transforms", "kl_divergence", "register_kl",
    "biject_to", "transform_to",
]

from . import _module_aliases  # noqa: E402

_module_aliases.install(sys.modules[__name__])
