"""Op table entries: products (matmul and friends, einsum, tensordot), cross, trace."""

from . import OpInfo, Sample, arr


def _pairs(*shapes):
    """Two-input samples from ((shape_a, shape_b, desc), ...)."""

    def make(rng):
        return [Sample((arr(rng, *a), arr(rng, *b)), desc=d) for a, b, d in shapes]

    return make


def _nc(rng, *shape):
    """A non-contiguous array of ``shape`` (the transpose of a C array)."""
    return arr(rng, *shape[::-1]).T


_MATMUL = _pairs(
    ((3,), (3,), "1-D @ 1-D"),
    ((3,), (3, 4), "1-D @ 2-D"),
    ((2, 3), (3,), "2-D @ 1-D"),
    ((2, 3), (3, 4), "2-D @ 2-D"),
    ((5, 2, 3), (5, 3, 4), "batched"),
    ((5, 2, 3), (3, 4), "batched @ 2-D"),
    ((3,), (5, 3, 4), "1-D @ batched"),
    ((5, 2, 3), (3,), "batched @ 1-D"),
    ((2, 1, 2, 3), (4, 3, 2), "broadcast batch"),
    ((0, 3), (3, 4), "empty rows"),
    ((2, 0), (0, 4), "empty inner"),
)


def _matmul_nc(rng):
    return [
        Sample((_nc(rng, 2, 3), _nc(rng, 3, 4)), desc="non-contiguous"),
        Sample((_nc(rng, 4, 2, 3), arr(rng, 3, 2)), desc="non-contiguous batched"),
    ]


# einsum: (equation, operand shapes, desc)
_EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)], "matmul"),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)], "bmm"),
    ("i,i->", [(4,), (4,)], "dot"),
    ("i,j->ij", [(3,), (4,)], "outer"),
    ("ij->ji", [(2, 3)], "transpose"),
    ("ij->", [(2, 3)], "sum"),
    ("ijk->kj", [(2, 3, 4)], "sum and permute"),
    ("ij,jk", [(2, 3), (3, 4)], "implicit"),
    ("ba,bc", [(3, 2), (3, 4)], "implicit order"),
    ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)], "ellipsis"),
    ("...ij,...jk->...ik", [(2, 3), (5, 3, 4)], "ellipsis broadcast"),
    ("...ij,jk", [(2, 2, 3), (3, 4)], "implicit ellipsis"),
    ("b...i,b...i->b", [(2, 3, 4), (2, 3, 4)], "ellipsis middle"),
    ("ij,jk->ik", [(2, 1), (3, 4)], "size-1 broadcast"),
    ("bij,bkj->bik", [(1, 2, 3), (4, 5, 3)], "batch broadcast"),
    ("ij,ij->i", [(3, 4), (3, 4)], "rowwise dot"),
    ("ij,kl->ijkl", [(2, 3), (1, 2)], "no contraction"),
    ("ij,j,jk->ik", [(2, 3), (3,), (3, 4)], "three operands"),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)], "chain"),
    ("ij,jk->", [(2, 3), (3, 4)], "full contraction"),
    ("i j , j k -> i k", [(2, 3), (3, 4)], "spaces"),
    ("ij,jk->ik", [(0, 3), (3, 4)], "empty"),
]


def _einsum_samples(rng):
    return [
        Sample(tuple(arr(rng, *s) for s in shapes), {"eq": eq}, desc=desc)
        for eq, shapes, desc in _EINSUM
    ] + [Sample((_nc(rng, 3, 2), _nc(rng, 2, 4)), {"eq": "ij,jk->ik"}, desc="non-contiguous")]


def _addmm_samples(rng):
    return [
        Sample((arr(rng, 2, 4), arr(rng, 2, 3), arr(rng, 3, 4)), {}, desc="plain"),
        Sample(
            (arr(rng, 4), arr(rng, 2, 3), arr(rng, 3, 4)),
            {"beta": 0.5, "alpha": 2.0},
            desc="broadcast scaled",
        ),
        Sample((arr(rng, 1, 4), arr(rng, 2, 3), arr(rng, 3, 4)), {"beta": 0.0}, desc="beta 0"),
    ]


def _baddbmm_samples(rng):
    return [
        Sample((arr(rng, 2, 2, 4), arr(rng, 2, 2, 3), arr(rng, 2, 3, 4)), {}, desc="plain"),
        Sample(
            (arr(rng, 4), arr(rng, 2, 2, 3), arr(rng, 2, 3, 4)),
            {"beta": 2.0, "alpha": 0.5},
            desc="broadcast scaled",
        ),
    ]


def _tensordot_samples(rng):
    return [
        Sample((arr(rng, 2, 3, 4), arr(rng, 3, 4, 5)), {"dims": 2}, desc="dims=2"),
        Sample((arr(rng, 2, 3), arr(rng, 3, 4)), {"dims": 1}, desc="dims=1"),
        Sample((arr(rng, 2, 3), arr(rng, 4, 5)), {"dims": 0}, desc="dims=0"),
        Sample((arr(rng, 2, 3, 4), arr(rng, 4, 2, 5)), {"dims": ([0, 2], [1, 0])}, desc="lists"),
    ]


def _cross_samples(rng):
    return [
        Sample((arr(rng, 3), arr(rng, 3)), {"dim": 0}, desc="vectors"),
        Sample((arr(rng, 4, 3), arr(rng, 1, 3)), {"dim": 1}, desc="broadcast"),
        Sample((arr(rng, 3, 2), arr(rng, 3, 2)), {"dim": 0}, desc="dim 0"),
        Sample((arr(rng, 2, 3), arr(rng, 2, 3)), {"dim": -1}, desc="negative dim"),
    ]


OPS = [
    OpInfo("matmul", lambda m, x, y: m.matmul(x, y), lambda rng: _MATMUL(rng) + _matmul_nc(rng)),
    OpInfo("matmul_operator", lambda m, x, y: x @ y, _MATMUL),
    OpInfo(
        "mm",
        lambda m, x, y: m.mm(x, y),
        lambda rng: [
            s for s in _MATMUL(rng) + _matmul_nc(rng)[:1] if s.args[0].ndim == s.args[1].ndim == 2
        ],
    ),
    OpInfo(
        "bmm",
        lambda m, x, y: m.bmm(x, y),
        _pairs(
            ((5, 2, 3), (5, 3, 4), "batched"),
            ((1, 2, 3), (1, 3, 1), "single"),
            ((2, 0, 3), (2, 3, 4), "empty"),
        ),
    ),
    OpInfo(
        "mv", lambda m, x, y: m.mv(x, y), _pairs(((2, 3), (3,), "plain"), ((0, 3), (3,), "empty"))
    ),
    OpInfo(
        "dot", lambda m, x, y: m.dot(x, y), _pairs(((4,), (4,), "plain"), ((0,), (0,), "empty"))
    ),
    OpInfo("inner", lambda m, x, y: m.inner(x, y), _pairs(((4,), (4,), "plain"))),
    OpInfo(
        "outer", lambda m, x, y: m.outer(x, y), _pairs(((3,), (4,), "plain"), ((0,), (2,), "empty"))
    ),
    OpInfo("einsum", lambda m, *xs, eq: m.einsum(eq, *xs), _einsum_samples, atol=1e-6),
    OpInfo(
        "einsum_list",
        lambda m, x, y: m.einsum("ij,jk", [x, y]),
        _pairs(((2, 3), (3, 4), "list of operands")),
    ),
    OpInfo("tensordot", lambda m, x, y, dims: m.tensordot(x, y, dims), _tensordot_samples),
    OpInfo("addmm", lambda m, i, x, y, **kw: m.addmm(i, x, y, **kw), _addmm_samples),
    OpInfo("baddbmm", lambda m, i, x, y, **kw: i.baddbmm(x, y, **kw), _baddbmm_samples),
    OpInfo("cross", lambda m, x, y, dim: m.cross(x, y, dim=dim), _cross_samples),
    OpInfo(
        "linalg_cross_default_dim",
        lambda m, x, y: x.cross(y),
        _pairs(((4, 3), (4, 3), "first dim of size 3 is dim 1")),
    ),
    OpInfo(
        "trace",
        lambda m, x: m.trace(x),
        lambda rng: [
            Sample((arr(rng, 3, 3),), desc="square"),
            Sample((arr(rng, 2, 4),), desc="wide"),
            Sample((_nc(rng, 4, 3),), desc="non-contiguous"),
        ],
    ),
]
