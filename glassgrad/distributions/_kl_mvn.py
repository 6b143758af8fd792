"""KL(p || q) between (low-rank) multivariate normals, through Cholesky factors and the
Woodbury identity (the four pairs torch registers)."""

from __future__ import annotations

import glassgrad as _g

from .kl import _batch_trace_XXT, register_kl
from .multivariate_normal import (LowRankMultivariateNormal, MultivariateNormal, _batch_lowrank_logdet,
                                  _batch_lowrank_mahalanobis, _batch_mahalanobis, _shape)


def _check_events(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes "
                         "cannot be computed")


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                                 d._capacitance_tril)


def _half_logdet_tril(d):
    return d._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _q_lowrank_terms(p, q):
    """q's log det, its Mahalanobis term at p's mean, and ``A = C^-1 W_q^T D_q^-1`` (C the
    capacitance factor): what every KL with a low-rank q needs."""
    term3 = _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                       q.loc - p.loc, q._capacitance_tril)
    qWt_qDinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    A = _g.linalg.solve_triangular(q._capacitance_tril, qWt_qDinv, upper=False)
    return _lowrank_logdet(q), term3, A


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_events(p, q, "Low Rank Multivariate Normals")
    q_logdet, term3, A = _q_lowrank_terms(p, q)
    term1 = q_logdet - _lowrank_logdet(p)
    pW, pD, qD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    term21 = (pD / qD).sum(-1)
    term22 = _batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2))
    term24 = _batch_trace_XXT(A.matmul(pW))
    return 0.5 * (term1 + term21 + term22 - term23 - term24 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    q_logdet, term3, A = _q_lowrank_terms(p, q)
    term1 = q_logdet - 2 * _half_logdet_tril(p)
    pL, qD = p._unbroadcasted_scale_tril, q._unbroadcasted_cov_diag
    term21 = _batch_trace_XXT(pL * qD.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_XXT(A.matmul(pL))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    term1 = 2 * _half_logdet_tril(q) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    batch = _shape(q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2])
    n = p.event_shape[0]
    q_tril = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_factor = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    p_diag = _g.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_XXT(_g.linalg.solve_triangular(q_tril, p_factor, upper=False))
    term22 = _batch_trace_XXT(_g.linalg.solve_triangular(q_tril, p_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - n)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    _check_events(p, q, "Multivariate Normals")
    half_term1 = _half_logdet_tril(q) - _half_logdet_tril(p)
    batch = _shape(q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_scale_tril.shape[:-2])
    n = p.event_shape[0]
    q_tril = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_tril = p._unbroadcasted_scale_tril.expand(batch + (n, n))
    term2 = _batch_trace_XXT(_g.linalg.solve_triangular(q_tril, p_tril, upper=False))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)
