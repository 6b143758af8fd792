"""Op table entries: QR, LU (and its packed form, solve, unpack), matrix functions, pinv/lstsq,
Householder products, LDL^T, and the top-level linear-algebra names."""

import numpy as np

from . import OpInfo, Sample, arr


def _mats(*shapes, **kwargs):
    def make(rng):
        return [Sample((arr(rng, *s),), dict(kwargs), desc="x".join(map(str, s)))
                for s in shapes]

    return make


def _args(*shapes, desc="", **kwargs):
    def make(rng):
        return [Sample(tuple(arr(rng, *s) for s in shapes), dict(kwargs), desc=desc)]

    return make


def _join(*makers):
    return lambda rng: [s for mk in makers for s in mk(rng)]


def _wc(m, a):
    return a + 3 * m.eye(a.shape[-1] if a.dim() else 1, dtype=a.dtype)


def _lu_solve(m, a, b, **kw):
    lu, piv = m.linalg.lu_factor(_wc(m, a))
    return m.linalg.lu_solve(lu, piv, b, **kw)


def _householder(m, a, tau):
    return m.linalg.householder_product(a, tau)


def _lstsq(m, a, b, **kw):
    res = m.linalg.lstsq(a, b, **kw)
    return tuple(r for r in res if r.is_floating_point() and r.numel())


def _geqrf_roundtrip(m, a):
    qr, tau = m.geqrf(a)
    return qr, tau


_REFLECTORS = np.random.default_rng(5).uniform(-2, 2, (3, 3))


def _ormqr(m, c, **kw):
    rows = c.shape[0] if kw.get("left", True) else c.shape[1]
    qr, tau = m.geqrf(m.tensor(_REFLECTORS[:rows, :2], dtype=c.dtype))
    return m.ormqr(qr, tau, c, **kw)


def _ldl(m, a, b):
    ld, piv = m.linalg.ldl_factor(a + a.mT)
    return ld, m.linalg.ldl_solve(ld, piv, b)


def _inplace(m, i, a, v, b):
    sq = m.outer(i, i)
    a1, b1 = a.unsqueeze(0), b.unsqueeze(0)
    return (i.clone().addmv_(a, v).unsqueeze(-1) + i.addmv(a, v).unsqueeze(-1)
            + sq.clone().addmm_(a, b) + sq.clone().addr_(i, i) + sq.addr(i, i)
            + sq.clone().addbmm_(a1, b1) + sq.addbmm(a1, b1)
            + sq.unsqueeze(0).clone().baddbmm_(a1, b1)[0])


def _top_svd(m, a):
    u, s, v = m.svd(a)
    sign = u[..., :1, :].sign()
    return u * sign, s, v * sign


OPS = [
    OpInfo("linalg.qr", lambda m, a, **kw: m.linalg.qr(a, **kw),
           _join(_mats((3, 3), (4, 2), (2, 4), (2, 3, 2)), _mats((3, 3), (2, 4), mode="complete"))),
    OpInfo("linalg.qr_r", lambda m, a: m.linalg.qr(a, mode="r").R, _mats((4, 2)), grad=False),
    OpInfo("qr_top", lambda m, a: m.qr(a, some=False), _mats((2, 3))),
    OpInfo("linalg.lu", lambda m, a: m.linalg.lu(a), _mats((3, 3), (4, 2), (2, 4), (2, 3, 3))),
    OpInfo("linalg.lu_factor", lambda m, a: m.linalg.lu_factor(a), _mats((3, 3), (4, 3), (3, 4))),
    OpInfo("linalg.lu_factor_ex", lambda m, a: m.linalg.lu_factor_ex(a), _mats((2, 3, 3))),
    OpInfo("lu_top", lambda m, a: m.lu(a, get_infos=True), _mats((3, 3))),
    OpInfo("lu_unpack", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a)), _mats((3, 3), (4, 2))),
    OpInfo("linalg.lu_solve", _lu_solve, _join(
        _args((3, 3), (3, 2), desc="plain"), _args((3, 3), (3, 2), desc="adjoint", adjoint=True),
        _args((2, 3, 3), (2, 3), desc="left=False", left=False))),
    OpInfo("lu_solve_top", lambda m, a, b: b.lu_solve(*m.linalg.lu_factor(_wc(m, a))),
           _args((3, 3), (3, 1))),
    OpInfo("linalg.matrix_exp", lambda m, a: m.linalg.matrix_exp(a),
           _mats((3, 3), (2, 2, 2), (1, 1))),
    OpInfo("matrix_exp_top", lambda m, a: m.matrix_exp(a) + a.matrix_exp(), _mats((2, 2))),
    OpInfo("linalg.matrix_power", lambda m, a, n: m.linalg.matrix_power(_wc(m, a), n),
           lambda rng: [Sample((arr(rng, 3, 3),), {"n": n}, desc=f"n={n}") for n in (3, 0, -2, 1)]
           + [Sample((arr(rng, 2, 2, 2),), {"n": 5}, desc="batched")]),
    OpInfo("matrix_power_top", lambda m, a: m.matrix_power(a, 2) + a.matrix_power(3), _mats((2, 2))),
    OpInfo("linalg.pinv", lambda m, a, **kw: m.linalg.pinv(a, **kw), _join(
        _mats((3, 3), (4, 2), (2, 4), (2, 3, 2)),
        lambda rng: [Sample((arr(rng, 3, 3) + arr(rng, 3, 3).T,), {"hermitian": True},
                            desc="hermitian"),
                     Sample((arr(rng, 4, 2),), {"atol": 0.1}, desc="atol")])),
    OpInfo("pinverse", lambda m, a: m.pinverse(a) + a.pinverse(), _mats((3, 2))),
    OpInfo("linalg.lstsq", _lstsq, _join(
        _args((4, 3), (4, 2), desc="tall"), _args((2, 3), (2, 2), desc="wide"),
        _args((2, 4, 3), (2, 4), desc="vector rhs"),
        _args((4, 3), (4, 2), desc="gelsd", driver="gelsd"),
        _args((4, 3), (4, 2), desc="gels", driver="gels"))),
    OpInfo("linalg.lstsq_rank", lambda m, a, b: m.linalg.lstsq(a, b).rank,
           _args((2, 4, 3), (2, 4, 1)), grad=False),
    OpInfo("linalg.matrix_rank", lambda m, a, **kw: m.linalg.matrix_rank(a, **kw),
           lambda rng: [Sample((arr(rng, 3, 4),), {}, desc="full"),
                        Sample((np.outer(arr(rng, 3), arr(rng, 3)),), {}, desc="rank 1"),
                        Sample((np.diag([1.0, 0.05, 2.0]),), {"atol": 0.1}, desc="atol"),
                        Sample((np.diag([1.0, 0.05, 2.0]),), {"hermitian": True, "rtol": 0.1},
                               desc="hermitian rtol")], grad=False),
    OpInfo("linalg.multi_dot", lambda m, *xs: m.linalg.multi_dot(xs), _join(
        _args((2, 3), (3, 4), (4, 2), desc="three"), _args((3,), (3, 4), (4,), desc="vectors"),
        _args((2, 5), (5, 3), (3, 4), (4, 1), desc="four"))),
    OpInfo("chain_matmul", lambda m, *xs: m.chain_matmul(*xs), _args((2, 3), (3, 4), (4, 2))),
    OpInfo("linalg.householder_product", _householder, _join(
        _args((4, 3), (2,), desc="tall"), _args((3, 3), (3,), desc="square"),
        _args((2, 3, 2), (2, 2), desc="batched"))),
    OpInfo("orgqr", lambda m, a, tau: m.orgqr(a, tau) + a.orgqr(tau), _args((3, 2), (2,))),
    OpInfo("geqrf", _geqrf_roundtrip, _mats((4, 3), (2, 3, 3)), grad=False),
    OpInfo("ormqr", _ormqr, _join(_args((3, 2), desc="left"),
                                  _args((2, 3), desc="right transpose", left=False,
                                        transpose=True))),
    OpInfo("linalg.ldl", _ldl, _args((3, 3), (3, 2)), grad=False),
    OpInfo("linalg.tensorinv", lambda m, a, **kw: m.linalg.tensorinv(a + 3 * m.eye(
        4, dtype=a.dtype).reshape(a.shape), **kw), _mats((2, 2, 4), ind=2)),
    OpInfo("linalg.tensorsolve", lambda m, a, b, **kw: m.linalg.tensorsolve(
        a + 3 * m.eye(6, dtype=a.dtype).reshape(a.shape), b, **kw), _join(
        _args((2, 3, 6), (2, 3), desc="plain"),
        _args((6, 2, 3), (2, 3), desc="dims", dims=(0,)))),
    OpInfo("linalg.vander", lambda m, x, **kw: m.linalg.vander(x, **kw),
           _join(_mats((3,)), _mats((2, 3), N=4))),
    # NOTE: torch.vander's backward fails (an in-place write in its kernel): values only
    OpInfo("vander_top", lambda m, x, **kw: m.vander(x, **kw),
           _join(_mats((3,)), _mats((3,), N=2, increasing=True), _mats((2,), N=1)), grad=False),
    OpInfo("svd_top", _top_svd, _mats((3, 2), (2, 3, 3))),
    OpInfo("svd_top_no_uv", lambda m, a: m.svd(a, compute_uv=False), _mats((3, 2))),
    OpInfo("triangular_solve", lambda m, b, a, **kw: m.triangular_solve(b, _wc(m, a), **kw),
           _join(_args((3, 2), (3, 3), desc="upper"),
                 _args((3, 2), (3, 3), desc="lower transpose", upper=False, transpose=True))),
    OpInfo("frobenius_norm", lambda m, a: m.frobenius_norm(a, (0, 1)), _mats((3, 2))),
    OpInfo("nuclear_norm", lambda m, a: m.nuclear_norm(a), _mats((3, 2))),
    OpInfo("norm_except_dim", lambda m, a, **kw: m.norm_except_dim(a, **kw),
           _join(_mats((2, 3, 4), pow=2, dim=1), _mats((2, 3), pow=3, dim=-1))),
    OpInfo("dist", lambda m, a, b, **kw: m.dist(a, b, **kw) + a.dist(b), _join(
        _args((3, 2), (2,), desc="p=2"), _args((3,), (3,), desc="p=1", p=1))),
    OpInfo("addmv", lambda m, i, a, v, **kw: m.addmv(i, a, v, **kw), _join(
        _args((2,), (2, 3), (3,), desc="plain"),
        _args((1,), (2, 3), (3,), desc="scaled", beta=0.5, alpha=2.0))),
    OpInfo("addr", lambda m, i, a, b, **kw: m.addr(i, a, b, **kw), _join(
        _args((2, 3), (2,), (3,), desc="plain"),
        _args((3,), (2,), (3,), desc="scaled", beta=2.0, alpha=0.5))),
    OpInfo("addbmm", lambda m, i, a, b, **kw: m.addbmm(i, a, b, **kw), _join(
        _args((2, 4), (3, 2, 3), (3, 3, 4), desc="plain"),
        _args((4,), (3, 2, 3), (3, 3, 4), desc="scaled", beta=0.0, alpha=2.0))),
    OpInfo("Tensor.linalg_inplace", _inplace, _args((2,), (2, 3), (3,), (3, 2))),
    OpInfo("vdot", lambda m, a, b: m.vdot(a, b) + a.vdot(b), _args((3,), (3,))),
    OpInfo("vdot_complex", lambda m, a, b: m.vdot(m.complex(a, b), m.complex(b, a * 2)).abs(),
           _args((3,), (3,))),
]


def _lowrank(fn):
    def run(m, a, **kw):
        m.manual_seed(0)  # the random range finder draws torch's stream
        u, s, v = fn(m)(a, **kw)
        return s, (u * s.unsqueeze(-2)) @ v.mT

    return run


OPS += [
    OpInfo("svd_lowrank", _lowrank(lambda m: m.svd_lowrank), _join(
        _mats((5, 4), q=3), _mats((3, 5), q=2, niter=1))),
    OpInfo("svd_lowrank_M", lambda m, a, c: _lowrank(lambda m: m.svd_lowrank)(m, a, q=2, M=c),
           _args((4, 3), (1, 3))),
    OpInfo("pca_lowrank", _lowrank(lambda m: m.pca_lowrank), _join(
        _mats((5, 3)), _mats((4, 5), q=2, center=False))),
]


def _lobpcg(m, a, **kw):
    """lobpcg of a well-separated SPD matrix; eigenvector signs fixed (first row nonnegative)."""
    q = m.linalg.qr(a).Q
    spd = (q * m.arange(1.0, a.shape[-1] + 1, dtype=a.dtype) ** 2) @ q.mT
    if kw.pop("generalized", False):
        kw["B"] = 2 * m.eye(a.shape[-1], dtype=a.dtype) + 0.1 * (a @ a.mT) / a.shape[-1]
    values, vectors = m.lobpcg(spd, **kw)
    return values, vectors * vectors[..., :1, :].sign()


OPS += [
    # NOTE: torch iterates to its tolerance (~1e-8 relative in float64): compared at 1e-6
    OpInfo("lobpcg", _lobpcg, _join(_mats((7, 7), k=2), _mats((6, 6), k=1, largest=False)),
           atol=1e-6, rtol=1e-4, float32=False, gradgrad=False),
    OpInfo("lobpcg_generalized", _lobpcg, _mats((6, 6), k=2, generalized=True), atol=1e-6,
           rtol=1e-4, float32=False, grad=False),
]


def _qr_complex(m, a, b, **kw):
    q, r = m.linalg.qr(m.complex(a, b), **kw)
    return q.real, q.imag, r.real, r.imag


OPS += [
    OpInfo("linalg.qr_complex", _qr_complex,
           lambda rng: [Sample((arr(rng, *s), arr(rng, *s)), desc="x".join(map(str, s)))
                        for s in ((3, 3), (4, 2), (2, 4))]),
]


def _pinv_complex(m, a, b, **kw):
    z = m.complex(a, b)
    if kw.get("hermitian"):
        z = z + z.mH
    p = m.linalg.pinv(z, **kw)
    return p.real, p.imag


OPS += [
    OpInfo("linalg.pinv_complex", _pinv_complex,
           lambda rng: [Sample((arr(rng, 3, 2), arr(rng, 3, 2)), desc="tall"),
                        Sample((arr(rng, 3, 3), arr(rng, 3, 3)), {"hermitian": True},
                               desc="hermitian")]),
]


def _lu_complex(m, a, b):
    _, lower, upper = m.linalg.lu(m.complex(a, b))
    return lower.real, lower.imag, upper.real, upper.imag


def _lu_solve_complex(m, a, b, c, **kw):
    eye = 3 * m.eye(a.shape[-1] if a.dim() else 1, dtype=a.dtype)
    lu, piv = m.linalg.lu_factor(m.complex(a, b) + eye)
    x = m.linalg.lu_solve(lu, piv, m.complex(c, c * 0.5), **kw)
    return x.real, x.imag


OPS += [
    OpInfo("linalg.lu_complex", _lu_complex,
           lambda rng: [Sample((arr(rng, *s), arr(rng, *s)), desc="x".join(map(str, s)))
                        for s in ((3, 3), (4, 2), (2, 3))]),
    OpInfo("linalg.lu_solve_complex", _lu_solve_complex,
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3), arr(rng, *b)), kw, desc=d)
                        for b, kw, d in (((3, 2), {}, "plain"), ((3, 2), {"adjoint": True},
                                                                 "adjoint"),
                                         ((2, 3), {"left": False}, "left=False"))]),
]


def _householder_complex(m, a, b, t1, t2):
    q = m.linalg.householder_product(m.complex(a, b), m.complex(t1, t2))
    return q.real, q.imag


def _ormqr_complex(m, a, b, **kw):
    rows = a.shape[0] if kw.get("left", True) else a.shape[1]
    z = m.tensor(_REFLECTORS[:rows, :2] * (1 + 0.5j))
    qr, tau = m.geqrf(z)
    out = m.ormqr(qr, tau, m.complex(a, b), **kw)
    return out.real, out.imag


OPS += [
    OpInfo("linalg.householder_product_complex", _householder_complex,
           lambda rng: [Sample((arr(rng, 3, 2), arr(rng, 3, 2), arr(rng, 2), arr(rng, 2)),
                               desc="complex")]),
    OpInfo("ormqr_complex", _ormqr_complex,
           lambda rng: [Sample((arr(rng, 3, 2), arr(rng, 3, 2)), {"transpose": True},
                               desc="left transpose"),
                        Sample((arr(rng, 2, 3), arr(rng, 2, 3)), {"left": False}, desc="right")],
           float32=False),
]


def _lstsq_complex(m, a, b, c, d, **kw):
    res = m.linalg.lstsq(m.complex(a, b), m.complex(c, d), **kw)
    return res.solution.real, res.solution.imag, res.residuals


OPS += [
    OpInfo("linalg.lstsq_complex", _lstsq_complex,
           lambda rng: [Sample((arr(rng, 4, 2), arr(rng, 4, 2), arr(rng, 4, 1), arr(rng, 4, 1)),
                               {"driver": "gelsd"}, desc="gelsd")]),
    OpInfo("linalg.matrix_rank_complex", lambda m, a, b: m.linalg.matrix_rank(m.complex(a, b)),
           _args((3, 4), (3, 4)), grad=False),
]
