"""Transform, its inverse and the transforms built from others: Compose, Independent, Reshape,
Cat, Stack, CumulativeDistribution (``torch.distributions.transforms``)."""

from __future__ import annotations

import functools
import operator
import weakref

import glassgrad as _g
from glassgrad.tensor import Size

from . import constraints
from .utils import _sum_rightmost

__all__ = ["Transform", "ComposeTransform", "IndependentTransform", "ReshapeTransform",
           "CatTransform", "StackTransform", "CumulativeDistributionTransform",
           "identity_transform"]


class Transform:
    """An invertible (or not) map with a computable log |det Jacobian|
    (``torch.distributions.transforms.Transform``).

    A subclass sets ``domain``/``codomain`` (constraints), ``bijective`` and ``sign`` where they
    apply, and implements ``_call``, ``_inverse`` and ``log_abs_det_jacobian(x, y)``. With
    ``cache_size=1`` the latest ``(x, y)`` pair is kept so ``t.inv(t(x))`` returns ``x`` itself.
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size: int = 0):
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self) -> int:
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform, made by ``t.inv``; it holds ``t`` strongly."""

    def __init__(self, transform: Transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


def _widen(constraint, start):
    """``constraint`` reinterpreted as an ``independent`` one of event dim ``start`` adjusted
    through the parts (the domain or codomain of a composition)."""
    if start > constraint.event_dim:
        return constraints.independent(constraint, start - constraint.event_dim)
    return constraint


class ComposeTransform(Transform):
    """``parts`` applied in order (``torch.distributions.transforms.ComposeTransform``);
    log |det J| sums the parts' terms, each summed over the event dims it does not cover."""

    def __init__(self, parts, cache_size: int = 0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # the input's event dim is what the last part's output needs, traced back through parts
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        return _widen(domain, event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        return _widen(codomain, event_dim)

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _g.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, x_, y_ in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(x_, y_),
                                        event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return (self.__class__.__name__ + "(\n    "
                + ",\n    ".join(repr(p) for p in self.parts) + "\n)")


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more dims taken as event dims: its
    log |det J| is summed over them (``torch.distributions.transforms.IndependentTransform``)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims: int, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (same number of elements);
    log |det J| is 0 (``torch.distributions.transforms.ReshapeTransform``)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0):
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.new_zeros(batch_shape)

    def _reshape(self, shape, source, target):
        if len(shape) < len(source):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(source)
        if tuple(shape[cut:]) != tuple(source):
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got "
                             f"{tuple(source)}")
        return tuple(shape[:cut]) + tuple(target)

    def forward_shape(self, shape):
        return self._reshape(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshape(shape, self.out_shape, self.in_shape)


class CatTransform(Transform):
    """Applies ``tseq[i]`` to the i-th block of ``lengths[i]`` entries along ``dim`` and
    concatenates (``torch.distributions.transforms.CatTransform``)."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("CatTransform: lengths and tseq must have the same length")
        self.dim = dim

    @functools.cached_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @functools.cached_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _blocks(self, fn, *tensors):
        start, out = 0, []
        for trans, length in zip(self.transforms, self.lengths):
            out.append(fn(trans, *[t.narrow(self.dim, start, length) for t in tensors]))
            start = start + length
        return out

    def _check(self, x):
        if not -x.dim() <= self.dim < x.dim() or x.size(self.dim) != self.length:
            raise ValueError(f"CatTransform: expected size {self.length} at dim {self.dim}, "
                             f"got a tensor of shape {tuple(x.shape)}")

    def _call(self, x):
        self._check(x)
        return _g.cat(self._blocks(lambda t, v: t(v), x), dim=self.dim)

    def _inverse(self, y):
        self._check(y)
        return _g.cat(self._blocks(lambda t, v: t.inv(v), y), dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        def one(trans, xs, ys):
            ladj = trans.log_abs_det_jacobian(xs, ys)
            if trans.event_dim < self.event_dim:
                ladj = _sum_rightmost(ladj, self.event_dim - trans.event_dim)
            return ladj

        terms = self._blocks(one, x, y)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return _g.cat(terms, dim=dim)
        return functools.reduce(operator.add, terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies ``tseq[i]`` to the i-th slice along ``dim`` and stacks the results
    (``torch.distributions.transforms.StackTransform``)."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        if z.size(self.dim) != len(self.transforms):
            raise ValueError(f"StackTransform: expected size {len(self.transforms)} at dim "
                             f"{self.dim}, got a tensor of shape {tuple(z.shape)}")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        return _g.stack([t(v) for v, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        return _g.stack([t.inv(v) for v, t in zip(self._slice(y), self.transforms)],
                        dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [t.log_abs_det_jacobian(a, b)
                 for a, b, t in zip(self._slice(x), self._slice(y), self.transforms)]
        return _g.stack(terms, dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """A distribution's cdf as a transform onto (0, 1): inverse its icdf, log |det J| its
    log_prob (``torch.distributions.transforms.CumulativeDistributionTransform``)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)
