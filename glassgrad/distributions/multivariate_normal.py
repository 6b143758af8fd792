"""Gaussians over vectors: MultivariateNormal (covariance, precision or Cholesky factor) and
LowRankMultivariateNormal (``W W^T + diag(D)``) (``torch.distributions``). Every quantity goes
through the lower Cholesky factor and triangular solves (torch.linalg), so all are
differentiable to second order."""

from __future__ import annotations

import math

import numpy as np

import glassgrad as _g
from glassgrad.tensor import Size

from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal", "LowRankMultivariateNormal"]

_LOG_2PI = math.log(2 * math.pi)


def _shape(*shapes) -> tuple:
    return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))


def _batch_mv(bmat, bvec):
    return _g.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^-1 x`` batched: one triangular solve, L broadcast to x's batch."""
    n = bx.shape[-1]
    batch = _shape(bL.shape[:-2], bx.shape[:-1])
    sol = _g.linalg.solve_triangular(bL.expand(batch + (n, n)),
                                     bx.expand(batch + (n,)).unsqueeze(-1), upper=False)
    return sol.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """Cholesky factor of ``P^-1`` without inverting P: the flipped Cholesky factor of the
    flipped P is the inverse transpose of the wanted factor."""
    Lf = _g.linalg.cholesky(_g.flip(P, (-2, -1)))
    L_inv = _g.flip(Lf, (-2, -1)).transpose(-2, -1)
    eye = _g.eye(P.shape[-1], dtype=P.dtype).expand(tuple(L_inv.shape))
    return _g.linalg.solve_triangular(L_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    """Gaussian over vectors of length ``n`` with mean ``loc`` and exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (``(..., n, n)``)
    (``torch.distributions.MultivariateNormal``). ValueError for missing or extra matrices
    and for parameters of fewer dims than that, with torch's messages."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, v) for n, v in (("scale_tril", scale_tril),
                                     ("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix)) if v is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             "leading batch dimensions" if name == "scale_tril" else
                             f"{name} must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        batch_shape = _shape(matrix.shape[:-2], loc.shape[:-1])
        self.__dict__[name] = matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = scale_tril
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = _g.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(cov_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return _g.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return _g.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _g.normal(_g.zeros(shape, dtype=self.loc.dtype), _g.ones(shape, dtype=self.loc.dtype))
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * _LOG_2PI + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + _LOG_2PI) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)


def _batch_capacitance_tril(W, D):
    """Cholesky factor of ``I + W^T D^-1 W`` (m x m): the small matrix of the Woodbury
    identity."""
    m = W.size(-1)
    K = _g.matmul(W.mT / D.unsqueeze(-2), W)
    return _g.linalg.cholesky(K + _g.eye(m, dtype=W.dtype))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) by the matrix determinant lemma."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(Distribution):
    """Gaussian with covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``
    (``torch.distributions.LowRankMultivariateNormal``): log_prob and entropy in O(n m^2) by
    the Woodbury identity and the determinant lemma."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = _g.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self._event_shape[0]
        d_sqrt = D.sqrt().unsqueeze(-1)
        Dinvsqrt_W = W / d_sqrt
        K = _g.matmul(Dinvsqrt_W, Dinvsqrt_W.mT) + _g.eye(n, dtype=W.dtype)
        return (d_sqrt * _g.linalg.cholesky(K)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (_g.matmul(W, W.mT) + _g.diag_embed(D)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        A = _g.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return (_g.diag_embed(D.reciprocal()) - A.mT @ A).expand(self._matrix_shape())

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        dtype = self.loc.dtype
        eps_W = _g.normal(_g.zeros(W_shape, dtype=dtype), _g.ones(W_shape, dtype=dtype))
        eps_D = _g.normal(_g.zeros(shape, dtype=dtype), _g.ones(shape, dtype=dtype))
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * _LOG_2PI + self._log_det() + M)

    def entropy(self):
        H = 0.5 * (self._event_shape[0] * (1.0 + _LOG_2PI) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
