"""KL(p || q) for the pairs torch registers with ContinuousBernoulli."""

from __future__ import annotations

import math

import glassgrad as _g

from .continuous import Exponential, Laplace, Normal, Uniform
from .derived import Gumbel, Pareto
from .gamma_family import Beta, Gamma
from .kl import _infinite_like, register_kl
from .misc import ContinuousBernoulli

_INF = float("inf")


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + _g.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - _g.log1p(-q.probs)
    return t1 + t2 + t3


def _minus_entropy_plus_cb_cross(p, q):
    return -p.entropy() - p.mean * q.logits - _g.log1p(-q.probs) - q._cont_bern_log_norm()


register_kl(Beta, ContinuousBernoulli)(_minus_entropy_plus_cb_cross)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p, q):
    result = _minus_entropy_plus_cb_cross(p, q)
    # NOTE: torch's condition, kept as it is (inf unless p reaches both ends of [0, 1])
    outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
    return _g.where(outside, _INF, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p, q):
    return -p.entropy() - _g.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + _g.square(q.loc / q.scale)) + _g.log(q.scale)
    t3 = (p.variance + _g.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * _g.square(q.scale))
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # NOTE: torch's condition, kept as it is
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return _g.where(outside, _INF, result)


def _inf_p(attr):
    return lambda p, q: _infinite_like(getattr(p, attr))


register_kl(ContinuousBernoulli, Pareto)(_inf_p("probs"))
for _p, _attr in ((Exponential, "rate"), (Gamma, "concentration"), (Gumbel, "loc"),
                  (Laplace, "loc"), (Normal, "loc"), (Pareto, "scale")):
    register_kl(_p, ContinuousBernoulli)(_inf_p(_attr))
