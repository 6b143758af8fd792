"""The elementary transforms: Exp, Power, Sigmoid, Tanh, Softplus, Abs, Affine, Softmax,
StickBreaking, LowerCholesky, PositiveDefinite, CorrCholesky
(``torch.distributions.transforms``)."""

from __future__ import annotations

import math
from numbers import Number

import numpy as np

import glassgrad as _g
import glassgrad.nn.functional as F
from glassgrad.tensor import Size, Tensor

from . import constraints
from ._transform_base import Transform
from .utils import finfo_eps, finfo_tiny, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["ExpTransform", "PowerTransform", "SigmoidTransform", "TanhTransform",
           "SoftplusTransform", "AbsTransform", "AffineTransform", "SoftmaxTransform",
           "StickBreakingTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "CorrCholeskyTransform"]


def _broadcast_shape(shape, *params):
    """``shape`` broadcast with the shapes of tensor parameters (numbers have shape ())."""
    return Size(np.broadcast_shapes(tuple(shape), *(tuple(getattr(p, "shape", ()))
                                                    for p in params)))


def _same_type(self, other):
    return isinstance(other, type(self))


class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on positive numbers."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _g.broadcast_tensors(exponent if isinstance(exponent, Tensor)
                                                else _g.tensor(float(exponent)))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def forward_shape(self, shape):
        return _broadcast_shape(shape, self.exponent)

    inverse_shape = forward_shape

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all())

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        return self.exponent.sign()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()


def _clipped_sigmoid(x):
    return _g.clamp(_g.sigmoid(x), min=finfo_tiny(x.dtype), max=1.0 - finfo_eps(x.dtype))


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, clipped into the open unit interval."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        y = y.clamp(min=finfo_tiny(y.dtype), max=1.0 - finfo_eps(y.dtype))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)``; log |det J| in the stable form ``2 (log 2 - x - softplus(-2x))``."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return _g.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: the inverse returns ``y``)."""

    domain = constraints.real
    codomain = constraints.positive
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x``, over ``event_dim`` rightmost dims."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Number) and isinstance(b, Number):
                if a != b:
                    return False
            elif not bool((_g.as_tensor(a) == _g.as_tensor(b)).all()):
                return False
        return True

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if isinstance(scale, Number):
            result = _g.full_like(x, math.log(abs(scale)))
        else:
            result = _g.abs(scale).log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:result.dim() - self.event_dim]) + (-1,))
            result = result.sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return _broadcast_shape(shape, self.loc, self.scale)

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by ``softmax`` (not bijective; the inverse is
    ``log``, up to a constant)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


def _offset(x, n):
    """``n + 1 - (1, 2, ..., n)``: the stick-breaking shift in x's dtype."""
    return n + 1 - x.new_ones(n).cumsum(-1)


class StickBreakingTransform(Transform):
    """``R^(K-1)`` onto the K-simplex by stick breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        offset = _offset(x, x.shape[-1])
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        sf = 1 - y_crop.cumsum(-1)
        sf = _g.clamp(sf, min=finfo_tiny(y.dtype))
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        x = x - _offset(x, x.shape[-1]).log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: ``L L^T`` of the LowerCholeskyTransform."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        y = _g.linalg.cholesky(y)
        return LowerCholeskyTransform().inv(y)


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length ``D(D-1)/2`` to Cholesky factors of ``D x D``
    correlation matrices: tanh to (-1, 1), then stick breaking along each row."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True
    __eq__ = _same_type
    __hash__ = Transform.__hash__

    def _call(self, x):
        x = _g.tanh(x)
        eps = finfo_eps(x.dtype)
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z = r ** 2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        r = r + _g.eye(r.shape[-1], dtype=r.dtype)
        return r * F.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - _g.cumsum(y * y, dim=-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)
