"""Count families: Poisson, Binomial, Multinomial, NegativeBinomial (``torch.distributions``)."""

from __future__ import annotations

import math

import glassgrad as _g
import glassgrad.nn.functional as F
from glassgrad.tensor import Size

from . import constraints
from ._params import broadcast_params, probs_or_logits
from ._samplers import binomial
from .discrete import Categorical, _BinaryParams, _enumerate, _expand_binary
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property

__all__ = ["Poisson", "Binomial", "Multinomial", "NegativeBinomial"]


class Poisson(ExponentialFamily):
    """Poisson counts with mean ``rate`` (``torch.distributions.Poisson``); samples are
    torch's numbers after the same seed (``glassgrad.poisson``)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,), batch_shape = broadcast_params(rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with _g.no_grad():
            return _g.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (_g.log(self.rate),)

    def _log_normalizer(self, x):
        return _g.exp(x)


def _clamp_by_zero(x):
    # (max(x, 0) + x - min(x, 0)) / 2 = max(x, 0) with gradient 1/2 at 0, as torch has it
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(total_count, what: str) -> int:
    count = int(total_count.max())
    if not bool((total_count.min() == count).all()):
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
    return count


class Binomial(_BinaryParams, Distribution):
    """Successes in ``total_count`` trials of probability ``probs`` (or ``logits``)
    (``torch.distributions.Binomial``)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (total_count,), _ = probs_or_logits(self, probs, logits, True, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_binary(self, Binomial, batch_shape, _instance)
        new.total_count = self.total_count.expand(batch_shape)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)


    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with _g.no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = _g.lgamma(self.total_count + 1)
        log_factorial_k = _g.lgamma(value + 1)
        log_factorial_nmk = _g.lgamma(self.total_count - value + 1)
        # n * log1p(exp(logits)) in a form that neither overflows nor cancels
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * _g.log1p(_g.exp(-_g.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        _homogeneous_count(self.total_count, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(_g.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = _homogeneous_count(self.total_count, "enumerate_support")
        values = _g.arange(1 + total_count, dtype=self._param.dtype)
        return _enumerate(values, self._batch_shape, expand)


class Multinomial(Distribution):
    """Counts of ``total_count`` draws from a Categorical(``probs`` or ``logits``)
    (``torch.distributions.Multinomial``); ``total_count`` must be one int."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,) + tuple(sample_shape)))
        # the draws' dim goes last, to be counted per category
        order = list(range(1, samples.dim())) + [0]
        samples = samples.permute(*order)
        counts = _g.zeros(self._extended_shape(sample_shape), dtype=samples.dtype)
        counts = counts.scatter_add(-1, samples, _g.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        n = _g.tensor(self.total_count, dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - _g.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = _g.exp(self._binomial.log_prob(support))
        weights = _g.lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum(0).sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = _g.lgamma(value.sum(-1) + 1)
        log_factorial_xs = _g.lgamma(value + 1).sum(-1)
        logits = _g.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers


class NegativeBinomial(_BinaryParams, Distribution):
    """Failures before ``total_count`` successes, success probability ``1 - probs``
    (``torch.distributions.NegativeBinomial``); sampled as a Gamma-Poisson mixture."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (total_count,), _ = probs_or_logits(self, probs, logits, True, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_binary(self, NegativeBinomial, batch_shape, _instance)
        new.total_count = self.total_count.expand(batch_shape)
        return new

    @property
    def mean(self):
        return self.total_count * _g.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / _g.sigmoid(-self.logits)


    @lazy_property
    def _gamma(self):
        from .gamma_family import Gamma

        return Gamma(concentration=self.total_count, rate=_g.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=Size()):
        with _g.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return _g.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits)
                                 + value * F.logsigmoid(self.logits))
        log_normalization = (-_g.lgamma(self.total_count + value) + _g.lgamma(1.0 + value)
                             + _g.lgamma(self.total_count))
        # NOTE: total_count + value == 0 is the one-point mass at 0: log p(0) = 0 there
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
