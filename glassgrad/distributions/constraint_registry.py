"""From unconstrained space onto a constraint (``torch.distributions.constraint_registry``):
``biject_to(c)`` gives a bijective Transform onto ``c`` (for HMC-style reparameterisation),
``transform_to(c)`` any Transform onto it (for optimisation). Both dispatch on the
constraint's type; ``register`` adds a factory, NotImplementedError names an unknown one."""

from __future__ import annotations

from numbers import Number

from . import constraints
from . import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Maps Constraint subclasses to factories ``constraint -> Transform``."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Register ``factory`` for a Constraint subclass (or the class of an instance);
        usable as a decorator. TypeError for anything else."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _interval(c):
    if (isinstance(c.lower_bound, Number) and c.lower_bound == 0
            and isinstance(c.upper_bound, Number) and c.upper_bound == 1):
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(),
                               T.AffineTransform(c.lower_bound, c.upper_bound - c.lower_bound)])


def _both(factory, *cs):
    for c in cs:
        biject_to.register(c, factory)
        transform_to.register(c, factory)


_both(lambda c: T.identity_transform, constraints.real)
_both(lambda c: T.ExpTransform(), constraints.positive, constraints.nonnegative)
_both(lambda c: T.ComposeTransform([T.ExpTransform(), T.AffineTransform(c.lower_bound, 1)]),
      constraints.greater_than, constraints.greater_than_eq)
_both(lambda c: T.ComposeTransform([T.ExpTransform(), T.AffineTransform(c.upper_bound, -1)]),
      constraints.less_than)
_both(_interval, constraints.interval, constraints.half_open_interval)
_both(lambda c: T.CorrCholeskyTransform(), constraints.corr_cholesky)
for _registry in (biject_to, transform_to):
    _registry.register(constraints.independent, lambda c, r=_registry: T.IndependentTransform(
        r(c.base_constraint), c.reinterpreted_batch_ndims))
    _registry.register(constraints.cat, lambda c, r=_registry: T.CatTransform(
        [r(x) for x in c.cseq], c.dim, c.lengths))
    _registry.register(constraints.stack, lambda c, r=_registry: T.StackTransform(
        [r(x) for x in c.cseq], c.dim))
biject_to.register(constraints.simplex, lambda c: T.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: T.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: T.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite, lambda c: T.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite, lambda c: T.PositiveDefiniteTransform())
