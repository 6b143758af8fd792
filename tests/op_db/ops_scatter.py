"""Op table entries: scatter and put (issue 15, lane ops): diagonal/select/slice_scatter,
scatter_reduce and index_reduce with every reduction and include_self, put/put_."""

import numpy as np

from . import OpInfo, Sample, arr


def _src_with_zeros(rng, *shape, zeros=()):
    src = arr(rng, *shape)
    for z in zeros:
        src[z] = 0.0
    return src


def _scatter_reduce(rng):
    idx = rng.integers(0, 3, size=(5, 4))
    return [
        Sample((arr(rng, 3, 4), 0, idx, _src_with_zeros(rng, 5, 4)), desc="dim 0"),
        Sample((arr(rng, 3, 4), 0, idx, _src_with_zeros(rng, 5, 4)), {"include_self": False},
               desc="exclude self"),
        Sample((arr(rng, 4), 0, np.array([0, 0, 3, 0]), arr(rng, 4)), desc="vector repeats"),
    ]


def _prod_zeros(rng):
    idx = np.array([[0, 1], [0, 1], [1, 1], [0, 0]])
    return [
        Sample((arr(rng, 2, 2), 0, idx, _src_with_zeros(rng, 4, 2, zeros=[(0, 0)])),
               desc="lone zero"),
        Sample((_src_with_zeros(rng, 2, 2, zeros=[(1, 1)]), 0, idx, arr(rng, 4, 2)),
               desc="zero in self"),
        Sample((arr(rng, 2, 2), 0, idx, _src_with_zeros(rng, 4, 2, zeros=[(1, 1)])),
               {"include_self": False}, desc="lone zero exclude self"),
    ]


def _ties(rng):
    x = np.array([[1.0, 2.0], [3.0, 0.5]])
    src = np.array([[1.0, 2.0], [1.0, 0.5], [3.0, 2.0]])
    idx = np.array([[0, 0], [0, 1], [1, 0]])
    return [Sample((x, 0, idx, src), desc="ties share"),
            Sample((x, 0, idx, src), {"include_self": False}, desc="ties exclude self")]


def _index_reduce(rng):
    return [
        Sample((arr(rng, 3, 4), 0, np.array([0, 2, 0, 1, 2]), arr(rng, 5, 4)), desc="dim 0"),
        Sample((arr(rng, 3, 4), 1, np.array([3, 3, 0]), arr(rng, 3, 3)),
               {"include_self": False}, desc="dim 1 exclude self"),
    ]


def _int_scatter(rng):
    return [Sample((rng.integers(-5, 5, (3, 4)), 0, rng.integers(0, 3, (4, 4)),
                    rng.integers(-5, 5, (4, 4))), desc="int"),
            Sample((rng.integers(-5, 5, (3, 4)), 0, rng.integers(0, 3, (4, 4)),
                    rng.integers(-5, 5, (4, 4))), {"include_self": False}, desc="int exclude")]


def _reduce(kind, method=False):
    if method:
        return lambda lib, x, d, i, s, **k: x.clone().scatter_reduce_(d, i, s, kind, **k)
    return lambda lib, x, d, i, s, **k: lib.scatter_reduce(x, d, i, s, kind, **k)


def _index_reduce_fn(kind, method=False):
    if method:
        return lambda lib, x, d, i, s, **k: x.clone().index_reduce_(d, i, s, kind, **k)
    return lambda lib, x, d, i, s, **k: lib.index_reduce(x, d, i, s, kind, **k)


def _scatters(rng):
    return [
        Sample((arr(rng, 3, 4), arr(rng, 3)), desc="main"),
        Sample((arr(rng, 2, 3, 4), arr(rng, 3, 2)), {"offset": 1, "dim1": 0, "dim2": 2},
               desc="offset dims"),
    ]


_OTHER = {"index_reduce": "prod mean amax amin"}
OPS = []
for _kind in ("sum", "prod", "mean", "amax", "amin"):
    OPS.append(OpInfo(f"torch.scatter_reduce({_kind})", _reduce(_kind), _scatter_reduce))
    OPS.append(OpInfo(f"torch.scatter_reduce({_kind}, int)", _reduce(_kind), _int_scatter,
                      grad=False))
OPS += [
    OpInfo("Tensor.scatter_reduce_(mean)", _reduce("mean", True), _scatter_reduce),
    OpInfo("Tensor.scatter_reduce(prod)",
           lambda lib, x, d, i, s, **k: x.scatter_reduce(d, i, s, "prod", **k), _prod_zeros),
    OpInfo("torch.scatter_reduce(prod, zeros)", _reduce("prod"), _prod_zeros),
    # PyTorch refuses the double backward here (test_ops_scatter.py checks the error)
    OpInfo("torch.scatter_reduce(prod, two zeros)", _reduce("prod"), lambda rng: [
        Sample((arr(rng, 2, 2), 0, np.array([[0, 1], [0, 1], [1, 1], [0, 0]]),
                _src_with_zeros(rng, 4, 2, zeros=[(0, 0), (1, 0)])), desc="two zeros")],
           gradgrad=False),
    # PyTorch's backward refuses a src larger than the index: forward only
    OpInfo("torch.scatter_reduce(src larger)", _reduce("amax"), lambda rng: [
        Sample((arr(rng, 3, 5), 1, rng.integers(0, 4, size=(2, 3)), arr(rng, 3, 4)),
               desc="src larger than index")], grad=False),
    OpInfo("torch.scatter_reduce(amax, ties)", _reduce("amax"), _ties, gradcheck_samples=0),
    OpInfo("torch.scatter_reduce(amin, ties)", _reduce("amin"), _ties, gradcheck_samples=0),
]
for _kind in _OTHER["index_reduce"].split():
    OPS.append(OpInfo(f"torch.index_reduce({_kind})", _index_reduce_fn(_kind), _index_reduce))
OPS += [
    OpInfo("Tensor.index_reduce_(amax)", _index_reduce_fn("amax", True), _index_reduce),
    OpInfo("torch.diagonal_scatter", lambda lib, x, s, **k: lib.diagonal_scatter(x, s, **k),
           _scatters),
    OpInfo("torch.select_scatter", lambda lib, x, s, d, i: lib.select_scatter(x, s, d, i),
           lambda rng: [Sample((arr(rng, 3, 4), arr(rng, 3), 1, -1), desc="dim 1"),
                        Sample((arr(rng, 2, 3, 4), arr(rng, 3, 4), 0, 1), desc="dim 0")]),
    OpInfo("torch.slice_scatter", lambda lib, x, s, *a: lib.slice_scatter(x, s, *a),
           lambda rng: [Sample((arr(rng, 3, 6), arr(rng, 3, 2), 1, 1, 5, 2), desc="step"),
                        Sample((arr(rng, 4, 3), arr(rng, 4, 3)), desc="defaults dim 0")]),
    OpInfo("Tensor.slice_scatter", lambda lib, x, s: x.slice_scatter(s, 0, 2),
           lambda rng: [Sample((arr(rng, 4, 3), arr(rng, 2, 3)), desc="start")]),
    OpInfo("torch.put", lambda lib, x, i, s, **k: lib.put(x, i, s, **k), lambda rng: [
        Sample((arr(rng, 3, 4), np.array([0, 5, -1]), arr(rng, 3)), desc="write"),
        Sample((arr(rng, 3, 4), np.array([[1, 1], [7, 1]]), arr(rng, 2, 2)),
               {"accumulate": True}, desc="accumulate")]),
    OpInfo("Tensor.put_", lambda lib, x, i, s, **k: x.clone().put_(i, s, **k), lambda rng: [
        Sample((arr(rng, 3, 4), np.array([0, 5, -1]), arr(rng, 3)), desc="write"),
        Sample((arr(rng, 2, 3), np.array([2, 2]), arr(rng, 2)), {"accumulate": True},
               desc="accumulate")]),
]
