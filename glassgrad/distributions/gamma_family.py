"""The gamma family and what is built on gamma draws: Gamma, Chi2, InverseGamma, Dirichlet, Beta,
StudentT, FisherSnedecor (``torch.distributions``). Reparameterised samples go through
``_standard_gamma``'s implicit gradient (NOTE [Implicit gamma gradient] in
ops/gamma_sample.py); Dirichlet and Beta samples are normalised gammas, so their pathwise
gradient is the gammas' (torch uses the marginal Beta cdf instead: both are unbiased, the
per-sample values differ)."""

from __future__ import annotations

import math
from numbers import Number

import glassgrad as _g
import glassgrad.nn.functional as F
from glassgrad.tensor import Size

from . import constraints
from ._params import broadcast_params
from ._samplers import _sample_dirichlet, _standard_gamma
from ._transform_maps import PowerTransform
from .derived import _Derived
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import finfo_tiny

__all__ = ["Gamma", "Chi2", "InverseGamma", "Dirichlet", "Beta", "StudentT", "FisherSnedecor"]


def _clamp_detached(value, low, high=None):
    """Clamp the numbers of ``value`` in place, leaving its gradient untouched (torch's
    ``value.detach().clamp_()``): a draw that underflowed to 0 must not give log(0)."""
    with _g.no_grad():
        value.detach().clamp_(min=low, max=high)
    return value


class Gamma(ExponentialFamily):
    """Gamma with shape ``concentration`` and ``rate`` (``torch.distributions.Gamma``);
    reparameterised by the implicit gradient, cdf by the regularised incomplete gamma."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        (self.concentration, self.rate), batch_shape = broadcast_params(concentration, rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return _clamp_detached(value, finfo_tiny(value.dtype))

    def log_prob(self, value):
        value = _g.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (_g.xlogy(self.concentration, self.rate) + _g.xlogy(self.concentration - 1, value)
                - self.rate * value - _g.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - _g.log(self.rate) + _g.lgamma(self.concentration)
                + (1.0 - self.concentration) * _g.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return _g.lgamma(x + 1) + (x + 1) * _g.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _g.special.gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """Chi-squared with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)
    (``torch.distributions.Chi2``)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class InverseGamma(_Derived):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)`` (``torch.distributions.InverseGamma``)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return _g.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return _g.where(self.concentration > 2, result, math.inf)

    def entropy(self):
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())


class Dirichlet(ExponentialFamily):
    """Dirichlet over the simplex with ``concentration`` ``(..., K)``
    (``torch.distributions.Dirichlet``); reparameterised (see the module docstring)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, ("concentration",), _instance)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (_g.xlogy(self.concentration - 1.0, value).sum(-1)
                + _g.lgamma(self.concentration.sum(-1)) - _g.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # all concentrations < 1: the density peaks at the largest one's vertex
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = F.one_hot(mode.argmax(dim=-1), concentrationm1.shape[-1]).to(mode.dtype)
        return _g.where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (_g.lgamma(self.concentration).sum(-1) - _g.lgamma(a0)
                - (k - a0) * _g.digamma(a0)
                - ((self.concentration - 1.0) * _g.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - _g.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """Beta on [0, 1] with ``concentration1`` (alpha) and ``concentration0`` (beta)
    (``torch.distributions.Beta``): a two-category Dirichlet."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            both = _g.tensor([float(concentration1), float(concentration0)])
        else:
            (concentration1, concentration0), _ = broadcast_params(concentration1,
                                                                   concentration0)
            both = _g.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = _g.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return _g.lgamma(x) + _g.lgamma(y) - _g.lgamma(x + y)


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``
    (``torch.distributions.StudentT``); reparameterised through a Chi2 draw."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        (self.df, self.loc, self.scale), _ = broadcast_params(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, ("df", "loc", "scale"), _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return _g.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df_safe = _g.where(self.df > 2, self.df, 3.0)
        finite = self.scale.pow(2) * df_safe / (df_safe - 2)
        return _g.where(self.df > 2, finite, _g.where(self.df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        X = _g.normal(_g.zeros(shape, dtype=self.df.dtype), _g.ones(shape, dtype=self.df.dtype))
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * X * _g.rsqrt(Z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + _g.lgamma(0.5 * self.df) - _g.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * _g.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = _g.lgamma(0.5 * self.df) + math.lgamma(0.5) - _g.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (_g.digamma(0.5 * (self.df + 1))
                                                           - _g.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class FisherSnedecor(Distribution):
    """Fisher-Snedecor F with ``df1`` and ``df2`` degrees of freedom
    (``torch.distributions.FisherSnedecor``); reparameterised through two Gamma draws."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        (self.df1, self.df2), batch_shape = broadcast_params(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, ("df1", "df2"), _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = _g.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _g.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = _g.where(self.df2 <= 4, math.nan, self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=Size(())):
        shape = self._extended_shape(sample_shape)
        X1 = self._gamma1.rsample(sample_shape).reshape(shape)
        X2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = finfo_tiny(X2.dtype)
        Y = X1 / _clamp_detached(X2, tiny)
        return _clamp_detached(Y, tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * _g.log(value)
        t3 = (ct1 + ct2) * _g.log1p(ct3 * value)
        return t1 + t2 - t3


