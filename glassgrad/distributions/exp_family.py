"""Exponential families (``torch.distributions.ExponentialFamily``): entropy from the log
normaliser by the Bregman divergence, so a family that gives its natural parameters and log
normaliser gets ``entropy`` (and the same-family KL) by autograd."""

from __future__ import annotations

import glassgrad as _g

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``: a subclass gives
    ``_natural_params`` (a tuple of Tensors), ``_log_normalizer(*natural_params)`` (F) and
    ``_mean_carrier_measure`` (E[k(x)]); ``entropy`` is ``F(theta) - <theta, grad F(theta)>
    - E[k(x)]``, the Bregman divergence of F (torch's ExponentialFamily.entropy)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with _g.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
        gradients = _g.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
