"""Op table entries: construction and shape functions (issue 15, lane ops): kron, block_diag,
cartesian_prod, combinations, meshgrid, diagflat, v/h/dsplit, ravel, rsub, fill,
fill_diagonal_, Tensor.where, and the index builders (no gradient)."""

import numpy as np

from . import OpInfo, Sample, arr


def _pair(rng):
    return [
        Sample((arr(rng, 2), arr(rng, 3)), desc="vectors"),
        Sample((arr(rng, 2, 3), arr(rng, 3, 2)), desc="matrices"),
        Sample((arr(rng, 3), arr(rng, 2, 2)), desc="ranks differ"),
        Sample((arr(rng), arr(rng, 2, 1, 2)), desc="0-d and 3-D"),
    ]


def _blocks(rng):
    return [
        Sample((arr(rng), arr(rng, 3), arr(rng, 2, 2)), desc="0-d 1-D 2-D"),
        Sample((arr(rng, 2, 3), arr(rng, 0, 2), arr(rng, 3, 1)), desc="empty block"),
        Sample((np.array([1, 2]), arr(rng, 2, 2)), desc="int with float"),
    ]


def _vectors(rng):
    return [
        Sample((arr(rng, 2), arr(rng, 3)), desc="two"),
        Sample((arr(rng, 2), arr(rng, 1), arr(rng, 3)), desc="three"),
        Sample((arr(rng, 4),), desc="one"),
    ]


def _vector(rng):
    return [Sample((arr(rng, 4),), desc="vector"), Sample((arr(rng, 0),), desc="empty")]


def _shaped(rng):
    return [
        Sample((arr(rng),), desc="0-d"),
        Sample((arr(rng, 3),), desc="vector"),
        Sample((arr(rng, 2, 3).T,), desc="non-contiguous"),
    ]


def _splittable(rng):
    return [
        Sample((arr(rng, 4, 6, 2),), desc="3-D"),
        Sample((arr(rng, 2, 6, 4).transpose(2, 1, 0),), desc="non-contiguous"),
    ]


def _rsub(rng):
    return [
        Sample((arr(rng, 3, 4), arr(rng, 4)), desc="broadcast"),
        Sample((arr(rng, 3), 2.5), desc="scalar other"),
        Sample((arr(rng, 3), arr(rng, 3)), {"alpha": 0.5}, desc="alpha"),
    ]


def _square(rng):
    return [
        Sample((arr(rng, 3, 3),), desc="square"),
        Sample((arr(rng, 5, 2),), desc="tall"),
        Sample((arr(rng, 2, 2, 2),), desc="cube"),
    ]


def _where(rng):
    x = arr(rng, 3, 4)
    return [Sample((x > 0, x, arr(rng, 4)), desc="broadcast"),
            Sample((x > 0.5, arr(rng, 3, 4), 0.0), desc="scalar other")]


def _meshgrid(indexing):
    def fn(lib, *ts):
        return lib.meshgrid(*ts, indexing=indexing)

    return fn


def _split(name, spec):
    return lambda lib, x: getattr(lib, name)(x, spec)


def _index(name):
    return lambda lib, *args: getattr(lib, name)(*args)


OPS = [
    OpInfo("torch.kron", lambda lib, a, b: lib.kron(a, b), _pair),
    OpInfo("Tensor.kron", lambda lib, a, b: a.kron(b), _pair),
    OpInfo("torch.block_diag", lambda lib, *ts: lib.block_diag(*ts), _blocks),
    OpInfo("torch.cartesian_prod", lambda lib, *ts: lib.cartesian_prod(*ts), _vectors),
    OpInfo("torch.meshgrid(ij)", _meshgrid("ij"), _vectors),
    OpInfo("torch.meshgrid(xy)", _meshgrid("xy"), _vectors),
    OpInfo("torch.combinations", lambda lib, x: lib.combinations(x), _vector),
    OpInfo("torch.combinations(r=3)", lambda lib, x: lib.combinations(x, 3), _vector),
    OpInfo("torch.combinations(replacement)",
           lambda lib, x: lib.combinations(x, 2, with_replacement=True), _vector),
    OpInfo("torch.diagflat", lambda lib, x: lib.diagflat(x), _shaped),
    OpInfo("Tensor.diagflat(offset)", lambda lib, x: x.diagflat(-1), _shaped),
    OpInfo("torch.vsplit", _split("vsplit", 2), _splittable),
    OpInfo("torch.hsplit", _split("hsplit", [1, 4]), _splittable),
    OpInfo("torch.dsplit", _split("dsplit", 2), _splittable),
    OpInfo("Tensor.hsplit(1-D)", lambda lib, x: x.hsplit(2), _vector),
    OpInfo("torch.ravel", lambda lib, x: lib.ravel(x), _shaped),
    OpInfo("torch.rsub", lambda lib, x, y, **k: lib.rsub(x, y, **k), _rsub),
    OpInfo("torch.fill", lambda lib, x: lib.fill(x, 0.5), _shaped),
    OpInfo("torch.fill(tensor value)", lambda lib, x, v: lib.fill(x, v),
           lambda rng: [Sample((arr(rng, 2, 3), arr(rng)), desc="0-d tensor value")]),
    OpInfo("Tensor.fill_diagonal_", lambda lib, x: x.clone().fill_diagonal_(2.0), _square),
    OpInfo("Tensor.fill_diagonal_(wrap)",
           lambda lib, x: x.clone().fill_diagonal_(-1.0, wrap=True),
           lambda rng: [Sample((arr(rng, 7, 2),), desc="tall wrap")]),
    OpInfo("Tensor.where", lambda lib, c, x, y: x.where(c, y), _where),
    OpInfo("torch.tril_indices", _index("tril_indices"), lambda rng: [
        Sample((3, 4, 1), desc="offset 1"), Sample((4, 3), desc="tall"),
        Sample((3, 3, -5), desc="empty")], grad=False),
    OpInfo("torch.triu_indices", _index("triu_indices"), lambda rng: [
        Sample((3, 2, -1), desc="offset -1"), Sample((2, 5), desc="wide")], grad=False),
    OpInfo("torch.unravel_index", lambda lib, i, s: lib.unravel_index(i, s), lambda rng: [
        Sample((np.array([5, 7, 0, -1]), (2, 4)), desc="vector"),
        Sample((np.array(9), (2, 4)), desc="0-d wraps"),
        Sample((np.array([[3, 10], [11, 1]]), (3, 2, 2)), desc="matrix 3 dims")], grad=False),
    OpInfo("torch.nonzero_static", lambda lib, x, **k: lib.nonzero_static(x, **k), lambda rng: [
        Sample((np.array([0, 1, 1, 0, 1]),), {"size": 2}, desc="truncate"),
        Sample((np.array([[0, 3], [1, 0]]),), {"size": 4, "fill_value": -5}, desc="pad"),
        Sample((arr(rng, 3, 2),), {"size": 6}, desc="float exact")], grad=False),
    OpInfo("torch.scalar_tensor", lambda lib, s, **k: lib.scalar_tensor(s, **k), lambda rng: [
        Sample((3,), desc="int"), Sample((True,), desc="bool"),
        Sample((2.5,), {"dtype": "float64"}, desc="dtype")][:2], grad=False),
]
