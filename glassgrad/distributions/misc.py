"""Weibull, Kumaraswamy, GeneralizedPareto, ContinuousBernoulli, VonMises
(``torch.distributions``)."""

from __future__ import annotations

import math

import numpy as np

import glassgrad as _g
import glassgrad.nn.functional as F
from glassgrad.tensor import Size

from . import constraints
from ._params import broadcast_params, probs_or_logits
from ._transform_maps import AffineTransform, PowerTransform
from .continuous import Exponential, Uniform
from .derived import _Derived
from .discrete import _expand_binary
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import clamp_probs, euler_constant, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Weibull", "Kumaraswamy", "GeneralizedPareto", "ContinuousBernoulli", "VonMises"]


class Weibull(_Derived):
    """Weibull with ``scale`` and shape ``concentration`` (``torch.distributions.Weibull``):
    ``scale * E ** (1 / concentration)``, ``E ~ Exponential(1)``."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        (self.scale, self.concentration), _ = broadcast_params(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(_g.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * _g.exp(_g.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return (self.scale * ((self.concentration - 1) / self.concentration)
                ** self.concentration.reciprocal())

    @property
    def variance(self):
        return self.scale.pow(2) * (_g.exp(_g.lgamma(1 + 2 * self.concentration_reciprocal))
                                    - _g.exp(2 * _g.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + _g.log(self.scale * self.concentration_reciprocal) + 1)


def _moments(a, b, n):
    """The n-th moment of Kumaraswamy(a, b): ``b * B(1 + n / a, b)``."""
    arg1 = 1 + n / a
    log_value = _g.lgamma(arg1) + _g.lgamma(b) - _g.lgamma(arg1 + b)
    return b * _g.exp(log_value)


class Kumaraswamy(_Derived):
    """Kumaraswamy on (0, 1) with ``concentration1`` (a) and ``concentration0`` (b)
    (``torch.distributions.Kumaraswamy``): ``(1 - (1 - U) ** (1 / b)) ** (1 / a)``."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        (self.concentration1, self.concentration0), _ = broadcast_params(concentration1,
                                                                         concentration0)
        base_dist = Uniform(_g.full_like(self.concentration0, 0),
                            _g.full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # NOTE: torch's formula, evaluated as torch does (nan wherever log1p(-b) is)
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        bad = (self.concentration0 < 1) | (self.concentration1 < 1)
        return _g.where(bad, math.nan, log_mode).exp()

    @property
    def variance(self):
        return (_moments(self.concentration1, self.concentration0, 2)
                - _g.pow(self.mean, 2))

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = _g.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - _g.log(self.concentration1) - _g.log(self.concentration0)


class GeneralizedPareto(Distribution):
    """Generalized Pareto with ``loc``, ``scale`` and shape ``concentration``
    (``torch.distributions.GeneralizedPareto``); concentration 0 is the exponential tail."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        (self.loc, self.scale, self.concentration), batch_shape = broadcast_params(
            loc, scale, concentration)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape,
                                   ("loc", "scale", "concentration"), _instance)

    def _safe(self):
        eq_zero = _g.isclose(self.concentration, _g.zeros_like(self.concentration))
        return eq_zero, _g.where(eq_zero, _g.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=Size()):
        u = _g.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe()
        y = 1 / safe_conc + _g.ones_like(z)
        where_nonzero = _g.where(y == 0, y, y * _g.log1p(safe_conc * z))
        return -self.scale.log() - _g.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe()
        return _g.where(eq_zero, -z, -_g.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        return _g.log1p(-_g.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return _g.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe()
        logu = _g.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * _g.expm1(-safe_conc * logu)
        return _g.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = _g.where(valid, self.concentration, 0.5)
        return _g.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = _g.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return _g.where(valid, result, math.nan)

    def entropy(self):
        return (_g.log(self.scale) + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = _g.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                         math.inf)
        return constraints.interval(self.loc, upper)


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on [0, 1] with shape ``probs`` (or ``logits``)
    (``torch.distributions.ContinuousBernoulli``; Loaiza-Ganem and Cunningham, 2019). Near
    ``probs = 0.5`` (inside ``lims``) its normaliser and moments use Taylor expansions."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _, is_scalar = probs_or_logits(self, probs, logits)
        if probs is not None:
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        self._lims = lims
        super().__init__(Size() if is_scalar else self._param.shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_binary(self, ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return _g.where(self._outside_unstable_region(), self.probs,
                        self._lims[0] * _g.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = _g.where(cut <= 0.5, cut, _g.zeros_like(cut))
        above = _g.where(cut >= 0.5, cut, _g.ones_like(cut))
        log_norm = _g.log(_g.abs(_g.log1p(-cut) - _g.log(cut))) - _g.where(
            cut <= 0.5, _g.log1p(-2.0 * below), _g.log(2.0 * above - 1.0))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _g.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (_g.log1p(-cut) - _g.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _g.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return _g.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                     + 1.0 / (_g.log1p(-cut) - _g.log(cut)).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _g.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    def sample(self, sample_shape=Size()):
        u = _g.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with _g.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        u = _g.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _g.broadcast_tensors(self.logits, value)
        return (-F.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = _g.where(self._outside_unstable_region(), cdfs, value)
        return _g.where(value <= 0.0, _g.zeros_like(value),
                        _g.where(value >= 1.0, _g.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inside = ((_g.log1p(-cut + value * (2.0 * cut - 1.0)) - _g.log1p(-cut))
                  / (_g.log(cut) - _g.log1p(-cut)))
        return _g.where(self._outside_unstable_region(), inside, value)

    def entropy(self):
        log_probs0 = _g.log1p(-self.probs)
        log_probs1 = _g.log(self.probs)
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = _g.where(outside, x, (self._lims[0] - 0.5) * _g.ones_like(x))
        log_norm = _g.log(_g.abs(_g.expm1(cut))) - _g.log(_g.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return _g.where(outside, log_norm, taylor)


def _log_bessel_i(x, order):
    """log I_order(x) for x > 0 from the exponentially scaled Bessel functions (exact to
    rounding; torch uses polynomial approximations good to ~1e-7)."""
    scaled = _g.special.i0e(x) if order == 0 else _g.special.i1e(x)
    return scaled.log() + x


class VonMises(Distribution):
    """The circular von Mises distribution with mean angle ``loc`` and ``concentration``
    (``torch.distributions.VonMises``); samples by Best and Fisher's rejection sampler in
    float64, as torch, on glassgrad's stream."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        (self.loc, self.concentration), _ = broadcast_params(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, ("loc", "concentration"), _instance)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * _g.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_bessel_i(self.concentration, 0))

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.detach().numpy().astype(np.float64)
        with np.errstate(all="ignore"):
            tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
            rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
            r = (1 + rho ** 2) / (2 * rho)
        return np.where(kappa < 1e-5, 1 / kappa + kappa, r)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        loc = np.broadcast_to(self.loc.detach().numpy().astype(np.float64), shape)
        kappa = np.broadcast_to(self.concentration.detach().numpy().astype(np.float64), shape)
        r = np.broadcast_to(self._proposal_r, shape)
        x = np.zeros(shape)
        done = np.zeros(shape, dtype=bool)
        with np.errstate(all="ignore"):
            while not done.all():
                u1, u2, u3 = _g.rand((3,) + shape, dtype=_g.float64).numpy()
                z = np.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
                x = np.where(accept & ~done, np.sign(u3 - 0.5) * np.arccos(f), x)
                done = done | accept
        out = (x + math.pi + loc) % (2 * math.pi) - math.pi
        return _g.tensor(out, dtype=self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_bessel_i(self.concentration, 1)
                    - _log_bessel_i(self.concentration, 0)).exp()
