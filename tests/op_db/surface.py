"""Op table entries: the as_strided family (views of a storage at any geometry, lane surface)."""

from . import OpInfo, Sample, arr


def _as_strided_samples(rng):
    return [
        Sample((arr(rng, 6),), {"size": (3, 3), "stride": (1, 1)}, desc="overlapping windows"),
        Sample((arr(rng, 3, 4),), {"size": (2, 2), "stride": (1, 2), "storage_offset": 1},
               desc="offset"),
        Sample((arr(rng, 3, 4),), {"size": (2, 3), "stride": (4, 1)}, desc="plain window"),
        Sample((arr(rng, 5),), {"size": (0, 2), "stride": (1, 1)}, desc="empty"),
        Sample((arr(rng, 4),), {"size": (), "stride": (), "storage_offset": 2}, desc="0-d"),
    ]


def _through_view(lib, x, **kw):
    # the input itself a view (transposed): its geometry enters the gradient
    return lib.as_strided(x.t(), **kw)


def _through_expand(lib, x, **kw):
    # an input that overlaps itself: torch divides by how often it reads each element
    return lib.as_strided(x.expand(2, *x.shape), **kw)


def _scatter_samples(rng):
    return [
        Sample((arr(rng, 3, 4), arr(rng, 2, 2)), {"size": (2, 2), "stride": (1, 2)},
               desc="matrix"),
        Sample((arr(rng, 6), arr(rng, 2, 3)), {"size": (2, 3), "stride": (3, 1),
                                               "storage_offset": 0}, desc="all of it"),
    ]


OPS = [
    OpInfo("as_strided", lambda lib, x, **kw: lib.as_strided(x, **kw), _as_strided_samples),
    OpInfo("as_strided_method", lambda lib, x, **kw: x.as_strided(**kw), _as_strided_samples),
    OpInfo("as_strided_of_view", _through_view, lambda rng: [
        Sample((arr(rng, 3, 4),), {"size": (2, 2), "stride": (1, 2)}, desc="transposed"),
        Sample((arr(rng, 3, 4),), {"size": (3, 3), "stride": (1, 1)}, desc="overlap")]),
    OpInfo("as_strided_of_expand", _through_expand, lambda rng: [
        Sample((arr(rng, 3),), {"size": (2, 2), "stride": (1, 1)}, desc="expanded"),
        Sample((arr(rng, 4),), {"size": (2, 2), "stride": (1, 2)}, desc="expanded wide")]),
    OpInfo("as_strided_copy", lambda lib, x, **kw: lib.as_strided_copy(x, **kw),
           _as_strided_samples),
    # NOTE: torch 2.13's gradient for input is wrong (it keeps the window and zeroes the rest, and
    # fails its own gradcheck); tests/test_storage_strides.py checks glassgrad's by finite
    # differences and the gradient for src against torch
    OpInfo("as_strided_scatter", lambda lib, x, s, **kw: lib.as_strided_scatter(x, s, **kw),
           _scatter_samples, grad=False),
]
