"""Op table: the gamma family, zeta, the Bessel I functions, the normal distribution's functions,
entr/sinc/xlog1py/exp2 (issue 15, lane special). Each entry runs on torch and glassgrad."""

from __future__ import annotations

import numpy as np

from . import OpInfo, Sample


def _u(lo, hi):
    """The special functions' standard shapes on ``[lo, hi]``: 0-d, a vector, an empty tensor, a
    non-contiguous matrix, and an int64 vector (promotes to the default float dtype)."""

    def make(rng):
        u = lambda *s: rng.uniform(lo, hi, size=s)  # noqa: E731
        ints = np.arange(max(int(np.ceil(lo)), 1), max(int(np.ceil(lo)), 1) + 3, dtype=np.int64)
        return [
            Sample((u(),), desc="0-d"),
            Sample((u(4),), desc="vector"),
            Sample((u(0),), desc="empty"),
            Sample((u(4, 3).T,), desc="non-contiguous"),
            Sample((ints,), desc="int64"),
        ]

    return make


def _pair(dom1, dom2, int_pair=True):
    """Two inputs on their domains, broadcast both ways, 0-d against a matrix, and ints."""

    def make(rng):
        u = lambda *s: rng.uniform(*dom1, size=s)  # noqa: E731
        v = lambda *s: rng.uniform(*dom2, size=s)  # noqa: E731
        out = [
            Sample((u(), v()), desc="0-d"),
            Sample((u(3, 1), v(1, 4)), desc="broadcast both"),
            Sample((u(), v(2, 3)), desc="0-d with matrix"),
        ]
        if int_pair:
            out.append(Sample((np.array([2, 3], np.int64), np.array([1, 4], np.int64)),
                              desc="int64"))
        return out

    return make


def _shape_a(m, x):
    """A first argument of x's shape and dtype with values spread over (0.5, 3) that does not
    depend on x (gradcheck perturbs x; the derivative w.r.t. a is not implemented in torch)."""
    dtype = x.dtype if x.is_floating_point() else m.float64
    return m.linspace(0.5, 3.0, max(x.numel(), 1)).to(dtype)[: x.numel()].reshape(x.shape)


def _with_number(rng):
    return [Sample((rng.uniform(0.2, 2.0, size=(3,)),), desc="vector")]


OPS = [
    OpInfo("lgamma", lambda m, x: m.lgamma(x), _u(-3.7, 4.0)),
    OpInfo("lgamma_method", lambda m, x: x.lgamma(), _u(0.3, 4.0), gradcheck_samples=1),
    OpInfo("special_gammaln", lambda m, x: m.special.gammaln(x), _u(0.3, 4.0),
           gradcheck_samples=1),
    OpInfo("digamma", lambda m, x: m.digamma(x), _u(-2.7, 4.0), atol=1e-5),
    OpInfo("special_psi", lambda m, x: m.special.psi(x) + m.special.digamma(x), _u(0.3, 4.0),
           gradcheck_samples=1),
    OpInfo("polygamma_1", lambda m, x: m.polygamma(1, x), _u(0.3, 4.0), atol=1e-5),
    OpInfo("polygamma_3", lambda m, x: m.special.polygamma(3, x), _u(0.5, 4.0), atol=1e-4,
           rtol=1e-4),
    OpInfo("polygamma_method", lambda m, x: x.polygamma(2), _u(0.5, 4.0), atol=1e-4,
           gradcheck_samples=1),
    OpInfo("polygamma_0", lambda m, x: m.polygamma(0, x), _u(0.5, 4.0), gradcheck_samples=1),
    OpInfo("mvlgamma", lambda m, x: m.mvlgamma(x, 3), _u(1.2, 4.0)),
    OpInfo("multigammaln", lambda m, x: m.special.multigammaln(x, 2), _u(0.8, 4.0),
           gradcheck_samples=1),
    OpInfo("mvlgamma_method", lambda m, x: x.mvlgamma(1), _u(0.3, 4.0), gradcheck_samples=1),
    # the derivative for the first argument is not implemented in torch: only the second is given
    OpInfo("igamma", lambda m, x: m.igamma(_shape_a(m, x), x), _u(0.2, 3.0)),
    OpInfo("special_gammainc", lambda m, x: m.special.gammainc(_shape_a(m, x), x), _with_number),
    OpInfo("igammac", lambda m, x: m.special.gammaincc(m.tensor(1.3, dtype=m.float64), x),
           _u(0.2, 3.0)),
    OpInfo("special_gammaincc", lambda m, x: m.special.gammaincc(_shape_a(m, x), x),
           _with_number),
    OpInfo("igamma_method", lambda m, a, x: a.detach().igamma(x) + a.detach().igammac(x),
           _pair((0.3, 3.0), (0.2, 3.0), int_pair=False)),
    OpInfo("special_zeta", lambda m, x: m.special.zeta(m.tensor([2.0, 3.5], dtype=x.dtype),
                                                       x.unsqueeze(-1)), _u(0.3, 3.0),
           atol=1e-5),
    OpInfo("special_zeta_numbers", lambda m, q: m.special.zeta(2.0, q) + m.special.zeta(q + 1, 2),
           _with_number, grad=False),
    OpInfo("i0", lambda m, x: m.i0(x), _u(-3.0, 3.0)),
    OpInfo("special_i0", lambda m, x: m.special.i0(x) + x.i0(), _u(-3.0, 3.0),
           gradcheck_samples=1),
    OpInfo("special_i0e", lambda m, x: m.special.i0e(x), _u(-3.0, 3.0)),
    OpInfo("special_i1", lambda m, x: m.special.i1(x), _u(-3.0, 3.0)),
    OpInfo("special_i1e", lambda m, x: m.special.i1e(x), _u(-3.0, 3.0)),
    OpInfo("special_ndtr", lambda m, x: m.special.ndtr(x), _u(-4.0, 4.0)),
    OpInfo("special_ndtri", lambda m, x: m.special.ndtri(x), _u(0.02, 0.98), atol=1e-5),
    OpInfo("special_log_ndtr", lambda m, x: m.special.log_ndtr(x), _u(-6.0, 4.0)),
    OpInfo("special_erfcx", lambda m, x: m.special.erfcx(x), _u(-2.0, 5.0)),
    OpInfo("special_entr", lambda m, x: m.special.entr(x), _u(0.1, 3.0)),
    OpInfo("sinc", lambda m, x: m.sinc(x), _u(-2.5, 2.5)),
    OpInfo("special_sinc", lambda m, x: m.special.sinc(x) + x.sinc(), _u(-2.5, 2.5),
           gradcheck_samples=1),
    OpInfo("special_xlog1py", lambda m, x, y: m.special.xlog1py(x, y),
           _pair((-2.0, 2.0), (-0.8, 2.0))),
    OpInfo("special_xlog1py_number", lambda m, y: m.special.xlog1py(2.0, y), _u(-0.5, 2.0),
           gradcheck_samples=1),
    OpInfo("exp2", lambda m, x: m.exp2(x) + m.special.exp2(x), _u(-3.0, 3.0)),
    OpInfo("exp2_method", lambda m, x: x.exp2(), _u(-3.0, 3.0), gradcheck_samples=1),
]
