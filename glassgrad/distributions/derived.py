"""Families that are a simpler distribution through transforms: LogNormal, HalfNormal,
HalfCauchy, Gumbel, Pareto, LogisticNormal (``torch.distributions``); their samples and
log_prob come from TransformedDistribution, moments and entropy in closed form."""

from __future__ import annotations

import math

import glassgrad as _g

from . import constraints
from ._params import broadcast_params
from ._transform_maps import AbsTransform, AffineTransform, ExpTransform, StickBreakingTransform
from .continuous import Cauchy, Exponential, Normal, Uniform
from .transformed import TransformedDistribution
from .utils import euler_constant, finfo_eps, finfo_tiny

__all__ = ["LogNormal", "HalfNormal", "HalfCauchy", "Gumbel", "Pareto", "LogisticNormal"]


class _Derived(TransformedDistribution):
    """A TransformedDistribution subclass whose ``expand`` keeps the subclass."""

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)


class LogNormal(_Derived):
    """``exp(X)`` for ``X ~ Normal(loc, scale)`` (``torch.distributions.LogNormal``)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class _Half(_Derived):
    """|X| of a symmetric distribution centred at 0: density doubled on [0, inf)."""

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _g.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)

    @property
    def scale(self):
        return self.base_dist.scale


class HalfNormal(_Half):
    """``|X|`` for ``X ~ Normal(0, scale)`` (``torch.distributions.HalfNormal``)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return _g.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Half):
    """``|X|`` for ``X ~ Cauchy(0, scale)`` (``torch.distributions.HalfCauchy``)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return _g.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self):
        return _g.zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        return super().log_prob(_g.as_tensor(value, dtype=self.base_dist.scale.dtype))


class Gumbel(_Derived):
    """Gumbel (type-I extreme value) with location ``loc`` and scale ``scale``
    (``torch.distributions.Gumbel``): ``loc - scale * log(-log U)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        (self.loc, self.scale), _ = broadcast_params(loc, scale)
        dtype = self.loc.dtype
        base_dist = Uniform(_g.full_like(self.loc, finfo_tiny(dtype)),
                            _g.full_like(self.loc, 1 - finfo_eps(dtype)),
                            validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-_g.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


class Pareto(_Derived):
    """Pareto type I with minimum ``scale`` and tail index ``alpha``
    (``torch.distributions.Pareto``): ``scale * exp(E)``, ``E ~ Exponential(alpha)``."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        (self.scale, self.alpha), _ = broadcast_params(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)  # inf for alpha <= 1, as torch gives
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class LogisticNormal(_Derived):
    """Stick-breaking of ``Normal(loc, scale)`` onto the simplex
    (``torch.distributions.LogisticNormal``); event shape ``(K + 1,)`` for ``loc`` of ``(K,)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale


