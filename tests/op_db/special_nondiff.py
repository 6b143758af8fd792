"""Op table: the special functions PyTorch does not differentiate (Bessel J/Y, the modified
Bessel kernels, Airy Ai, spherical j0, the orthogonal polynomials); forward values and dtypes
against torch (issue 15, lane special). Gradients: see tests/test_special_namespace.py."""

from __future__ import annotations

import numpy as np

from . import OpInfo, Sample
from .special_gamma import _u

# NOTE: torch's float64 Bessel J/Y and Airy kernels are accurate to a few 1e-7 only (checked
# with mpmath); glassgrad's (SciPy's) are accurate to rounding, hence atol 2e-6 for those
_BESSEL = {
    "bessel_j0": (-9.0, 9.0), "bessel_j1": (-9.0, 9.0), "bessel_y0": (0.2, 9.0),
    "bessel_y1": (0.2, 9.0), "modified_bessel_i0": (-4.0, 4.0), "modified_bessel_i1": (-4.0, 4.0),
    "modified_bessel_k0": (0.1, 5.0), "modified_bessel_k1": (0.1, 5.0),
    "scaled_modified_bessel_k0": (0.1, 5.0), "scaled_modified_bessel_k1": (0.1, 5.0),
    "airy_ai": (-5.0, 3.0), "spherical_bessel_j0": (-9.0, 9.0),
}
_POLYNOMIALS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]


def _polynomial_samples(rng):
    x = rng.uniform(-1.2, 1.2, size=(3, 4))
    x[0, :3] = [1.0, -1.0, 0.0]
    n = np.array([0, 1, 2, 3, 5, -1, 7, 9, 12, 4, 2, 25], np.int64).reshape(3, 4)
    return [
        Sample((x, n), desc="tensor n"),
        Sample((rng.uniform(-1.2, 1.2, size=(2, 3)), 4), desc="number n"),
        Sample((rng.uniform(-1.2, 1.2, size=(4, 1)), np.array([0, 3, 10], np.int64)),
               desc="broadcast"),
        Sample((np.array([1, 2], np.int64), np.array([2, 3], np.int64)), desc="int64"),
    ]


def _bessel_op(name, dom):
    return OpInfo(name, lambda m, x: getattr(m.special, name)(x), _u(*dom), grad=False,
                  atol=2e-6)


def _polynomial_op(name):
    return OpInfo(name, lambda m, x, n: getattr(m.special, name)(x, n), _polynomial_samples,
                  grad=False, rtol=1e-6)


OPS = [_bessel_op(name, dom) for name, dom in _BESSEL.items()]
OPS += [_polynomial_op(name) for name in _POLYNOMIALS]
OPS.append(OpInfo("chebyshev_polynomial_t_number_x",
                  lambda m, n: m.special.chebyshev_polynomial_t(0.3, n.long()), _u(0.0, 9.0),
                  grad=False))
