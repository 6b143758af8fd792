"""Comparisons, logical ops, sorting and searching (``torch.eq``, ``sort``, ``topk``, ``unique``...).

Elementwise comparisons and logical/bitwise ops return bool (or integer) tensors with no gradient.
``sort``/``topk``/``kthvalue`` return values (a ``gather``, so differentiable) and int64 indices.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import dtypes
from .autograd.node_names import named_as
from .ops import complex_ops as _cx
from .ops import primitive
from .ops._convert import wrapped
from .ops._names import scalar_type
from .ops._util import _no_uint64, is_tensor, wrap_dim

_Sort = namedtuple("sort", ["values", "indices"])
_TopK = namedtuple("topk", ["values", "indices"])
_KthValue = namedtuple("kthvalue", ["values", "indices"])


def _arr(x):
    return x._array if is_tensor(x) else x


def _size_error(a, b, name):
    sa, sb = list(np.shape(a)), list(np.shape(b))
    n = max(len(sa), len(sb))
    pa, pb = [1] * (n - len(sa)) + sa, [1] * (n - len(sb)) + sb
    dim = next(i for i in range(n - 1, -1, -1) if pa[i] != pb[i] and 1 not in (pa[i], pb[i]))
    return RuntimeError(
        f"The size of tensor a ({pa[dim]}) must match the size of tensor b ({pb[dim]}) at "
        f"non-singleton dimension {dim}\nglassgrad: {name} of shapes {sa} and {sb}, which do not "
        "broadcast."
    )


def _dtype_name(x) -> str:
    return scalar_type(x.dtype) if is_tensor(x) else type(x).__name__


def _common(input, other, name, integer_only):
    """Both operands as arrays of PyTorch's result dtype (a 0-d tensor or a number counts like a
    scalar: ``uint8_tensor & int64_0d`` is uint8); a Python int wraps into it (NOTE [Number
    conversion] in ops/_convert.py)."""
    rd = dtypes.result_type(input, other)
    if is_tensor(input) != is_tensor(other):
        _no_uint64(rd, *((input, other) if is_tensor(input) else (other, input)))
    if integer_only and (rd._kind >= 2 or integer_only == "shift" and rd._kind == 0):
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{scalar_type(rd)}'\nglassgrad: {name} needs "
            f"integer{' or bool' if integer_only is True else ''} tensors."
        )
    return _as(input, rd.np), _as(other, rd.np)


def _as(x, np_dtype):
    if not is_tensor(x):
        return wrapped(x, np_dtype)
    arr = x._array
    if arr.dtype == np_dtype or not isinstance(arr, np.ndarray):  # (a vmap batched array as is)
        return arr
    return arr.astype(np_dtype)


def _elementwise(np_fn, name, integer_only=False, tensors_only=False, ordered=False):
    def fn(input, other):
        if ordered:  # complex numbers have no order (torch's NotImplementedError)
            _cx.refuse_complex(input, f"{name}_cpu")
            _cx.refuse_complex(other, f"{name}_cpu")
        if tensors_only and not is_tensor(other):
            raise TypeError(
                f"{name}(): argument 'other' (position 2) must be Tensor, not "
                f"{type(other).__name__}"
            )
        a, b = _arr(input), _arr(other)
        # NOTE: one dtype, or a float tensor and a Python number: NumPy's result is PyTorch's
        same = is_tensor(input) and is_tensor(other) and a.dtype == b.dtype
        float_number = (not integer_only and is_tensor(input) and a.dtype.kind == "f"
                        and other.__class__ in (int, float))
        if integer_only == "shift" or not (same or float_number):
            a, b = _common(input, other, name, integer_only)
        elif integer_only and a.dtype.kind not in "biu":
            _common(input, other, name, integer_only)  # raises PyTorch's NotImplementedError
        try:
            out = np_fn(a, b)
        except ValueError:
            raise _size_error(a, b, name) from None
        return primitive._make(out)  # NOTE: no np.asarray: a vmap batched array stays one

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Elementwise ``{name}`` with broadcasting (``torch.{name}``); "
        f"{'integer' if integer_only else 'bool'} result, no gradient."
    )
    return fn


eq = _elementwise(np.equal, "eq")
ne = _elementwise(np.not_equal, "ne")
lt = _elementwise(np.less, "lt", ordered=True)
le = _elementwise(np.less_equal, "le", ordered=True)
gt = _elementwise(np.greater, "gt", ordered=True)
ge = _elementwise(np.greater_equal, "ge", ordered=True)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
logical_and = _elementwise(np.logical_and, "logical_and", tensors_only=True)
logical_or = _elementwise(np.logical_or, "logical_or", tensors_only=True)
logical_xor = _elementwise(np.logical_xor, "logical_xor", tensors_only=True)
bitwise_and = _elementwise(np.bitwise_and, "bitwise_and", integer_only=True)
bitwise_or = _elementwise(np.bitwise_or, "bitwise_or", integer_only=True)
bitwise_xor = _elementwise(np.bitwise_xor, "bitwise_xor", integer_only=True)


def _shift(left):
    def shift(a, b):
        # PyTorch: a shift by a negative amount or by the width or more gives 0 (-1 for a
        # negative number shifted right); NumPy leaves it to the C compiler
        ok = (b >= 0) & (b < 8 * a.dtype.itemsize)
        s = np.where(ok, b, 0).astype(a.dtype)
        out = np.left_shift(a, s) if left else np.right_shift(a, s)
        return np.where(ok, out, 0 if left else np.where(a < 0, -1, 0)).astype(a.dtype)

    return shift


bitwise_left_shift = _elementwise(_shift(True), "lshift", integer_only="shift")
bitwise_right_shift = _elementwise(_shift(False), "rshift", integer_only="shift")
bitwise_left_shift.__name__ = bitwise_left_shift.__qualname__ = "bitwise_left_shift"
bitwise_right_shift.__name__ = bitwise_right_shift.__qualname__ = "bitwise_right_shift"


def _unary(np_fn, name, doc, integer_only=False):
    def fn(input):
        if name == "signbit" and input._array.dtype.kind == "c":
            raise NotImplementedError("signbit is not implemented for complex tensors.")
        if integer_only and input._array.dtype.kind not in "biu":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype_name(input)}'")
        return primitive._make(np_fn(input._array))  # NOTE: see _elementwise

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{doc} (``torch.{name}``); no gradient."
    return fn


logical_not = _unary(np.logical_not, "logical_not", "Elementwise NOT of truth values; bool")
bitwise_not = _unary(
    np.invert, "bitwise_not", "Elementwise bit inversion (NOT for bool)", integer_only=True
)
isnan = _unary(np.isnan, "isnan", "True where NaN")
isinf = _unary(np.isinf, "isinf", "True where +-inf")
isfinite = _unary(np.isfinite, "isfinite", "True where neither inf nor NaN")
isposinf = _unary(np.isposinf, "isposinf", "True where +inf")
isneginf = _unary(np.isneginf, "isneginf", "True where -inf")
signbit = _unary(np.signbit, "signbit", "True where the sign bit is set (also -0.0)")


def invert(input):
    """``~input`` (``torch.Tensor.__invert__``): bitwise NOT; TypeError for floating tensors."""
    if input._array.dtype.kind not in "biu":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type "
            f"tensors\nglassgrad: got a {input.dtype} tensor; for a mask use "
            "logical_not()."
        )
    return primitive._make(np.invert(input._array))  # NOTE: see _elementwise


def isreal(input):
    """All True for real dtypes, ``imag == 0`` for complex ones (``torch.isreal``)."""
    if input._array.dtype.kind == "c":
        return primitive._make(np.asarray(input._array.imag == 0))
    return primitive._make(np.ones(input._array.shape, dtype=np.bool_))


def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements (``torch.equal``)."""
    return input._array.shape == other._array.shape and bool(np.all(input._array == other._array))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """``all(|input - other| <= atol + rtol * |other|)`` (``torch.allclose``)."""
    return bool(np.allclose(input._array, _arr(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (``torch.isclose``); bool."""
    return primitive._make(  # NOTE: no np.asarray (see _elementwise)
        np.isclose(input._array, _arr(other), rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of ``elements`` is in ``test_elements`` (``torch.isin``)."""
    return primitive._make(np.asarray(np.isin(_arr(elements), _arr(test_elements), invert=invert)))


def count_nonzero(input, dim=None):
    """Number of nonzero elements over ``dim`` (all when None) (``torch.count_nonzero``); int64."""
    axis = None if dim is None else (tuple(dim) if isinstance(dim, (tuple, list)) else dim)
    count = np.count_nonzero(input._array, axis=axis)  # NOTE: no np.asarray (see _elementwise)
    return primitive._make(count.astype(np.int64) if hasattr(count, "astype") else
                           np.asarray(count, dtype=np.int64))


def _argsort(arr, dim, descending):
    """Stable sort order along ``dim``; NaN counts as the largest value, as in PyTorch."""
    if not descending:
        return np.argsort(arr, axis=dim, kind="stable")
    if arr.dtype.kind == "f":
        moved = np.moveaxis(arr, dim, -1)
        order = np.lexsort((-moved, ~np.isnan(moved)), axis=-1)
        return np.moveaxis(order, -1, dim)
    wide = arr.astype(np.int64) if arr.dtype.kind in "bu" else arr
    return np.argsort(-wide, axis=dim, kind="stable")


def sort(input, dim: int = -1, descending: bool = False, *, stable: bool = False):
    """Sorted values and their int64 indices along ``dim`` (``torch.sort``); stable (ties keep
    their order); NaN sorts as the largest value. Values are differentiable."""
    from .ops.gather import SortValues

    nd = input._array.ndim
    d = wrap_dim(dim, nd, "sort")
    if nd == 0:
        return _Sort(input.clone(), primitive._make(np.zeros((), np.int64)))
    idx = primitive._make(_argsort(input._array, d, descending).astype(np.int64, copy=False))
    # gather under PyTorch's node name (SortBackward0)
    values = SortValues.apply(input, dim=d, index=idx._array, shape=input._array.shape)
    return _Sort(values, idx)


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """The int64 indices that sort ``input`` along ``dim`` (``torch.argsort``)."""
    return sort(input, dim, descending, stable=stable).indices


def msort(input):
    """Values sorted along dim 0 (``torch.msort``)."""
    return sort(input, 0).values


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The ``k`` largest (or smallest) values along ``dim`` with their int64 indices
    (``torch.topk``); RuntimeError when ``k`` exceeds the dim's size."""
    from .ops.gather import TopkValues
    from .ops.shape import narrow

    d = wrap_dim(dim, input._array.ndim, "topk")
    size = input._array.shape[d] if input._array.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(
            f"selected index k out of range\nglassgrad: topk(k={k}) along dim {d} of size {size}."
        )
    if input._array.ndim == 0:
        return _TopK(input.clone(), primitive._make(np.zeros((), np.int64)))
    if input._array.dtype.kind == "c":  # (before sort(), which would name itself)
        TopkValues.forward(np, input._array)
    idx = narrow(sort(input, d, descending=largest).indices, d, 0, k)
    # gather under PyTorch's node name (TopkBackward0)
    values = TopkValues.apply(input, dim=d, index=idx._array, shape=input._array.shape)
    return _TopK(values, idx)


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):
    """The ``k``-th smallest value (1-based) along ``dim`` and its index (``torch.kthvalue``)."""
    from .ops.indexing import gather
    from .ops.shape import narrow, squeeze

    d = wrap_dim(dim, input._array.ndim, "kthvalue")
    size = input._array.shape[d] if input._array.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input._array.ndim == 0:
        return _KthValue(input.clone(), primitive._make(np.zeros((), np.int64)))
    idx = narrow(sort(input, d).indices, d, k - 1, 1)
    values = gather(input, d, idx)
    if not keepdim:
        values, idx = squeeze(values, d), squeeze(idx, d)
    return _KthValue(named_as(values, "KthvalueBackward0", input), idx.clone())


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The sorted distinct elements (or slices along ``dim``) (``torch.unique``), with the int64
    inverse indices and counts on request. No gradient."""
    _cx.refuse_complex(input, "unique")
    arr = input._array
    axis = None if dim is None else wrap_dim(dim, arr.ndim, "unique")
    out = np.unique(arr, return_inverse=True, return_counts=True, axis=axis)
    values, inverse, counts = out
    res = [primitive._make(values)]
    if return_inverse:
        shape = arr.shape if axis is None else (arr.shape[axis],)
        res.append(primitive._make(inverse.astype(np.int64).reshape(shape)))
    if return_counts:
        res.append(primitive._make(counts.astype(np.int64)))
    return res[0] if len(res) == 1 else tuple(res)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (of the flattened input) (``torch.
    unique_consecutive``); ``dim`` is not supported."""
    if dim is not None:
        raise NotImplementedError("glassgrad: unique_consecutive(dim=...) is not supported")
    flat = input._array.reshape(-1)
    starts = np.ones(flat.shape, dtype=bool)
    starts[1:] = flat[1:] != flat[:-1]
    res = [primitive._make(flat[starts])]
    if return_inverse:
        res.append(
            primitive._make((np.cumsum(starts) - 1).astype(np.int64).reshape(input._array.shape))
        )
    if return_counts:
        pos = np.flatnonzero(starts)
        res.append(primitive._make(np.diff(np.append(pos, flat.size)).astype(np.int64)))
    return res[0] if len(res) == 1 else tuple(res)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Insertion indices of ``input`` into the innermost dim of ``sorted_sequence``
    (``torch.searchsorted``); leading dims of both must match. int64 (int32 with ``out_int32``)."""
    side = side or ("right" if right else "left")
    seq = sorted_sequence._array
    values = _arr(input)
    values = np.asarray(values)
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._array, axis=-1)
    if seq.ndim <= 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        if seq.shape[:-1] != values.shape[:-1]:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                "dimensions of boundaries tensor and input value tensor must match, but we got "
                f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}"
            )
        rows_s = seq.reshape(-1, seq.shape[-1])
        rows_v = values.reshape(-1, values.shape[-1])
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(rows_s, rows_v)])
        out = out.reshape(values.shape)
    return primitive._make(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element given 1-D sorted ``boundaries`` (``torch.bucketize``):
    ``boundaries[i-1] < x <= boundaries[i]`` (``<=``/``<`` swapped with ``right``). int64."""
    if boundaries._array.ndim != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries._array.ndim})"
        )
    out = np.searchsorted(boundaries._array, _arr(input), side="right" if right else "left")
    return primitive._make(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))
