"""Op table entries: indexing (``x[...]``, ``x[...] = v``), gather/scatter and the index_* family.

Index tensors are integer/bool NumPy arrays in the samples (they become plain tensors); the
subscript itself is built inside ``fn`` so the same code runs on torch and glassgrad.
"""

import numpy as np

from . import OpInfo, Sample, arr

_I = np.array  # int64 index arrays, written inline


def _x(rng, *shape):
    return arr(rng, *shape)


# getitem: (description, fn(x, *indices), shape of x, index arrays)
_GETITEM = [
    ("int", lambda x: x[1], (3, 4), ()),
    ("negative int", lambda x: x[-1, -2], (3, 4), ()),
    ("int to 0-d", lambda x: x[1, 2], (3, 4), ()),
    ("slice", lambda x: x[1:3], (4, 3), ()),
    ("slice step", lambda x: x[::2, 1::2], (5, 4), ()),
    ("slice past end", lambda x: x[2:10], (4, 3), ()),
    ("empty slice", lambda x: x[3:1], (4, 3), ()),
    ("None", lambda x: x[None], (3, 4), ()),
    ("None middle", lambda x: x[:, None, 1], (3, 4), ()),
    ("Ellipsis", lambda x: x[..., 1], (2, 3, 4), ()),
    ("Ellipsis middle", lambda x: x[1, ..., 2:], (2, 3, 4), ()),
    ("0-d Ellipsis", lambda x: x[...], (), ()),
    ("0-d None", lambda x: x[None], (), ()),
    ("int tensor", lambda x, i: x[i], (4, 3), (_I([0, 2, 2, -1]),)),
    ("int tensor 2-D", lambda x, i: x[i], (4, 3), (_I([[0, 1], [3, 3]]),)),
    ("int tensor 0-d", lambda x, i: x[i], (4, 3), (_I(2),)),
    ("two int tensors", lambda x, i, j: x[i, j], (4, 3), (_I([0, 1, 3]), _I([2, 2, 0]))),
    ("int tensors broadcast", lambda x, i, j: x[i, j], (4, 3), (_I([[0], [3]]), _I([0, 1, 2]))),
    ("slice then int tensor", lambda x, i: x[1:, i], (4, 3), (_I([0, 0, 2]),)),
    ("int tensor then slice", lambda x, i: x[i, :2], (4, 3), (_I([3, 1]),)),
    ("separated int tensors", lambda x, i, j: x[i, :, j], (3, 2, 4), (_I([0, 2]), _I([1, 3]))),
    ("None and int tensor", lambda x, i: x[None, i], (4, 3), (_I([1, 2]),)),
    ("Ellipsis and int tensor", lambda x, i: x[..., i], (2, 3, 4), (_I([3, 0]),)),
    ("int and int tensor", lambda x, i: x[1, i], (3, 4), (_I([0, 3, 3]),)),
    ("list", lambda x: x[[0, 2]], (4, 3), ()),
    ("bool mask", lambda x, m: x[m], (3, 4), (np.arange(12).reshape(3, 4) % 3 == 0,)),
    ("bool row mask", lambda x, m: x[m], (3, 4), (np.array([True, False, True]),)),
    ("bool mask dim 1", lambda x, m: x[:, m], (3, 4), (np.array([False, True, True, False]),)),
    ("bool mask all false", lambda x, m: x[m], (3,), (np.zeros(3, dtype=bool),)),
    ("comparison mask", lambda x: x[x > 0], (3, 4), ()),
    ("empty int tensor", lambda x, i: x[i], (3, 4), (np.zeros(0, dtype=np.int64),)),
    ("index empty tensor", lambda x: x[:, 1:], (0, 3), ()),
]


def _getitem_op():
    def samples(rng):
        return [
            Sample((_x(rng, *shape), *idx), {"k": k}, desc=desc)
            for k, (desc, _, shape, idx) in enumerate(_GETITEM)
        ]

    return OpInfo("getitem", lambda m, x, *idx, k: _GETITEM[k][1](x, *idx), samples)


def _setitem(index_fn):
    """x.clone(), then ``y[index] = v`` (x and v both require grad), then return y."""

    def fn(m, x, v, *idx):
        y = x.clone()
        y[index_fn(*idx)] = v
        return y

    return fn


# setitem: (description, index fn, shape of x, shape of v (None: the number 2.5), index arrays)
_SETITEM = [
    ("int", lambda: 1, (3, 4), (4,), ()),
    ("int broadcast", lambda: 1, (3, 4), (1,), ()),
    ("slice", lambda: (slice(None), slice(1, 3)), (3, 4), (3, 2), ()),
    ("slice broadcast", lambda: (slice(None), slice(1, 3)), (3, 4), (2,), ()),
    ("0-d value", lambda: (0, 1), (3, 4), (), ()),
    ("number", lambda: (Ellipsis, 0), (3, 4), None, ()),
    ("Ellipsis", lambda: (Ellipsis, 2), (2, 3, 4), (2, 3), ()),
    ("None", lambda: (None, 1), (3, 4), (1, 4), ()),
    ("int tensor", lambda i: i, (4, 3), (2, 3), (_I([3, 0]),)),
    ("two int tensors", lambda i, j: (i, j), (4, 3), (3,), (_I([0, 1, 3]), _I([2, 2, 0]))),
    ("bool mask", lambda m: m, (3, 4), (), (np.arange(12).reshape(3, 4) % 3 == 0,)),
    ("bool mask values", lambda m: m, (3, 4), (4,), (np.arange(12).reshape(3, 4) % 3 == 0,)),
    ("bool row mask", lambda m: m, (3, 4), (4,), (np.array([True, False, True]),)),
    ("whole", lambda: slice(None), (3, 4), (3, 4), ()),
]


def _setitem_op():
    def samples(rng):
        out = []
        for k, (desc, _, shape, vshape, idx) in enumerate(_SETITEM):
            v = 2.5 if vshape is None else _x(rng, *vshape)
            out.append(Sample((_x(rng, *shape), v, *idx), {"k": k}, desc=desc))
        return out

    def fn(m, x, v, *idx, k):
        return _setitem(_SETITEM[k][1])(m, x, v, *idx)

    return OpInfo("setitem", fn, samples)


def _inplace_through_view(m, x, v):
    """Writes through views of a non-leaf: the base's gradient must skip the overwritten part."""
    y = x * 1
    y[1:].mul_(v)  # view of a view: CopySlices
    y.t()[0] = v[0]  # a transposed view
    y.diagonal().add_(1.5)  # a strided (diagonal) view
    y[0][1:3] = v[1, :2] * 2  # setitem on a view
    y.view(-1)[5] = v[2, 3]  # a reshaped view
    y.narrow(1, 2, 2).copy_(v[:, 1:3].sum(0))  # narrow + copy_ with broadcasting
    y.select(0, 3).zero_()  # a view from select (torch forbids this on unbind's outputs)
    y.t().reshape(-1)[0] = 7.0  # reshape of a transposed view copies: y must not change
    return y


def _gather_samples(rng):
    return [
        Sample((_x(rng, 3, 4), _I([[0, 1, 1, 2], [2, 2, 0, 0]])), {"dim": 0}, desc="dim 0"),
        Sample((_x(rng, 3, 4), _I([[3, 3], [0, 1], [2, 0]])), {"dim": 1}, desc="dim 1 repeats"),
        Sample((_x(rng, 3, 4), _I([[0], [1]])), {"dim": -1}, desc="smaller index"),
        Sample(
            (_x(rng, 2, 3, 4).transpose(1, 0, 2), _I(np.zeros((3, 2, 1), np.int64))),
            {"dim": 2},
            desc="non-contiguous",
        ),
        Sample((_x(rng, 3), _I([2, 0, 0, 1])), {"dim": 0}, desc="vector"),
        Sample((_x(rng, 3, 2), np.zeros((0, 2), np.int64)), {"dim": 0}, desc="empty index"),
    ]


def _scatter_samples(rng):
    return [
        Sample(
            (_x(rng, 3, 4), _I([[0, 1, 2, 0], [2, 0, 1, 1]]), _x(rng, 2, 4)),
            {"dim": 0},
            desc="dim 0",
        ),
        Sample((_x(rng, 3, 4), _I([[3], [0], [1]]), _x(rng, 3, 1)), {"dim": 1}, desc="dim 1"),
        Sample((_x(rng, 3, 4), _I([[1, 0]]), _x(rng, 2, 3)), {"dim": 1}, desc="larger src"),
        Sample((_x(rng, 4), _I([3, 1]), _x(rng, 2)), {"dim": 0}, desc="vector"),
    ]


def _scatter_add_samples(rng):
    return _scatter_samples(rng) + [
        Sample(
            (_x(rng, 3, 2), _I([[0, 0], [0, 2], [0, 2]]), _x(rng, 3, 2)), {"dim": 0}, desc="repeats"
        ),
    ]


def _index_select_samples(rng):
    return [
        Sample((_x(rng, 4, 3), _I([0, 3, 3])), {"dim": 0}, desc="dim 0 repeats"),
        Sample((_x(rng, 4, 3), _I([2, 0])), {"dim": -1}, desc="negative dim"),
        Sample((_x(rng, 4, 3), _I(1)), {"dim": 1}, desc="0-d index"),
        Sample((_x(rng, 2, 3, 4).transpose(2, 0, 1), _I([1])), {"dim": 1}, desc="non-contiguous"),
        Sample((_x(rng, 4, 3), np.zeros(0, np.int64)), {"dim": 0}, desc="empty index"),
    ]


def _index_add_samples(rng):
    return [
        Sample((_x(rng, 4, 3), _I([0, 3, 0]), _x(rng, 3, 3)), {"dim": 0}, desc="repeats"),
        Sample((_x(rng, 3, 4), _I([1, 2]), _x(rng, 3, 2)), {"dim": 1}, desc="dim 1"),
        Sample((_x(rng, 3, 4), _I([1, 2]), _x(rng, 3, 2)), {"dim": -1, "alpha": 2.0}, desc="alpha"),
        Sample((_x(rng, 4), _I([2]), _x(rng, 1)), {"dim": 0}, desc="vector"),
    ]


def _masked_samples(rng):
    mask = np.arange(12).reshape(3, 4) % 3 == 0
    return [
        Sample((_x(rng, 3, 4), mask), desc="same shape"),
        Sample((_x(rng, 3, 4), np.array([True, False, False, True])), desc="mask broadcasts"),
        Sample((_x(rng, 3, 1), mask), desc="input broadcasts"),
        Sample((_x(rng), np.array(True)), desc="0-d"),
        Sample((_x(rng, 0, 4), np.zeros((0, 4), bool)), desc="empty"),
    ]


def _take_samples(rng):
    return [
        Sample((_x(rng, 3, 4), _I([0, 11, -1, 5, 5])), desc="flat"),
        Sample((_x(rng, 3, 4), _I([[1, 2], [3, 4]])), desc="2-D index"),
        Sample((_x(rng, 3, 4).T, _I([0, 1])), desc="non-contiguous"),
    ]


def _take_along_dim_samples(rng):
    return [
        Sample((_x(rng, 3, 4), _I([[0, 1], [3, 3], [2, 0]])), {"dim": 1}, desc="dim 1"),
        Sample((_x(rng, 3, 4), _I([[0], [2]])), {"dim": 0}, desc="broadcast"),
        Sample((_x(rng, 3, 4), _I([0, 5, 11])), {"dim": None}, desc="flat"),
    ]


def _select_samples(rng):
    return [
        Sample((_x(rng, 3, 4),), {"dim": 0, "index": 1}, desc="dim 0"),
        Sample((_x(rng, 3, 4),), {"dim": -1, "index": -1}, desc="negative"),
        Sample(
            (_x(rng, 2, 3, 4).transpose(1, 0, 2),), {"dim": 1, "index": 0}, desc="non-contiguous"
        ),
    ]


def _index_put_samples(rng):
    return [
        Sample((_x(rng, 4, 3), _I([0, 2]), _x(rng, 3)), {"accumulate": False}, desc="rows"),
        Sample(
            (_x(rng, 4, 3), _I([0, 2, 0]), _x(rng, 3, 3)),
            {"accumulate": True},
            desc="accumulate repeats",
        ),
        Sample((_x(rng, 4, 3), _I([1, 3]), _x(rng)), {"accumulate": False}, desc="0-d value"),
    ]


def _index_fill_samples(rng):
    return [
        Sample((_x(rng, 4, 3), _I([0, 2])), {"dim": 0, "value": -1.0}, desc="number"),
        Sample((_x(rng, 4, 3), _I([1]), _x(rng)), {"dim": 1}, desc="tensor value"),
    ]


def _index_copy_samples(rng):
    return [
        Sample((_x(rng, 4, 3), _I([0, 2]), _x(rng, 2, 3)), {"dim": 0}, desc="rows"),
        Sample((_x(rng, 4, 3), _I([2, 0]), _x(rng, 4, 2)), {"dim": -1}, desc="columns"),
    ]


def _masked_scatter_samples(rng):
    mask = np.arange(12).reshape(3, 4) % 3 == 0
    return [
        Sample((_x(rng, 3, 4), mask, _x(rng, 3, 4)), desc="same shape"),
        Sample(
            (_x(rng, 3, 4), np.array([True, False, False, True]), _x(rng, 7)),
            desc="broadcast mask, longer source",
        ),
    ]


def _nonzero_samples(rng):
    x = arr(rng, 3, 4)
    x[x < 0] = 0
    return [
        Sample((x,), desc="matrix"),
        Sample((np.zeros(3),), desc="none"),
        Sample((arr(rng),), desc="0-d"),
    ]


OPS = [
    _getitem_op(),
    _setitem_op(),
    OpInfo(
        "inplace_through_views",
        _inplace_through_view,
        lambda rng: [Sample((_x(rng, 4, 4), _x(rng, 3, 4)), desc="matrix")],
    ),
    OpInfo(
        "setitem_view_of_leaf_under_no_grad",
        lambda m, x: _no_grad_write(m, x),
        lambda rng: [Sample((_x(rng, 3, 4),))],
        gradcheck_samples=0,
    ),  # finite differences see the overwrite; autograd does not
    OpInfo("gather", lambda m, x, i, dim: m.gather(x, dim, i), _gather_samples),
    OpInfo("gather_method", lambda m, x, i, dim: x.gather(dim, i), _gather_samples),
    OpInfo(
        "scatter",
        lambda m, x, i, s, dim: m.scatter(x, dim, i, s),
        lambda rng: _scatter_samples(rng)[:2] + _scatter_samples(rng)[3:],
    ),
    OpInfo(
        "scatter_value", lambda m, x, i, s, dim: x.scatter(dim, i, 1.5) + s.sum(), _scatter_samples
    ),
    OpInfo(
        "scatter_add",
        lambda m, x, i, s, dim: m.scatter_add(x, dim, i, s),
        lambda rng: [s for s in _scatter_add_samples(rng) if s.desc != "larger src"],
    ),
    OpInfo(
        "scatter_add_",
        lambda m, x, i, s, dim: (x * 1).scatter_add_(dim, i, s),
        lambda rng: _scatter_add_samples(rng)[:2],
    ),
    OpInfo("index_select", lambda m, x, i, dim: m.index_select(x, dim, i), _index_select_samples),
    OpInfo(
        "index_add",
        lambda m, x, i, s, dim, alpha=1: m.index_add(x, dim, i, s, alpha=alpha),
        _index_add_samples,
    ),
    OpInfo(
        "index_add_",
        lambda m, x, i, s, dim, alpha=1: (x * 1).index_add_(dim, i, s),
        _index_add_samples,
    ),
    OpInfo("index_copy", lambda m, x, i, s, dim: m.index_copy(x, dim, i, s), _index_copy_samples),
    OpInfo(
        "index_fill",
        lambda m, x, i, *v, dim, value=None: m.index_fill(x, dim, i, v[0] if v else value),
        _index_fill_samples,
    ),
    OpInfo(
        "index_put",
        lambda m, x, i, v, accumulate: m.index_put(x, (i,), v, accumulate),
        _index_put_samples,
    ),
    OpInfo(
        "index_put_",
        lambda m, x, i, v, accumulate: (x * 1).index_put_((i,), v, accumulate),
        _index_put_samples,
    ),
    OpInfo("masked_fill", lambda m, x, mask: m.masked_fill(x, mask, -0.5), _masked_samples),
    OpInfo(
        "masked_fill_tensor", lambda m, x, mask: x.masked_fill(mask, x.sum() * 0.5), _masked_samples
    ),
    OpInfo(
        "masked_fill_",
        lambda m, x, mask: (x * 1).masked_fill_(mask, 3.0),
        lambda rng: [s for s in _masked_samples(rng) if s.desc != "input broadcasts"],
    ),
    OpInfo("masked_select", lambda m, x, mask: m.masked_select(x, mask), _masked_samples),
    OpInfo(
        "masked_scatter", lambda m, x, mask, s: x.masked_scatter(mask, s), _masked_scatter_samples
    ),
    OpInfo("take", lambda m, x, i: m.take(x, i), _take_samples),
    OpInfo(
        "take_along_dim", lambda m, x, i, dim: m.take_along_dim(x, i, dim), _take_along_dim_samples
    ),
    OpInfo("select", lambda m, x, **kw: m.select(x, **kw), _select_samples),
    OpInfo(
        "unbind_select",
        lambda m, x: x[0] + x.select(0, 1) - x.unbind()[2],
        lambda rng: [Sample((_x(rng, 3, 4),))],
    ),
    OpInfo("nonzero", lambda m, x: m.nonzero(x), _nonzero_samples, grad=False),
    OpInfo(
        "nonzero_tuple",
        lambda m, x: m.nonzero(x, as_tuple=True),
        lambda rng: _nonzero_samples(rng)[:2],
        grad=False,
    ),
    OpInfo("argwhere", lambda m, x: m.argwhere(x), _nonzero_samples, grad=False),
    OpInfo(
        "where_cond_only",
        lambda m, x: m.where(x > 0.5),
        lambda rng: [Sample((_x(rng, 3, 4),))],
        grad=False,
    ),
]


def _no_grad_write(m, x):
    y = x * 1
    with m.no_grad():
        y[0] = 0.0  # not recorded: the gradient still flows through the old values
    return y * 2
