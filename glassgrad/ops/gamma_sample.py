"""The reparameterised gamma sample (``torch._standard_gamma``) and its implicit derivative
(``torch._standard_gamma_grad``).

NOTE [Implicit gamma gradient]: for ``x ~ Gamma(alpha, 1)`` with cdf ``F(x; alpha)`` (the
regularised lower incomplete gamma), holding ``F`` fixed gives ``dx/dalpha = -(dF/dalpha) /
f(x; alpha)`` (Figurnov et al., "Implicit Reparameterization Gradients", 2018). torch evaluates
it with series and asymptotic approximations; glassgrad takes ``dF/dalpha`` by Richardson-
extrapolated central differences of SciPy's ``gammainc`` in float64 (relative error ~1e-9,
checked against torch's ``_standard_gamma_grad`` in the tests) and ``f`` in log space. As in
torch, ``_standard_gamma_grad`` itself has no derivative: a second derivative through a gamma
sample raises NotImplementedError.
"""

from __future__ import annotations

import numpy as np

from .primitive import Primitive


def standard_gamma_grad_np(alpha, x):
    """``dx/dalpha`` of a standard gamma sample ``x`` (NOTE [Implicit gamma gradient])."""
    import scipy.special as sp  # lazily: SciPy's import costs ~1 s, and most programs never sample

    dtype = np.result_type(alpha, x)
    a = np.asarray(alpha, np.float64)
    x = np.asarray(x, np.float64)
    h = 1e-4 * np.maximum(a, 1.0)
    h = np.minimum(h, a / 4)  # stay inside alpha > 0

    def central(step):
        return (sp.gammainc(a + step, x) - sp.gammainc(a - step, x)) / (2 * step)

    with np.errstate(all="ignore"):
        dF = (4 * central(h / 2) - central(h)) / 3
        log_f = sp.xlogy(a - 1, x) - x - sp.gammaln(a)
        out = -dF * np.exp(-log_f)
    return out.astype(dtype, copy=False)


class StandardGammaGrad(Primitive):
    """``torch._standard_gamma_grad(alpha, x)``; not differentiable, as in torch."""

    node_name = "StandardGammaGradBackward0"

    @staticmethod
    def forward(xp, alpha, x):
        return standard_gamma_grad_np(alpha, x)

    @staticmethod
    def backward(grad, *saved):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not "
                                  "implemented.\nglassgrad: a gamma sample's reparameterised "
                                  "gradient is first order only, as in torch.")


class StandardGamma(Primitive):
    """A drawn standard gamma ``sample`` as a function of ``alpha`` (the draw happens outside,
    in distributions/_samplers.py): forward returns it, backward is the implicit gradient."""

    saves = ("alpha", "result")

    @staticmethod
    def forward(xp, alpha, *, sample):
        return sample

    @staticmethod
    def backward(grad, alpha, result, sample=None):
        return (grad * StandardGammaGrad.apply(alpha, result),)
