"""Comparisons and logical ops: elementwise, boolean results, no gradient (``torch.eq``, ...)."""

from __future__ import annotations

import numpy as np

from .ops import primitive
from .ops._util import is_tensor


def _arr(x):
    return x._array if is_tensor(x) else x


def _cmp(np_fn, name):
    def fn(input, other):
        a, b = _arr(input), _arr(other)
        try:
            out = np_fn(a, b)
        except ValueError:
            raise RuntimeError(
                f"The size of tensor a ({list(np.shape(a))}) must match the size of tensor b "
                f"({list(np.shape(b))}) at non-singleton dimension ({name})"
            ) from None
        return primitive._make(np.asarray(out))

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` with broadcasting (``torch.{name}``); bool result, no grad."
    return fn


eq = _cmp(np.equal, "eq")
ne = _cmp(np.not_equal, "ne")
lt = _cmp(np.less, "lt")
le = _cmp(np.less_equal, "le")
gt = _cmp(np.greater, "gt")
ge = _cmp(np.greater_equal, "ge")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
logical_and = _cmp(np.logical_and, "logical_and")
logical_or = _cmp(np.logical_or, "logical_or")
logical_xor = _cmp(np.logical_xor, "logical_xor")
bitwise_and = _cmp(np.bitwise_and, "bitwise_and")
bitwise_or = _cmp(np.bitwise_or, "bitwise_or")
bitwise_xor = _cmp(np.bitwise_xor, "bitwise_xor")


def logical_not(input):
    return primitive._make(np.logical_not(input._array))


def bitwise_not(input):
    return primitive._make(np.invert(input._array))


def isnan(input):
    return primitive._make(np.isnan(input._array))


def isinf(input):
    return primitive._make(np.isinf(input._array))


def isfinite(input):
    return primitive._make(np.isfinite(input._array))


def isposinf(input):
    return primitive._make(np.isposinf(input._array))


def isneginf(input):
    return primitive._make(np.isneginf(input._array))


def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements (``torch.equal``)."""
    return input._array.shape == other._array.shape and bool(np.all(input._array == other._array))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(np.allclose(input._array, _arr(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return primitive._make(np.isclose(input._array, _arr(other), rtol=rtol, atol=atol,
                                      equal_nan=equal_nan))


def sort(input, dim=-1, descending=False, stable=False):
    from collections import namedtuple

    arr = input._array
    idx = np.argsort(-arr if descending else arr, axis=dim, kind="stable")
    from .ops.indexing import gather

    idx_t = primitive._make(idx.astype(np.int64))
    return namedtuple("sort", ["values", "indices"])(gather(input, dim, idx_t), idx_t)


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    from collections import namedtuple

    from .ops.indexing import gather
    from .ops.shape import narrow

    s = sort(input, dim, descending=largest)
    idx = narrow(s.indices, dim, 0, k)
    return namedtuple("topk", ["values", "indices"])(gather(input, dim, idx), idx)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    out = np.unique(input._array, return_inverse=return_inverse, return_counts=return_counts)
    if not (return_inverse or return_counts):
        return primitive._make(out)
    res = [primitive._make(out[0])]
    if return_inverse:
        res.append(primitive._make(out[1].astype(np.int64).reshape(input._array.shape)))
    if return_counts:
        res.append(primitive._make(out[-1].astype(np.int64)))
    return tuple(res)
