"""Op table entries: eigh/eigvalsh, svd/svdvals and the norms. Eigen- and singular vectors are
unique up to sign, and LAPACK builds may pick either: ``fn`` fixes the sign (first row made
nonnegative) on both libraries, so values and gradients compare."""

import numpy as np

from . import OpInfo, Sample, arr


def _sym(a):
    return a + a.mT


def _fix_sign(v, rows):
    """``v`` with each column multiplied by the sign of its first entry (of ``rows``)."""
    return v * rows[..., :1, :].sign()


def _eigh(m, a, **kw):
    values, vectors = m.linalg.eigh(_sym(a), **kw)
    return values, _fix_sign(vectors, vectors)


def _svd(m, a, full_matrices=False):
    u, s, vh = m.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    sign = u[..., :1, :k].sign()
    u_k = u[..., :k] * sign
    vh_k = vh[..., :k, :] * sign.mT
    return u_k, s, vh_k


def _mats(*shapes):
    def make(rng):
        return [Sample((arr(rng, *s),), desc="x".join(map(str, s))) for s in shapes]

    return make


def _vector_norm_samples(rng):
    out = []
    for ord in (2, 1, 3.5, 0.5, float("inf"), -float("inf"), 0):
        out.append(Sample((arr(rng, 3, 4),), {"ord": ord, "dim": 1}, desc=f"ord={ord}"))
    out.append(Sample((arr(rng, 2, 3),), {"ord": 2}, desc="all dims"))
    out.append(Sample((arr(rng, 2, 3, 2),), {"ord": 2, "dim": (0, 2), "keepdim": True},
                      desc="two dims keepdim"))
    out.append(Sample((np.array([0.0, 0.0, 1.0]),), {"ord": 2}, desc="zeros in input"))
    return out


def _matrix_norm_samples(rng):
    out = [Sample((arr(rng, 3, 4),), {"ord": o}, desc=f"ord={o}")
           for o in ("fro", "nuc", 2, -2, 1, -1, float("inf"), -float("inf"))]
    out.append(Sample((arr(rng, 2, 3, 2),), {"ord": "fro", "dim": (0, 2), "keepdim": True},
                      desc="dims keepdim"))
    out.append(Sample((arr(rng, 2, 3, 3),), {"ord": "nuc", "keepdim": True}, desc="batched"))
    return out


def _norm_samples(rng):
    return [
        Sample((arr(rng, 3, 4),), {}, desc="default"),
        Sample((arr(rng, 4),), {"ord": 3}, desc="vector ord"),
        Sample((arr(rng, 3, 4),), {"ord": "fro"}, desc="fro"),
        Sample((arr(rng, 3, 4),), {"ord": 1}, desc="matrix ord 1"),
        Sample((arr(rng, 2, 3, 4),), {"dim": 1}, desc="dim"),
        Sample((arr(rng, 2, 3, 4),), {"ord": 2, "dim": (1, 2)}, desc="matrix dims"),
    ]


OPS = [
    OpInfo("linalg.eigh", _eigh, lambda rng: _mats((3, 3), (2, 3, 3), (1, 1))(rng)),
    OpInfo("linalg.eigh_upper", lambda m, a: _eigh(m, a, UPLO="U"), _mats((3, 3))),
    OpInfo("linalg.eigvalsh", lambda m, a: m.linalg.eigvalsh(_sym(a)), _mats((3, 3), (2, 2, 2))),
    OpInfo("linalg.svd", _svd, _mats((3, 3), (4, 2), (2, 4), (2, 3, 2))),
    OpInfo("linalg.svd_full", lambda m, a: _svd(m, a, True), _mats((4, 2), (2, 4))),
    OpInfo("linalg.svdvals", lambda m, a: m.linalg.svdvals(a), _mats((3, 3), (2, 4), (2, 3, 2))),
    OpInfo("linalg.vector_norm", lambda m, a, **kw: m.linalg.vector_norm(a, **kw),
           _vector_norm_samples),
    OpInfo("linalg.vector_norm_dtype",
           lambda m, a: m.linalg.vector_norm(a, dtype=m.float64), _mats((3,))),
    OpInfo("linalg.matrix_norm", lambda m, a, **kw: m.linalg.matrix_norm(a, **kw),
           _matrix_norm_samples),
    OpInfo("linalg.norm", lambda m, a, **kw: m.linalg.norm(a, **kw), _norm_samples),
    OpInfo("linalg.cond", lambda m, a, **kw: m.linalg.cond(a + 3 * m.eye(*a.shape, dtype=a.dtype),
                                                           **kw),
           lambda rng: [Sample((arr(rng, 3, 3),), {"p": p}, desc=f"p={p}") for p in (None, -2)]
           + [Sample((arr(rng, 2, 3),), {}, desc="non-square")]),
    # NOTE: torch's cond for the other orders fails in backward (it writes into inv_ex's output)
    OpInfo("linalg.cond_norms", lambda m, a, **kw: m.linalg.cond(a + 3 * m.eye(3, dtype=a.dtype),
                                                                 **kw),
           lambda rng: [Sample((arr(rng, 3, 3),), {"p": p}, desc=f"p={p}")
                        for p in ("fro", "nuc", 1, -1, float("inf"))], grad=False),
    OpInfo("linalg.diagonal", lambda m, a, **kw: m.linalg.diagonal(a, **kw),
           lambda rng: [Sample((arr(rng, 2, 3, 4),), {}, desc="last two"),
                        Sample((arr(rng, 2, 3, 4),), {"offset": 1, "dim1": 0, "dim2": 2},
                               desc="offset dims")]),
    OpInfo("linalg.vecdot", lambda m, a, b, **kw: m.linalg.vecdot(a, b, **kw),
           lambda rng: [Sample((arr(rng, 3, 4), arr(rng, 4)), {}, desc="broadcast"),
                        Sample((arr(rng, 3, 2), arr(rng, 3, 2)), {"dim": 0}, desc="dim 0")]),
    OpInfo("linalg.cross", lambda m, a, b: m.linalg.cross(a, b),
           lambda rng: [Sample((arr(rng, 2, 4, 3), arr(rng, 1, 4, 3)), desc="broadcast")]),
    OpInfo("linalg.matmul", lambda m, a, b: m.linalg.matmul(a, b),
           lambda rng: [Sample((arr(rng, 2, 3), arr(rng, 3, 2)), desc="2-D")]),
]


def _eig(m, a):
    """eig's outputs as real tensors, each eigenvector's phase fixed (its first entry real
    positive), so torch and glassgrad compare and gradcheck sees real outputs."""
    values, vectors = m.linalg.eig(a)
    first = vectors[..., :1, :]
    vectors = vectors * (first.conj() / first.abs())
    return values.real, values.imag, vectors.real, vectors.imag


def _eigvals(m, a):
    values = m.linalg.eigvals(a)
    return values.real, values.imag


OPS += [
    OpInfo("linalg.eig", _eig, _mats((3, 3), (2, 2, 2), (1, 1))),
    OpInfo("linalg.eigvals", _eigvals, _mats((3, 3), (2, 2, 2))),
]


def _herm(m, a, b):
    z = m.complex(a, b)
    return z + z.mH


def _eigh_complex(m, a, b):
    values, vectors = m.linalg.eigh(_herm(m, a, b))
    first = vectors[..., :1, :]
    vectors = vectors * (first.conj() / first.abs())  # each eigenvector's phase fixed
    return values, vectors.real, vectors.imag


OPS += [
    OpInfo("linalg.eigh_complex", _eigh_complex,
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), desc="complex128")]),
    OpInfo("linalg.eigvalsh_complex", lambda m, a, b: m.linalg.eigvalsh(_herm(m, a, b)),
           lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), desc="complex128")]),
]


def _svd_complex(m, a, b):
    u, s, vh = m.linalg.svd(m.complex(a, b), full_matrices=False)
    phase = u[..., :1, :].conj() / u[..., :1, :].abs()
    u, vh = u * phase, vh * phase.mT.conj()
    return s, u.real, u.imag, vh.real, vh.imag


OPS += [
    OpInfo("linalg.svd_complex", _svd_complex,
           lambda rng: [Sample((arr(rng, *s), arr(rng, *s)), desc="x".join(map(str, s)))
                        for s in ((3, 3), (4, 2), (2, 3))]),
    OpInfo("linalg.svdvals_complex", lambda m, a, b: m.linalg.svdvals(m.complex(a, b)),
           lambda rng: [Sample((arr(rng, 3, 2), arr(rng, 3, 2)), desc="complex")]),
]


OPS += [
    OpInfo("linalg.norms_complex", lambda m, a, b, **kw: (
        m.linalg.vector_norm(m.complex(a, b), **kw), m.linalg.matrix_norm(m.complex(a, b)),
        m.linalg.matrix_norm(m.complex(a, b), "nuc"), m.linalg.norm(m.complex(a, b), 1),
        m.linalg.cond(m.complex(a, b))),
        lambda rng: [Sample((arr(rng, 3, 3), arr(rng, 3, 3)), {"ord": o}, desc=f"ord={o}")
                     for o in (2, 3)]),
]
