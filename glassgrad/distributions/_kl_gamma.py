"""KL(p || q) for the pairs torch registers with the gamma-family and count distributions."""

from __future__ import annotations

import math

import glassgrad as _g

from .continuous import Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Poisson
from .derived import Gumbel, Pareto
from .discrete import Bernoulli
from .gamma_family import Beta, Dirichlet, Gamma
from .kl import _inf_where, _infinite_like, _x_log_x, register_kl
from .utils import euler_constant


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * _g.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * _g.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * _g.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is "
                                  "not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = _g.lgamma(q.concentration) - _g.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * _g.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _register_infinite(type_p, attr, *types_q):
    def fn(p, q):
        return _infinite_like(getattr(p, attr))

    for type_q in types_q:
        register_kl(type_p, type_q)(fn)


_register_infinite(Beta, "concentration1", Pareto)
_register_infinite(Exponential, "rate", Beta)
_register_infinite(Gamma, "concentration", Beta, Pareto, Uniform)
_register_infinite(Gumbel, "loc", Beta, Gamma)
_register_infinite(Laplace, "loc", Beta, Gamma)
_register_infinite(Normal, "loc", Beta, Gamma)
_register_infinite(Pareto, "scale", Beta)
_register_infinite(Poisson, "rate", Bernoulli, Binomial)


def _beta_mean(p):
    return p.concentration1 / (p.concentration1 + p.concentration0)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * _beta_mean(p)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma()
                                  - (p.concentration1 + p.concentration0).digamma())
    t4 = q.rate * _beta_mean(p)
    return -p.entropy() + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    E_beta = _beta_mean(p)
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (E_beta * (1 - E_beta) / (p.concentration1 + p.concentration0 + 1)
          + E_beta.pow(2)) * 0.5
    t4 = q.loc * E_beta
    t5 = q.loc.pow(2) * 0.5
    return -p.entropy() + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > p.support.lower_bound) | (q.high < p.support.upper_bound),
                      result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * _g.log(ratio)
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant
            - (1 + euler_constant))


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = ((p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma()
          - p.concentration)
    t2 = beta_scale_prod.log() + p.concentration / beta_scale_prod
    t3 = (_g.exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-p.concentration)
          - loc_scale_ratio)
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = (0.5 * _g.log(beta_sqr * var_normal * 2 * math.pi) - p.concentration
          - p.concentration.lgamma())
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * p.concentration.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = _g.log(common_term)
    t2 = ((q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term)
          / common_term)
    t3 = ((q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term)
          / common_term)
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - t1 - t2
    return _inf_where((p.high > q.support.upper_bound) | (p.low < q.support.lower_bound), result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = ((1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term)
          / common_term)
    t4 = q.rate * (p.high + p.low) / 2
    return _inf_where(p.low < q.support.lower_bound, -t1 + t2 + t3 + t4)
