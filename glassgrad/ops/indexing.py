"""Indexing primitives: ``x[idx]``, ``x[idx] = v``, ``index_put``, ``masked_*``, ``take``, ``select``.

Basic indices (ints, slices, None, Ellipsis) give views; integer or boolean tensors give copies,
exactly as in PyTorch. Backwards scatter into zeros (adding, so repeated indices accumulate).
The gather/scatter/index_* family lives in gather.py and is re-exported here.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from ..autograd import diagnostics, explain, forward_ad
from ..autograd.grad_mode import _state
from ..autograd.graph import _Hooks
from ..autograd.node_names import named_as
from . import _overlap, _view_meta, primitive
from ._convert import checked
from ._forward_errors import broadcast_shapes
from ._names import c_type, scalar_type
from ._util import index_snapshot, is_tensor, mark_view, wrap_dim
from .fill import MaskedFill
from .primitive import Primitive, _check_inplace_leaf, _record, check_view_write


def _norm_index(index):
    """User index -> a NumPy index (tensors to arrays); PyTorch's errors for what it rejects."""
    if not isinstance(index, tuple):
        index = tuple(index) if index.__class__ is list and _list_is_tuple(index) else (index,)
    out = []
    for k in index:
        if is_tensor(k):
            arr = index_snapshot(k._array)  # NOTE [Index snapshots] in _util.py
            if arr.dtype.kind not in "biu":
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors\n"
                    f"glassgrad: got a {list(k.shape)} {k.dtype} index tensor; convert it with "
                    ".long()."
                )
            if arr.dtype == np.uint8:  # NOTE: PyTorch reads uint8 indices as (deprecated) masks
                arr = arr.astype(bool)
            out.append(arr if arr.dtype.kind == "b" or arr.ndim else int(arr))
        elif isinstance(k, slice):
            if k.step is not None and int(k.step) <= 0:
                raise ValueError(
                    "step must be greater than zero\nglassgrad: reverse with "
                    "glassgrad.flip(x, dims) instead of a negative step."
                )
            out.append(k)
        elif isinstance(k, (list, tuple)):
            arr = np.asarray([int(v) if is_tensor(v) else v for v in k])
            out.append(arr if arr.size else arr.astype(np.int64))
        elif isinstance(k, np.ndarray) and k.ndim == 0:
            out.append(k.item())
        else:
            out.append(k)
    return tuple(out)


def _list_is_tuple(index: list) -> bool:
    """PyTorch's (and old NumPy's) rule: a short list holding a tensor, a sequence, a slice,
    Ellipsis or None is a tuple of indices (``x[[[0, 1], [2]]]`` is ``x[[0, 1], [2]]``)."""
    if len(index) >= 32 or not any(
            k is None or k is Ellipsis or isinstance(k, (slice, list, tuple)) or is_tensor(k)
            for k in index):
        return False
    where = diagnostics._user_frame()
    filename, _, line = where.rpartition(":")
    warnings.warn_explicit(  # torch 2.13's words (it still reads the list as a tuple)
        "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
        "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
        "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
        "or a different result", UserWarning, filename or "<unknown>",
        int(line) if line.isdigit() else 0, module="glassgrad")
    return True


def _is_basic(index) -> bool:
    for k in index:
        if not (k is None or k is Ellipsis or isinstance(k, (int, slice, np.integer))):
            return False
    return True


def _describe_index(index) -> str:
    parts = []
    for k in index:
        if isinstance(k, np.ndarray):
            parts.append(f"{'bool' if k.dtype == bool else 'int'} tensor of shape {list(k.shape)}")
        elif k is Ellipsis:
            parts.append("...")
        else:
            parts.append(repr(k))
    return "[" + ", ".join(parts) + "]"


_NP_ERRORS = [
    (
        re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)"),
        lambda m: f"index {m[1]} is out of bounds for dimension {m[2]} with size {m[3]}",
    ),
    (
        re.compile(r"too many indices for array: array is (\d+)-dimensional"),
        lambda m: f"too many indices for tensor of dimension {m[1]}",
    ),
    (
        re.compile(
            r"boolean index did not match indexed array along (?:axis|dimension) (\d+); "
            r"size of (?:axis|dimension) is (\d+) but size of corresponding boolean "
            r"(?:axis|dimension) is (\d+)"
        ),
        lambda m: (
            f"The shape of the mask [{m[3]}] at index {m[1]} does not match the shape of the "
            f"indexed tensor [{m[2]}] at index {m[1]}"
        ),
    ),
    (
        re.compile(
            r"shape mismatch: indexing arrays could not be broadcast together with shapes "
            r"(.*)"
        ),
        lambda m: (
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(_shape_list(s) for s in re.findall(r"\(([^)]*)\)", m[1]))
        ),
    ),
]


def _shape_list(numpy_shape: str) -> str:
    return str([int(v) for v in numpy_shape.split(",") if v.strip()])


def index_error(e, x, idx, what="indexing"):
    """NumPy's IndexError -> PyTorch's phrase, then glassgrad's explanation."""
    msg = str(e)
    for pattern, fmt in _NP_ERRORS:
        m = pattern.search(msg)
        if m:
            msg = fmt(m)
            break
    return IndexError(
        f"{msg}\nglassgrad: {what} a {list(x.shape)} {x.dtype} tensor with {_describe_index(idx)}"
    )


class Index(Primitive):
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py (a basic index: the views below)

    @staticmethod
    def forward(xp, x, *, index, basic, shape):
        return x[index]

    @staticmethod
    def backward(grad, *, index, basic, shape):
        return (IndexBackward.apply(grad, index=index, basic=basic, shape=shape),)


class IndexBackward(Primitive):
    """Scatter ``grad`` into zeros of the indexed tensor's shape (differentiable)."""

    @staticmethod
    def forward(xp, grad, *, index, basic, shape):
        out = xp.zeros(shape, dtype=grad.dtype)
        if basic or all(not isinstance(k, np.ndarray) or k.dtype == np.bool_ for k in index):
            out[index] = grad  # each position at most once: plain assignment
        else:
            xp.add.at(out, index, grad)  # repeated integer indices accumulate
        return out

    @staticmethod
    def backward(grad, *, index, basic, shape):
        return (Index.apply(grad, index=index, basic=basic, shape=shape),)


# NOTE [Node names] in shape.py: a basic index is one Index node named after the last step
# PyTorch takes for it (x[0] SelectBackward0, x[:, :1] SliceBackward0, x[None]
# UnsqueezeBackward0; nothing but ``:``/``...`` AliasBackward0); pieces of split/unbind likewise
class Select(Index):
    node_name = "SelectBackward0"
    frees_attrs = False


class Slice(Index):
    node_name = "SliceBackward0"
    frees_attrs = False


class UnsqueezeIndex(Index):
    node_name = "UnsqueezeBackward0"
    frees_attrs = False


class Alias(Index):
    node_name = "AliasBackward0"
    frees_attrs = False


class SplitPiece(Index):
    node_name = "SplitBackward0"
    frees_attrs = False


class SplitWithSizesPiece(Index):
    node_name = "SplitWithSizesBackward0"
    frees_attrs = False


class UnbindPiece(Index):
    node_name = "UnbindBackward0"
    frees_attrs = False


_FULL = slice(None)


def _basic_cls(index, idx):
    """The Index subclass named as PyTorch's last step for the basic index ``idx``."""
    if type(index) is slice:  # PyTorch slices a lone slice even when it is ``:``
        return Slice
    cls = Alias
    for k in idx:
        if k is None:
            cls = UnsqueezeIndex
        elif type(k) is slice:
            if k != _FULL:
                cls = Slice
        elif k is not Ellipsis:
            cls = Select
    return cls


def view_index(input, idx, cls):
    """``input[idx]`` for a basic NumPy index ending in Ellipsis, recorded as ``cls``: a view."""
    if _state.enabled and input._requires_grad or _Hooks.forward_ad is not None:
        out = cls.apply(input, index=idx, basic=True, shape=input._array.shape)
    else:
        out = primitive._make(input._array[idx])
    return mark_view(out, input, lambda b: view_index(b, idx, cls))


def getitem(input, index):
    """``input[index]`` (``torch.Tensor.__getitem__``): views for ints, slices, None and
    Ellipsis; copies for integer/bool tensors and lists. IndexError with PyTorch's wording for
    out-of-range or malformed indices; ValueError for negative steps."""
    idx = _norm_index(index)
    basic = _is_basic(idx)
    if basic and not any(k is Ellipsis for k in idx):
        idx += (Ellipsis,)  # NOTE: so that x[1, 2] is a 0-d view, not a NumPy scalar copy
    shape = input._array.shape
    try:
        # NOTE: advanced indices go through the primitive even without grad, so that inside vmap
        # a batched index into a plain tensor batches (func/_batched_rules.py)
        if not basic:
            out = Index.apply(input, index=idx, basic=basic, shape=shape)
        elif _state.enabled and input._requires_grad or _Hooks.forward_ad is not None:
            out = _basic_cls(index, idx).apply(input, index=idx, basic=basic, shape=shape)
        else:
            out = primitive._make(input._array[idx])
    except IndexError as e:
        raise index_error(e, input, idx) from None
    if basic:
        return mark_view(out, input, lambda b: getitem(b, idx))
    return out


class IndexPut(Primitive):
    """``x[index] = value`` out of place; ``setitem`` records it after writing in place."""

    node_name = "IndexPutBackward0"
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, value, *, index, accumulate):
        out = x.copy()
        if accumulate:
            xp.add.at(out, index, value)
        else:
            out[index] = value
        return out

    @staticmethod
    def backward(grad, *, index, accumulate):
        grad_x = grad
        if not accumulate:
            zeros = primitive._make(np.zeros((), dtype=grad._array.dtype))
            grad_x = IndexPut.apply(grad, zeros, index=index, accumulate=False)
        return grad_x, Index.apply(
            grad, index=index, basic=_is_basic(index), shape=grad._array.shape
        )


def _value_tensor(value, like, op):
    if is_tensor(value):
        return value if value._array.dtype == like._array.dtype else value.to(like.dtype)
    if isinstance(value, (int, float, np.number)):  # NOTE [Number conversion] in _convert.py
        return primitive._make(np.asarray(checked(value, like._array.dtype, op)))
    return primitive._make(np.asarray(value, dtype=like._array.dtype))


def _broadcast_error(value_shape, target_shape, x, idx):
    vs, ts = list(value_shape), list(target_shape)
    lead = len(ts) - len(vs)
    for i, s in enumerate(vs):
        t = ts[i + lead] if i + lead >= 0 else None
        if s != 1 and s != t:
            return RuntimeError(
                f"The expanded size of the tensor ({t}) must match the existing size ({s}) at "
                f"non-singleton dimension {i + lead}.  Target sizes: {ts}.  Tensor sizes: {vs}\n"
                f"glassgrad: setting {_describe_index(idx)} of a {list(x.shape)} tensor (a "
                f"{ts} region) to a value of shape {vs}."
            )
    return RuntimeError(
        f"shape mismatch: value tensor of shape {vs} cannot be broadcast to "
        f"indexing result of shape {ts}"
    )


def setitem(input, index, value) -> None:
    """``input[index] = value`` in place (``torch.Tensor.__setitem__``); ``value`` broadcasts and
    is converted to input's dtype; recorded for autograd (gradients reach ``value`` too)."""
    idx = _norm_index(index)
    v = _value_tensor(value, input, "setitem")
    if v._array.ndim and v._array.shape[0] == 1:
        v = _strip_leading_ones(v, input._array, idx)
    recording = _state.enabled and (input._requires_grad or v._requires_grad)
    if recording:
        try:  # PyTorch reports a bad index before the in-place rule of a leaf
            np.broadcast_to(np.bool_(False), input._array.shape)[idx]
        except IndexError as e:
            raise index_error(e, input, idx, "setting items of") from None
        except Exception:  # noqa: BLE001 - e.g. vmap's batched index; the write below decides
            pass
        if primitive.CREATION_META and _is_basic(idx):  # NOTE [View creation] in _view_meta.py
            _view_meta.check(input, _basic_cls(index, idx))
        _check_inplace_leaf(input)
    else:
        check_view_write(input)
    arr = input._array
    if not arr.flags.writeable:  # NOTE [Expanded writes] in _overlap.py
        arr = _writable(arr, idx, v)
    if len(input._vc) > 1:  # NOTE [Diagnostics]: saved for backward, or a .data tensor
        explain.note_write(input, "index_put")
    try:
        arr[idx] = v._array
    except IndexError as e:
        raise index_error(e, input, idx, "setting items of") from None
    except (ValueError, TypeError):  # TypeError: ml_dtypes' bfloat16 ("expected number")
        target = np.empty(arr.shape, dtype=np.bool_)[idx].shape
        raise _broadcast_error(v._array.shape, target, input, idx) from None
    input._vc[0] += 1
    if _Hooks.forward_ad is not None:  # NOTE [Forward AD] in autograd/forward_ad.py
        forward_ad.setitem_tangent(input, idx, v)
    if recording:
        # NOTE: written in place above (no copy of the whole tensor); the node is what
        # IndexPut.apply_inplace would record: IndexPut saves nothing, so no snapshot is needed
        _record(IndexPut, input, (input, v), {"index": idx, "accumulate": False})
        input._rebase_history()


def _writable(arr, idx, value):
    """``arr`` (read-only) made writable for ``arr[idx] = value``: a basic index writes a view,
    refused when that view repeats an element; an advanced one is PyTorch's deprecated
    ``index_put_`` (``masked_fill_`` for a lone mask and a number) on an expanded tensor."""
    if _is_basic(idx):
        out = _overlap.writable(arr, "setitem", arr[idx])
    else:
        mask = len(idx) == 1 and getattr(idx[0], "dtype", None) == np.bool_ and not value.ndim
        out = _overlap.writable(arr, "maskedfill_index" if mask else "index_put_")
    if out is None:
        raise RuntimeError("glassgrad: setting items of a read-only tensor")
    return out


def _strip_leading_ones(v, arr, idx):
    """``v`` without its leading size-1 dims beyond the indexed result's, as PyTorch drops them
    (``x[0] = y`` with y of shape (1,)); NumPy refuses some such writes, ml_dtypes' bfloat16 all,
    and IndexPut's backward could not give y a gradient of its own shape."""
    try:
        nd = np.broadcast_to(np.bool_(False), arr.shape)[idx].ndim
    except Exception:  # noqa: BLE001 - a bad index, or vmap's batched one: the write decides
        return v
    k = 0
    while v._array.ndim - k > nd and v._array.shape[k] == 1:
        k += 1
    return v.reshape(v._array.shape[k:]) if k else v


def index_put(input, indices, values, accumulate: bool = False):
    """Out-of-place ``input[indices] = values`` (adding when ``accumulate``) (``torch.index_put``);
    ``indices`` is a tuple of index tensors; ``values`` must have input's dtype."""
    if is_tensor(values) and values._array.dtype != input._array.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{scalar_type(input.dtype)} for the destination and "
            f"{scalar_type(values.dtype)} for the source."
        )
    idx = _norm_index(tuple(indices))
    v = _value_tensor(values, input, "index_put")
    try:
        return IndexPut.apply(input, v, index=idx, accumulate=accumulate)
    except IndexError as e:
        raise index_error(e, input, idx, "index_put into") from None


class MaskedFillScalar(Primitive):
    """``x`` with the number ``value`` (a 0-d array of x's dtype) where ``mask`` is True."""

    node_name = "MaskedFillBackward0"
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, *, mask, value):
        return xp.where(mask, value, x)

    @staticmethod
    def backward(grad, *, mask, value):
        from .shape import where_mask

        return (where_mask(mask, grad),)


class MaskedFillTensor(MaskedFill):  # a 0-d Tensor value, which gets a gradient
    node_name = "MaskedFillBackward1"


def masked_fill(input, mask, value):
    """``value`` where ``mask`` is True, ``input`` elsewhere (``torch.masked_fill``); ``mask`` is
    bool and broadcasts; ``value`` is a number or a 0-d tensor (which then gets a gradient)."""
    m = index_snapshot(mask._array) if is_tensor(mask) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{c_type(m.dtype)}\nglassgrad: convert the mask with "
            ".bool() (or build it with a comparison)."
        )
    if is_tensor(value) and value._array.ndim:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._array.ndim} dimension(s)."
        )
    try:
        np.broadcast_shapes(m.shape, input._array.shape)
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({list(input.shape)}) must match the size of tensor b "
            f"({list(m.shape)}) at non-singleton dimension\nglassgrad: masked_fill of a "
            f"{list(input.shape)} tensor with a {list(m.shape)} mask that does not broadcast."
        ) from None
    if is_tensor(value):
        return MaskedFillTensor.apply(input, _value_tensor(value, input, "masked_fill"), mask=m)
    return MaskedFillScalar.apply(input, mask=m, value=checked(value, input._array.dtype))


def masked_select(input, mask):
    """The elements of ``input`` where the bool ``mask`` is True, as a 1-D copy; both broadcast
    (``torch.masked_select``)."""
    from .shape import expand

    m = index_snapshot(mask._array) if is_tensor(mask) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(
            "masked_select: expected BoolTensor for mask\n"
            f"glassgrad: got a {list(m.shape)} {m.dtype} mask; convert it with .bool()."
        )
    shape = broadcast_shapes("masked_select", input._array.shape, m.shape)
    x = expand(input, shape) if input._array.shape != shape else input
    return named_as(getitem(x, primitive._make(np.broadcast_to(m, shape))), "MaskedSelectBackward0",
                    input)


def masked_scatter(input, mask, source):
    """Copy consecutive elements of ``source`` into ``input`` where ``mask`` is True
    (``torch.masked_scatter``); ``mask`` broadcasts to input's shape."""
    from .shape import expand, narrow, reshape

    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_type(mask.dtype)}")
    if source._array.dtype != input._array.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{scalar_type(input.dtype)} and {scalar_type(source.dtype)}")
    shape = broadcast_shapes("masked_scatter", input._array.shape, mask._array.shape)
    if input._array.shape != shape:  # NOTE: out of place, input broadcasts too (as in PyTorch)
        input = expand(input, shape)
    m = np.broadcast_to(mask._array, shape)
    count = int(m.sum())
    if source._array.size < count:
        raise RuntimeError(
            "masked_scatter: expected source to have at least as many elements as "
            f"ones in mask ({count}), got {source._array.size}"
        )
    values = narrow(reshape(source, -1), 0, 0, count)
    out = IndexPut.apply(
        input, _value_tensor(values, input, "masked_scatter"), index=(m,), accumulate=False
    )
    return named_as(out, "MaskedScatterBackward0", input)


def take(input, index):
    """Elements of the flattened input at ``index`` (any shape; negative counts from the end)
    (``torch.take``); IndexError when out of range."""
    from .shape import reshape

    idx = index._array
    n = input._array.size
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype}\n"
                           "glassgrad: convert the index with .long().")
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = int(idx.max() if idx.max() >= n else idx.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return named_as(getitem(reshape(input, -1), index), "TakeBackward0", input)


def select(input, dim: int, index: int):
    """The slice at ``index`` of ``dim``, that dim removed (``torch.select``): a view."""
    nd = input._array.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, nd, "select")
    size = input._array.shape[d]
    if not -size <= int(index) < size:
        raise IndexError(
            f"select(): index {int(index)} out of range for tensor of size {list(input.shape)} at "
            f"dimension {d}"
        )
    return getitem(input, (slice(None),) * d + (int(index),))


def nonzero(input, *, as_tuple: bool = False):
    """Indices of nonzero elements (``torch.nonzero``): an (n, ndim) int64 tensor, or a tuple of
    n-element index tensors with ``as_tuple``. No gradient."""
    arr = input._array if input._array.ndim else input._array.reshape(1)
    nz = np.nonzero(arr)
    if as_tuple:
        return tuple(primitive._make(a.astype(np.int64)) for a in nz)
    out = np.stack(nz, axis=1).astype(np.int64)
    return primitive._make(out if input._array.ndim else out[:, :0])


argwhere = nonzero

from .gather import (  # noqa: F401 - re-exported, see the module docstring
    Gather,
    Scatter,
    ScatterAdd,
    gather,
    index_add,
    index_copy,
    index_fill,
    index_select,
    scatter,
    scatter_add,
    take_along_dim,
)
