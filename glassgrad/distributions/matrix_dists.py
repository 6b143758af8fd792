"""Distributions over matrices: Wishart (positive-definite matrices) and LKJCholesky (Cholesky
factors of correlation matrices) (``torch.distributions``)."""

from __future__ import annotations

import math
from numbers import Number

import numpy as np

import glassgrad as _g
from glassgrad.tensor import Size

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma_family import Beta, Chi2
from .multivariate_normal import _precision_to_scale_tril, _shape
from .utils import finfo_eps, finfo_tiny, lazy_property, vec_to_tril_matrix
from .._user_warning import warn_user

__all__ = ["Wishart", "LKJCholesky"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma: sum of digamma(x - i / 2) for i < p."""
    return _g.digamma(x.unsqueeze(-1) - _g.arange(p, dtype=x.dtype) / 2).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart with ``df`` degrees of freedom and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (``torch.distributions.Wishart``); reparameterised
    by the Bartlett decomposition (chi-squared diagonal through the implicit gamma gradient)."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(n, v) for n, v in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if v is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = _g.tensor(df, dtype=param.dtype)
        else:
            batch_shape = _shape(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        self.__dict__[name] = param.expand(batch_shape + (-1, -1))
        if bool(self.df.lt(p).any()):
            warn_user("Low df values detected. Singular samples are highly likely to occur "
                      "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = scale_tril
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = _g.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df, batch_shape):
        p = self._event_shape[-1]
        offset = _g.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=df.unsqueeze(-1) - offset.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(cov_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        eye = _g.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return _g.cholesky_solve(eye, self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    def _df_matrix(self, df):
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = _g.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(
            min=finfo_eps(self.df.dtype)).diag_embed(dim1=-2, dim2=-1)
        below = _g.randn(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,),
                         dtype=diag.dtype)
        noise = diag + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """A sample by the Bartlett decomposition; a sample that came out singular (possible
        for df near ndim - 1) is redrawn up to ``max_try_correction`` times (default 10),
        with torch's "Singular sample detected." warning."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warn_user("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                mask = singular.reshape(tuple(singular.shape) + (1, 1))
                sample = _g.where(mask, self._bartlett_sampling(sample_shape), sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        trace = _g.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _LOG_2 / 2 + self._half_log_det()) - _g.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * _g.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._half_log_det()) + _g.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-_g.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + _g.mvlgamma(y + (p + 1) / 2, p=p))


class LKJCholesky(Distribution):
    """LKJ distribution over lower Cholesky factors of ``dim x dim`` correlation matrices with
    shape ``concentration`` (``torch.distributions.LKJCholesky``); sampled by the onion method
    (Ghosh and Henderson), as torch."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = _g.broadcast_tensors(_g.as_tensor(
            concentration, dtype=getattr(concentration, "dtype", _g.get_default_dtype())))
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = _g.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = _g.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        with _g.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = _g.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            first_row = np.arange(self.dim) == 0
            u_hypersphere = _g.where(_g.tensor(first_row).unsqueeze(-1), 0.0, u_hypersphere)
            w = _g.sqrt(y) * u_hypersphere
            diag_elems = _g.clamp(1 - _g.sum(w ** 2, dim=-1), min=finfo_tiny(w.dtype)).sqrt()
            return w + _g.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _g.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = _g.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = _g.lgamma(alpha) * dm1
        numerator = _g.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
