"""The base class of every distribution (``torch.distributions.Distribution``)."""

from __future__ import annotations


import glassgrad as _g
from glassgrad.tensor import Size, Tensor

from . import constraints
from .utils import lazy_property
from .._user_warning import warn_user

__all__ = ["Distribution"]


class Distribution:
    """A probability distribution with batch and event shapes (``torch.distributions.Distribution``).

    Subclasses set ``arg_constraints`` (parameter name -> Constraint), ``support``,
    ``has_rsample`` and implement ``log_prob``, ``rsample`` or ``sample``, moments and ``entropy``.
    With ``validate_args`` (default on, as in Python's non-optimised mode) the constructor checks
    every parameter against its constraint and ``log_prob`` checks the value against the support,
    raising ValueError with torch's wording.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made afterwards."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warn_user(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.")
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # a parameter given the other way (probs for logits)
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(_g.as_tensor(valid).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution whose parameters are expanded to ``batch_shape`` (no copy)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand()")

    def _expand_params(self, cls, batch_shape, names, _instance=None, event_shape=None):
        """``expand`` for a family whose parameters ``names`` all have the batch shape (plus
        ``event_shape``'s dims): each is expanded, no validation is rerun."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        extra = tuple(self._event_shape if event_shape is None else event_shape)
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                tail = tuple(value.shape[value.dim() - len(extra):]) if extra else ()
                setattr(new, name, value.expand(tuple(batch_shape) + tail))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with _g.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """A reparameterised sample: differentiable w.r.t. the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int):
        warn_user("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return _g.exp(self.entropy())

    def _extended_shape(self, sample_shape=Size()) -> Size:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        actual_shape = value.shape
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warn_user(f"{self.__class__} does not define `support` to enable sample "
                      "validation. Please initialize the distribution with "
                      "`validate_args=False` to turn off validation.")
            return
        if support is None:
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)})"
                f" to be within the support ({support!r}) of the distribution {self!r}, but "
                f"found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"
