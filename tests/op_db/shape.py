"""Op table entries: shape ops (views, joins, splits, flips, repeats, triangles and diagonals)."""

import numpy as np

from . import OpInfo, Sample, arr


def _one(*cases):
    """Samples of a one-input op: each case is (shape, kwargs, desc); shape "nc" -> a
    non-contiguous (3, 2, 4) input (a transposed (2, 3, 4) array)."""

    def make(rng):
        out = []
        for shape, kw, desc in cases:
            x = arr(rng, 2, 4, 3).transpose(2, 0, 1) if shape == "nc" else arr(rng, *shape)
            out.append(Sample((x,), kw, desc=desc))
        return out

    return make


def _many(*cases):
    """Samples of list-taking ops (cat/stack): each case is (list of shapes, kwargs, desc)."""

    def make(rng):
        return [
            Sample(([arr(rng, *s) for s in shapes],), kw, desc=desc) for shapes, kw, desc in cases
        ]

    return make


def _nc(rng, *shape):
    """A non-contiguous array of ``shape`` (the transpose of a C array)."""
    return arr(rng, *shape[::-1]).T


_RESHAPE = _one(
    ((), {"shape": (1, 1)}, "0-d to 2-d"),
    ((1,), {"shape": ()}, "1 to 0-d"),
    ((6,), {"shape": (2, 3)}, "split"),
    ((2, 3, 4), {"shape": (-1, 4)}, "infer"),
    ((2, 3, 4), {"shape": (4, 6)}, "regroup"),
    ("nc", {"shape": (6, 4)}, "non-contiguous"),
    ((0, 3), {"shape": (3, 0, 1)}, "empty"),
)

_PERMUTE = _one(
    ((), {"dims": ()}, "0-d"),
    ((3, 4), {"dims": (1, 0)}, "matrix"),
    ((2, 3, 4), {"dims": (2, 0, 1)}, "3-D"),
    ((2, 3, 4), {"dims": (-1, -3, -2)}, "negative dims"),
    ("nc", {"dims": (1, 2, 0)}, "non-contiguous"),
    ((0, 3), {"dims": (1, 0)}, "empty"),
)

_TRANSPOSE = _one(
    ((), {"dim0": 0, "dim1": -1}, "0-d"),
    ((5,), {"dim0": 0, "dim1": 0}, "vector"),
    ((3, 4), {"dim0": 0, "dim1": 1}, "matrix"),
    ((2, 3, 4), {"dim0": -1, "dim1": 0}, "3-D negative"),
    ("nc", {"dim0": 1, "dim1": 2}, "non-contiguous"),
    ((0, 3), {"dim0": 0, "dim1": 1}, "empty"),
)

_SQUEEZE = _one(
    ((), {}, "0-d"),
    ((1, 3, 1, 4), {}, "all"),
    ((1, 3, 1, 4), {"dim": 2}, "dim"),
    ((1, 3, 1, 4), {"dim": 1}, "non-singleton dim"),
    ((1, 3, 1, 4), {"dim": (0, -2)}, "tuple dim"),
    ((0, 1, 3), {"dim": 1}, "empty"),
)

_UNSQUEEZE = _one(
    ((), {"dim": 0}, "0-d"),
    ((3, 4), {"dim": 0}, "front"),
    ((3, 4), {"dim": -1}, "back"),
    ((3, 4), {"dim": 1}, "middle"),
    ("nc", {"dim": 2}, "non-contiguous"),
    ((0, 3), {"dim": 1}, "empty"),
)

_EXPAND = _one(
    ((), {"size": (2, 3)}, "0-d"),
    ((3, 1), {"size": (3, 4)}, "column"),
    ((3, 1), {"size": (2, -1, 4)}, "new dim and -1"),
    ((1, 4), {"size": (3, 4)}, "row"),
    ((0, 1), {"size": (0, 3)}, "empty"),
)

_REPEAT = _one(
    ((), {"sizes": (2, 3)}, "0-d"),
    ((3,), {"sizes": (2,)}, "vector"),
    ((2, 3), {"sizes": (2, 1, 2)}, "new leading dim"),
    ("nc", {"sizes": (1, 2, 1)}, "non-contiguous"),
    ((2, 3), {"sizes": (0, 2)}, "zero repeat"),
)

_TILE = _one(
    ((3,), {"dims": (2,)}, "vector"),
    ((2, 3), {"dims": (2,)}, "short dims"),
    ((2, 3), {"dims": (2, 1, 2)}, "long dims"),
)

_FLIP = _one(
    ((), {"dims": ()}, "0-d"),
    ((5,), {"dims": (0,)}, "vector"),
    ((3, 4), {"dims": (0, 1)}, "both"),
    ((2, 3, 4), {"dims": (-1,)}, "negative"),
    ("nc", {"dims": (1,)}, "non-contiguous"),
    ((0, 3), {"dims": (1,)}, "empty"),
)

_ROLL = _one(
    ((5,), {"shifts": 2}, "vector flat"),
    ((3, 4), {"shifts": 1}, "matrix flat"),
    ((3, 4), {"shifts": -1, "dims": 1}, "int dim"),
    ((3, 4), {"shifts": (1, 2), "dims": (0, 1)}, "tuple"),
    ((2, 3, 4), {"shifts": 5, "dims": -1}, "shift larger than size"),
    ("nc", {"shifts": (2,), "dims": (0,)}, "non-contiguous"),
    ((0, 3), {"shifts": 1, "dims": 1}, "empty"),
)

_NARROW = _one(
    ((5,), {"dim": 0, "start": 1, "length": 3}, "vector"),
    ((3, 4), {"dim": 1, "start": 2, "length": 2}, "matrix"),
    ((3, 4), {"dim": -2, "start": -2, "length": 1}, "negative"),
    ("nc", {"dim": 2, "start": 0, "length": 0}, "length 0"),
)

_MOVEDIM = _one(
    ((2, 3, 4), {"source": 0, "destination": 2}, "int"),
    ((2, 3, 4), {"source": (0, 1), "destination": (2, 0)}, "tuple"),
    ((2, 3, 4), {"source": -1, "destination": 0}, "negative"),
    ("nc", {"source": 1, "destination": -1}, "non-contiguous"),
)

_SPLIT = _one(
    ((5,), {"split_size_or_sections": 2}, "uneven"),
    ((6, 2), {"split_size_or_sections": [1, 2, 3]}, "sections"),
    ((2, 6), {"split_size_or_sections": 3, "dim": -1}, "negative dim"),
    ((0, 3), {"split_size_or_sections": 2, "dim": 1}, "empty"),
)

_CHUNK = _one(
    ((5,), {"chunks": 2}, "uneven"),
    ((6, 2), {"chunks": 3}, "even"),
    ((2, 5), {"chunks": 4, "dim": 1}, "fewer chunks than asked"),
)

_UNBIND = _one(
    ((3,), {}, "vector"),
    ((3, 4), {"dim": 1}, "dim=1"),
    ("nc", {"dim": -1}, "non-contiguous"),
)

_CAT = _many(
    ([(2, 3), (4, 3)], {}, "dim 0"),
    ([(2, 3), (2, 1), (2, 2)], {"dim": 1}, "three"),
    ([(2, 3, 1), (2, 3, 2)], {"dim": -1}, "negative"),
    ([(2, 3), (0, 3)], {}, "with empty"),
    ([(2, 3), (0,)], {}, "legacy 1-D empty"),
)

_STACK = _many(
    ([(), ()], {}, "0-d"),
    ([(3,), (3,), (3,)], {}, "vectors"),
    ([(2, 3), (2, 3)], {"dim": 2}, "last"),
    ([(2, 3), (2, 3)], {"dim": -2}, "negative"),
    ([(0, 3), (0, 3)], {"dim": 1}, "empty"),
)

_HVSTACK = _many(
    ([(3,), (2,)], {}, "vectors"),
    ([(2, 3), (2, 1)], {}, "matrices"),
    ([(2, 2, 1), (2, 2, 1)], {}, "3-D"),
)

_VSTACK = _many(
    ([(3,), (3,)], {}, "vectors"),
    ([(2, 3), (1, 3)], {}, "matrices"),
    ([(1, 2, 2), (3, 2, 2)], {}, "3-D"),
)

_TRI = _one(
    ((3, 4), {}, "matrix"),
    ((4, 3), {"diagonal": 1}, "above"),
    ((3, 4), {"diagonal": -1}, "below"),
    ((2, 3, 3), {"diagonal": 0}, "batched"),
    ("nc", {"diagonal": 2}, "non-contiguous"),
    ((0, 3), {}, "empty"),
)

_DIAGONAL = _one(
    ((3, 4), {}, "matrix"),
    ((4, 3), {"offset": 1}, "above"),
    ((3, 4), {"offset": -2}, "below"),
    ((2, 3, 4), {"offset": 1, "dim1": -1, "dim2": 0}, "3-D dims"),
    ("nc", {"dim1": 2, "dim2": 1}, "non-contiguous"),
    ((3, 4), {"offset": 5}, "offset beyond"),
)

_DIAG = _one(
    ((4,), {}, "vector"),
    ((3,), {"diagonal": 1}, "vector above"),
    ((3,), {"diagonal": -2}, "vector below"),
    ((3, 4), {}, "matrix"),
    ((3, 4), {"diagonal": -1}, "matrix below"),
    ((0,), {}, "empty"),
)


def _repeat_interleave(rng):
    return [
        Sample((arr(rng, 4),), {"repeats": 2}, desc="int vector"),
        Sample((arr(rng, 2, 3),), {"repeats": 2}, desc="int flat"),
        Sample((arr(rng, 2, 3),), {"repeats": 3, "dim": 1}, desc="int dim"),
        Sample((arr(rng, 3, 2), np.array([1, 0, 2])), {"dim": 0}, desc="tensor repeats"),
        Sample((_nc(rng, 2, 3), np.array([2])), {"dim": -1}, desc="one-element repeats"),
        Sample((arr(rng),), {"repeats": 3}, desc="0-d"),
    ]


def _diff(rng):
    return [
        Sample((arr(rng, 5),), {}, desc="vector"),
        Sample((arr(rng, 3, 4),), {"n": 2, "dim": 0}, desc="n=2 dim 0"),
        Sample((arr(rng, 3, 4), arr(rng, 3, 1)), {"dim": 1}, desc="prepend"),
        Sample((arr(rng, 3, 4), None, arr(rng, 3, 2)), {"dim": -1}, desc="append"),
    ]


def _cross(rng):
    return [
        Sample((arr(rng, 3), arr(rng, 3)), {"dim": 0}, desc="vectors"),
        Sample((arr(rng, 4, 3), arr(rng, 1, 3)), {"dim": 1}, desc="broadcast"),
        Sample((arr(rng, 3, 2), arr(rng, 3, 2)), {"dim": 0}, desc="dim 0"),
    ]


def _atleast(rng):
    return [
        Sample((arr(rng),), desc="0-d"),
        Sample((arr(rng, 3),), desc="vector"),
        Sample((arr(rng, 2, 3),), desc="matrix"),
        Sample((arr(rng, 2, 3, 4),), desc="3-D"),
    ]


OPS = [
    OpInfo("reshape", lambda m, x, shape: m.reshape(x, shape), _RESHAPE),
    OpInfo(
        "reshape_varargs",
        lambda m, x, shape: x.reshape(*shape) if shape else x.reshape(()),
        _RESHAPE,
    ),
    OpInfo("view", lambda m, x, shape: x.contiguous().view(shape), _RESHAPE),
    OpInfo(
        "view_varargs",
        lambda m, x: x.view(-1) * 2 + x.view(x.numel(), 1)[:, 0],
        _one(((3, 4), {}, "matrix"), ((), {}, "0-d")),
    ),
    OpInfo("view_as", lambda m, x: x.view_as(x.reshape(-1)), _one(((3, 4), {}, "matrix"))),
    OpInfo("reshape_as", lambda m, x: x.reshape_as(x.t()), _one(((3, 4), {}, "matrix"))),
    OpInfo(
        "flatten",
        lambda m, x, **kw: m.flatten(x, **kw),
        _one(
            ((), {}, "0-d"),
            ((2, 3, 4), {}, "all"),
            ((2, 3, 4), {"start_dim": 1}, "start"),
            ((2, 3, 4, 2), {"start_dim": 1, "end_dim": -2}, "middle"),
            ("nc", {"start_dim": 0, "end_dim": 1}, "non-contiguous"),
            ((0, 3), {}, "empty"),
        ),
    ),
    OpInfo(
        "unflatten",
        lambda m, x, **kw: m.unflatten(x, **kw),
        _one(
            ((6,), {"dim": 0, "sizes": (2, 3)}, "vector"),
            ((2, 12), {"dim": -1, "sizes": (3, -1)}, "infer"),
            ("nc", {"dim": 1, "sizes": (2, 1)}, "non-contiguous"),
        ),
    ),
    OpInfo("permute", lambda m, x, dims: m.permute(x, dims), _PERMUTE),
    OpInfo(
        "permute_varargs", lambda m, x, dims: x.permute(*dims) if dims else x.permute(()), _PERMUTE
    ),
    OpInfo("transpose", lambda m, x, **kw: m.transpose(x, **kw), _TRANSPOSE),
    OpInfo("swapaxes", lambda m, x: m.swapaxes(x, 0, 1), _one(((3, 4), {}, "matrix"))),
    OpInfo(
        "t",
        lambda m, x: m.t(x),
        _one(((), {}, "0-d"), ((4,), {}, "vector"), ((3, 4), {}, "matrix"), ((0, 2), {}, "empty")),
    ),
    OpInfo("T", lambda m, x: x.T, _one(((), {}, "0-d"), ((3, 4), {}, "matrix"))),
    OpInfo("mT", lambda m, x: x.mT, _one(((3, 4), {}, "matrix"), ("nc", {}, "3-D"))),
    OpInfo("mH", lambda m, x: x.mH, _one(((2, 3, 4), {}, "3-D"))),
    OpInfo("adjoint", lambda m, x: x.adjoint(), _one(((2, 3, 4), {}, "3-D"))),
    OpInfo("squeeze", lambda m, x, **kw: m.squeeze(x, **kw), _SQUEEZE),
    OpInfo("unsqueeze", lambda m, x, dim: m.unsqueeze(x, dim), _UNSQUEEZE),
    OpInfo("expand", lambda m, x, size: x.expand(*size), _EXPAND),
    OpInfo("expand_tuple", lambda m, x, size: x.expand(size) * 1.5, _EXPAND),
    OpInfo(
        "expand_as",
        lambda m, x, y: x.expand_as(y),
        lambda rng: [
            Sample((arr(rng, 3, 1), arr(rng, 2, 3, 4)), desc="broadcast"),
            Sample((arr(rng), arr(rng, 2)), desc="0-d"),
        ],
    ),
    OpInfo("broadcast_to", lambda m, x, size: m.broadcast_to(x, size), _EXPAND),
    OpInfo(
        "broadcast_tensors",
        lambda m, x, y: m.broadcast_tensors(x, y),
        lambda rng: [
            Sample((arr(rng, 3, 1), arr(rng, 4)), desc="both"),
            Sample((arr(rng), arr(rng, 2, 2)), desc="0-d"),
        ],
    ),
    OpInfo("sum_to_size", lambda m, x: x.sum_to_size(3, 1), _one(((2, 3, 4), {}, "3-D"))),
    OpInfo("repeat", lambda m, x, sizes: x.repeat(*sizes), _REPEAT),
    OpInfo("repeat_tuple", lambda m, x, sizes: x.repeat(sizes), _REPEAT),
    OpInfo("tile", lambda m, x, dims: m.tile(x, dims), _TILE),
    OpInfo("cat", lambda m, xs, **kw: m.cat(xs, **kw), _CAT),
    OpInfo(
        "concat_mixed_dtype",
        lambda m, x, y: m.concat([x, y.float()], dim=0),
        lambda rng: [Sample((arr(rng, 2, 3), arr(rng, 1, 3)), desc="float64 and float32")],
        float32=False,
        gradcheck_samples=0,
        atol=1e-6,
    ),
    OpInfo("stack", lambda m, xs, **kw: m.stack(xs, **kw), _STACK),
    OpInfo("hstack", lambda m, xs: m.hstack(xs), _HVSTACK),
    OpInfo("vstack", lambda m, xs: m.vstack(xs), _VSTACK),
    OpInfo(
        "dstack",
        lambda m, xs: m.dstack(xs),
        _many(
            ([(3,), (3,)], {}, "vectors"),
            ([(2, 3), (2, 3)], {}, "matrices"),
            ([(2, 2, 1), (2, 2, 3)], {}, "3-D"),
        ),
    ),
    OpInfo(
        "column_stack",
        lambda m, xs: m.column_stack(xs),
        _many(([(3,), (3,)], {}, "vectors"), ([(3, 2), (3,)], {}, "mixed")),
    ),
    OpInfo("split", lambda m, x, **kw: m.split(x, **kw), _SPLIT),
    OpInfo("split_method", lambda m, x: x.split([1, 2], 1), _one(((2, 3), {}, "matrix"))),
    OpInfo("chunk", lambda m, x, **kw: m.chunk(x, **kw), _CHUNK),
    OpInfo(
        "tensor_split",
        lambda m, x, spec, dim=0: m.tensor_split(x, spec, dim),
        _one(
            ((7,), {"spec": 3}, "sections"),
            ((3, 5), {"spec": (1, 3), "dim": 1}, "indices"),
            ((6,), {"spec": [-2, 9]}, "negative and past the end"),
        ),
    ),
    OpInfo("unbind", lambda m, x, **kw: m.unbind(x, **kw), _UNBIND),
    OpInfo("flip", lambda m, x, dims: m.flip(x, dims), _FLIP),
    OpInfo("fliplr", lambda m, x: m.fliplr(x), _one(((3, 4), {}, "matrix"))),
    OpInfo("flipud", lambda m, x: m.flipud(x), _one(((3, 4), {}, "matrix"), ((3,), {}, "vec"))),
    OpInfo(
        "rot90",
        lambda m, x, **kw: m.rot90(x, **kw),
        _one(
            ((3, 4), {}, "once"),
            ((3, 4), {"k": 2}, "twice"),
            ((3, 4), {"k": -1}, "back"),
            ((2, 3, 4), {"k": 3, "dims": (1, 2)}, "3-D"),
        ),
    ),
    OpInfo("roll", lambda m, x, **kw: m.roll(x, **kw), _ROLL),
    OpInfo("narrow", lambda m, x, **kw: m.narrow(x, **kw), _NARROW),
    OpInfo("movedim", lambda m, x, **kw: m.movedim(x, **kw), _MOVEDIM),
    OpInfo(
        "contiguous",
        lambda m, x: x.contiguous() * 2,
        _one(((3, 4), {}, "contiguous"), ("nc", {}, "non-contiguous"), ((), {}, "0-d")),
    ),
    OpInfo("tril", lambda m, x, **kw: m.tril(x, **kw), _TRI),
    OpInfo("triu", lambda m, x, **kw: x.triu(**kw), _TRI),
    OpInfo("diagonal", lambda m, x, **kw: m.diagonal(x, **kw), _DIAGONAL),
    OpInfo("diag", lambda m, x, **kw: m.diag(x, **kw), _DIAG),
    OpInfo(
        "diag_embed",
        lambda m, x, **kw: m.diag_embed(x, **kw),
        _one(
            ((3,), {}, "vector"),
            ((2, 3), {"offset": 1}, "batched above"),
            ((2, 3), {"offset": -1, "dim1": 0, "dim2": 2}, "dims"),
        ),
    ),
    OpInfo(
        "repeat_interleave",
        lambda m, x, *r, **kw: m.repeat_interleave(x, *r, **kw),
        _repeat_interleave,
    ),
    OpInfo(
        "diff",
        lambda m, x, prepend=None, append=None, **kw: m.diff(
            x, prepend=prepend, append=append, **kw
        ),
        _diff,
    ),
    OpInfo("cross", lambda m, x, y, **kw: m.cross(x, y, **kw), _cross),
    OpInfo("atleast_1d", lambda m, x: m.atleast_1d(x), _atleast),
    OpInfo("atleast_2d", lambda m, x: m.atleast_2d(x), _atleast),
    OpInfo("atleast_3d", lambda m, x: m.atleast_3d(x), _atleast),
]
