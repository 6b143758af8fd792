"""Op table entries: torch.linalg's solvers, inverses, determinants and Cholesky; inputs are
made well-conditioned inside ``fn`` (``a @ a.mT + n I``), so finite differences see the symmetric
matrix the op is defined on."""

import numpy as np

from . import OpInfo, Sample, arr


def _spd(m, a):
    """A symmetric positive-definite matrix from any square ``a`` (differentiable in ``a``)."""
    n = a.shape[-1] if a.dim() else 1  # (a 0-d mutation reaches the op)
    return a @ a.mT + n * m.eye(n, dtype=a.dtype)


def _wc(m, a):
    """A well-conditioned (diagonally dominant) square matrix from ``a``."""
    n = a.shape[-1] if a.dim() else 1  # (a 0-d mutation reaches the op)
    return a + 3 * m.eye(n, dtype=a.dtype)


def _squares(*shapes):
    def make(rng):
        return [Sample((arr(rng, *s),), desc="x".join(map(str, s))) for s in shapes]

    return make


def _pairs(*shapes, **kwargs):
    def make(rng):
        return [Sample((arr(rng, *a), arr(rng, *b)), dict(kwargs), desc=f"{a} {b}")
                for a, b in shapes]

    return make


def _triangular_samples(rng):
    out = []
    for upper in (True, False):
        for left in (True, False):
            b = (3, 2) if left else (2, 3)
            out.append(Sample((arr(rng, 3, 3), arr(rng, *b)), {"upper": upper, "left": left},
                              desc=f"upper={upper} left={left}"))
    out.append(Sample((arr(rng, 2, 3, 3), arr(rng, 3, 1)), {"upper": False, "left": True,
                      "unitriangular": True}, desc="batched unitriangular"))
    return out


def _singular(rng):
    # rank 2: the determinant's gradient is the (nonzero) cofactor matrix, which glassgrad
    # gives. torch's depends on its LU: where the pivot comes out exactly 0 (seen on an AMD
    # EPYC with AVX-512, torch 2.13) it returns zeros, elsewhere the cofactors; the oracle
    # cannot pin that, so the sample runs only where torch gives the cofactors
    a = arr(rng, 3, 3)
    a[2] = a[0] + a[1]
    if _torch_det_grad_is_zero(a):
        return []
    return [Sample((a,), desc="rank 2")]


def _torch_det_grad_is_zero(a):
    try:
        import torch
    except ImportError:
        return False
    t = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    torch.linalg.det(t).backward()
    return bool((t.grad == 0).all())


OPS = [
    OpInfo("linalg.cholesky", lambda m, a: m.linalg.cholesky(_spd(m, a)),
           _squares((3, 3), (2, 3, 3), (0, 0))),
    OpInfo("linalg.cholesky_upper", lambda m, a: m.linalg.cholesky(_spd(m, a), upper=True),
           _squares((3, 3))),
    OpInfo("linalg.cholesky_ex", lambda m, a: m.linalg.cholesky_ex(_spd(m, a)), _squares((3, 3))),
    OpInfo("cholesky_top", lambda m, a: m.cholesky(_spd(m, a), True), _squares((3, 3))),
    OpInfo("cholesky_solve", lambda m, a, b: m.cholesky_solve(b, m.linalg.cholesky(_spd(m, a))),
           _pairs(((3, 3), (3, 2)), ((2, 3, 3), (3, 1)))),
    OpInfo("cholesky_inverse", lambda m, a: m.cholesky_inverse(m.linalg.cholesky(_spd(m, a))),
           _squares((3, 3), (2, 2, 2))),
    OpInfo("linalg.solve_triangular",
           lambda m, a, b, **kw: m.linalg.solve_triangular(_wc(m, a), b, **kw),
           _triangular_samples),
    OpInfo("linalg.inv", lambda m, a: m.linalg.inv(_wc(m, a)),
           _squares((3, 3), (2, 3, 3), (0, 2, 2))),
    OpInfo("linalg.inv_ex", lambda m, a: m.linalg.inv_ex(_wc(m, a)), _squares((3, 3))),
    OpInfo("inverse", lambda m, a: m.inverse(_wc(m, a)), _squares((2, 2))),
    OpInfo("linalg.solve", lambda m, a, b, **kw: m.linalg.solve(_wc(m, a), b, **kw),
           lambda rng: _pairs(((3, 3), (3, 2)), ((2, 3, 3), (3, 1)), ((3, 3), (3,)),
                              ((2, 3, 3), (2, 3)), ((3, 3), (4, 3, 2)))(rng)
           + _pairs(((3, 3), (2, 3)), left=False)(rng)),
    OpInfo("linalg.solve_ex", lambda m, a, b: m.linalg.solve_ex(_wc(m, a), b),
           _pairs(((3, 3), (3, 2)))),
    OpInfo("linalg.det", lambda m, a: m.linalg.det(a),
           lambda rng: _squares((3, 3), (2, 2, 2), (1, 1), (0, 0))(rng) + _singular(rng)),
    OpInfo("det", lambda m, a: m.det(a), _squares((3, 3))),
    OpInfo("linalg.slogdet", lambda m, a: m.linalg.slogdet(a), _squares((3, 3), (2, 2, 2))),
    OpInfo("slogdet", lambda m, a: m.slogdet(a), _squares((3, 3))),
    OpInfo("logdet", lambda m, a: m.logdet(_spd(m, a)), _squares((3, 3), (2, 2, 2))),
    OpInfo("logdet_negative", lambda m, a: m.logdet(a), lambda rng: [
        Sample((np.diag([1.0, -2.0, 3.0]),), desc="negative det: nan")], grad=False),
    OpInfo("Tensor.det", lambda m, a: _wc(m, a).det() + _wc(m, a).logdet()
           + _wc(m, a).slogdet()[1] + _wc(m, a).inverse().sum(), _squares((3, 3))),
]


def _parts(z):
    return z.real, z.imag


def _complex(m, a, b):
    return m.complex(a, b) + 3 * m.eye(a.shape[-1] if a.dim() else 1, dtype=a.dtype)


OPS += [
    OpInfo("linalg.inv_complex", lambda m, a, b: _parts(m.linalg.inv(_complex(m, a, b))),
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), desc="complex128")]),
    OpInfo("linalg.solve_complex",
           lambda m, a, b, c: _parts(m.linalg.solve(_complex(m, a, b), m.complex(c, c * 2))),
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3), arr(rng, 3, 2)), desc="complex")]),
    OpInfo("linalg.eig_complex", lambda m, a, b: m.linalg.eigvals(_complex(m, a, b)).abs(),
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), desc="complex input")]),
]


def _hpd(m, a, b):
    z = m.complex(a, b)
    return z @ z.mH + 3 * m.eye(a.shape[-1] if a.dim() else 1, dtype=a.dtype)


OPS += [
    OpInfo("linalg.cholesky_complex", lambda m, a, b: _parts(m.linalg.cholesky(_hpd(m, a, b))),
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), desc="complex128")]),
    OpInfo("linalg.cholesky_upper_complex",
           lambda m, a, b: _parts(m.linalg.cholesky(_hpd(m, a, b), upper=True)),
           lambda rng: [Sample((arr(rng, 2, 2), arr(rng, 2, 2)), desc="complex128")]),
    OpInfo("cholesky_solve_complex", lambda m, a, b, c: _parts(m.cholesky_solve(
        m.complex(c, c), m.linalg.cholesky(_hpd(m, a, b)))),
        lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3), arr(rng, 3, 1)), desc="complex")]),
    OpInfo("linalg.det_complex", lambda m, a, b: _parts(m.linalg.det(_complex(m, a, b))),
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), desc="complex128")]),
    OpInfo("linalg.solve_triangular_complex", lambda m, a, b, c: _parts(
        m.linalg.solve_triangular(_complex(m, a, b), m.complex(c, -c), upper=True)),
        lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3), arr(rng, 3, 2)), desc="complex")]),
    OpInfo("linalg.matrix_exp_complex", lambda m, a, b: _parts(m.linalg.matrix_exp(
        m.complex(a, b))), lambda rng: [Sample((arr(rng, 2, 2), arr(rng, 2, 2)), desc="complex")]),
]


def _slogdet_complex(m, a, b):
    sign, logabsdet = m.linalg.slogdet(_complex(m, a, b))
    return sign.real, sign.imag, logabsdet


OPS += [
    OpInfo("linalg.slogdet_complex", _slogdet_complex,
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), desc="complex128")]),
    OpInfo("logdet_complex", lambda m, a, b: _parts(m.logdet(_complex(m, a, b))),
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), desc="complex128")]),
]
