"""Gather/scatter family: ``gather``, ``scatter``, ``scatter_add``, ``take_along_dim``,
``index_select``, ``index_add``, ``index_fill``, ``index_copy``. Index tensors are attributes (no
gradient); ``Gather`` and ``ScatterAdd`` are each other's backward."""

from __future__ import annotations

import numpy as np

from ..autograd.node_names import named_as
from . import primitive
from ._convert import checked
from ._forward_errors import broadcast_shapes
from ._names import scalar_type
from ._util import half, index_snapshot, is_tensor, widened, wrap_dim
from .indexing import IndexBackward, IndexPut, _value_tensor, getitem
from .primitive import Primitive, keep_attrs


def _within(index, dim):
    """The slices that cut an input down to ``index``'s extent in every dim but ``dim``."""
    return tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(index.shape))


class Gather(Primitive):
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, *, dim, index, shape):
        if index.shape != x.shape:
            x = x[_within(index, dim)]
        return xp.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(grad, *, dim, index, shape):
        zeros = primitive._make(np.zeros(shape, dtype=grad._array.dtype))
        return (ScatterAdd.apply(zeros, grad, dim=dim, index=index, src_shape=index.shape),)


class SortValues(Gather):  # sort()/topk() values: Gather under PyTorch's node names
    node_name = "SortBackward0"  # (NOTE [Node names] in shape.py)


class TopkValues(Gather):
    node_name = "TopkBackward0"


def _full_index(index, dim):
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _pad_to(grad_src, index, src_shape):
    """A gradient of ``index``'s shape, zero-padded to a larger ``src`` (PyTorch raises here)."""
    if tuple(index.shape) == tuple(src_shape):
        return grad_src
    block = tuple(slice(0, s) for s in index.shape)
    return IndexBackward.apply(grad_src, index=block, basic=True, shape=src_shape)


class ScatterAdd(Primitive):
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, src, *, dim, index, src_shape):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py (index_add stays 16-bit)
            return widened(ScatterAdd.forward, xp, x, src, dim=dim, index=index,
                           src_shape=src_shape)
        out = x.copy()
        xp.add.at(out, _full_index(index, dim), src[tuple(slice(0, s) for s in index.shape)])
        return out

    @staticmethod
    def backward(grad, *, dim, index, src_shape):
        grad_src = Gather.apply(grad, dim=dim, index=index, shape=grad._array.shape)
        return grad, _pad_to(grad_src, index, src_shape)


class Scatter(Primitive):
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, src, *, dim, index, src_shape):
        out = x.copy()
        out[_full_index(index, dim)] = src[tuple(slice(0, s) for s in index.shape)]
        return out

    @staticmethod
    def backward(grad, *, dim, index, src_shape):
        zeros = primitive._make(np.zeros(index.shape, dtype=grad._array.dtype))
        grad_x = Scatter.apply(grad, zeros, dim=dim, index=index, src_shape=index.shape)
        grad_src = Gather.apply(grad, dim=dim, index=index, shape=grad._array.shape)
        return grad_x, _pad_to(grad_src, index, src_shape)


def _index_array(index, op, kinds="int32/int64"):
    if not is_tensor(index) or index._array.dtype not in (np.int64, np.int32):
        got = index.dtype if is_tensor(index) else type(index).__name__
        raise RuntimeError(
            f"{op}(): Expected dtype {kinds} for index\n"
            f"glassgrad: got {got}; convert the index with .long()."
        )
    # NOTE [Index snapshots] in _util.py: a node may keep the index
    return index_snapshot(index._array).astype(np.int64, copy=False)


def _check_scatter_index(x, d, idx, op, src=None):
    nd = max(x._array.ndim, 1)
    if max(idx.ndim, 1) != nd:
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as input tensor\n"
            f"glassgrad: {op} of a {list(x.shape)} input with a {list(idx.shape)} index."
        )
    if src is not None and max(src._array.ndim, 1) != max(idx.ndim, 1):
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as src tensor\n"
            f"glassgrad: {op} with a {list(idx.shape)} index and a {list(src.shape)} src."
        )
    for k, s in enumerate(idx.shape):
        if k != d and s > x._array.shape[k]:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(idx.shape)} to be "
                f"smaller than self {list(x.shape)} apart from dimension {d}"
            )
        if src is not None and s > (src._array.shape[k] if src._array.ndim else 1):
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(idx.shape)} to be "
                f"smaller than src {list(src.shape)}"
            )
    size = x._array.shape[d] if x._array.ndim else 1
    if idx.size and (idx.max() >= size or idx.min() < 0):
        bad = int(idx.max() if idx.max() >= size else idx.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")


def gather(input, dim: int, index, *, sparse_grad: bool = False):
    """``out[i][j] = input[i][index[i][j]]`` along ``dim`` (``torch.gather``); ``index`` is an
    int64/int32 tensor with input's number of dims, no larger than input outside ``dim``."""
    idx = _index_array(index, "gather")
    d = wrap_dim(dim, input._array.ndim, "gather")
    _check_scatter_index(input, d, idx, "gather")
    if input._array.ndim == 0:
        from .shape import reshape

        out = Gather.apply(reshape(input, 1), dim=0, index=idx.reshape(-1), shape=(1,))
        return reshape(out, idx.shape)
    return Gather.apply(input, dim=d, index=idx, shape=input._array.shape)


def take_along_dim(input, indices, dim=None):
    """``gather`` with input and indices broadcast against each other outside ``dim``; the
    flattened input when ``dim`` is None (``torch.take_along_dim``)."""
    from .shape import expand, reshape

    if dim is None:
        return gather(reshape(input, -1), 0, reshape(indices, -1))
    if input._array.ndim != indices._array.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input._array.ndim} dimensions for input, and "
            f"{indices._array.ndim} dimensions for indices"
        )
    d = wrap_dim(dim, input._array.ndim, "take_along_dim")
    xs, ks = list(input._array.shape), list(indices._array.shape)
    xs[d] = ks[d] = 1
    common = list(broadcast_shapes("take_along_dim", tuple(xs), tuple(ks)))
    x_shape, k_shape = list(common), list(common)
    x_shape[d], k_shape[d] = input._array.shape[d], indices._array.shape[d]
    x = expand(input, tuple(x_shape)) if tuple(x_shape) != input._array.shape else input
    k = np.ascontiguousarray(expand(indices, tuple(k_shape))._array)
    size = x._array.shape[d]
    if k.size and k.min() < 0 and k.min() >= -size:  # PyTorch counts -1 from the end here
        k = np.where(k < 0, k + size, k)
    return gather(x, d, primitive._make(k))


def _same_dtype(input, src):
    if is_tensor(src) and src._array.dtype != input._array.dtype:  # PyTorch converts no src
        raise RuntimeError(
            f"scatter(): Expected self.dtype to be equal to src.dtype\nglassgrad: a "
            f"{src.dtype} src into a {input.dtype} tensor; convert it with .to(x.dtype).")


def scatter_add(input, dim: int, index, src):
    """Add ``src`` into a copy of ``input`` at ``index`` along ``dim``; repeated indices add up
    (``torch.scatter_add``)."""
    idx = _index_array(index, "scatter_add")
    d = wrap_dim(dim, input._array.ndim, "scatter_add")
    _check_scatter_index(input, d, idx, "scatter_add", src)
    _same_dtype(input, src)
    src = _value_tensor(src, input, "scatter_add")
    out = ScatterAdd.apply(input, src, dim=d, index=idx, src_shape=src._array.shape)
    return out if src._requires_grad else keep_attrs(out)  # NOTE [Freed attributes]


def scatter(input, dim: int, index, src=None, value=None, *, reduce=None):
    """Write ``src`` (or the number ``value``) into a copy of ``input`` at ``index`` along ``dim``
    (``torch.scatter``); ``reduce='add'`` adds instead. Repeated indices keep one write."""
    if reduce == "add":
        if src is None:
            src = primitive._make(np.full(index.shape, checked(value, input._array.dtype)))
        return scatter_add(input, dim, index, src)
    if reduce is not None:
        raise NotImplementedError(
            f"glassgrad: scatter(reduce={reduce!r}) is not supported; use reduce='add'"
        )
    idx = _index_array(index, "scatter")
    d = wrap_dim(dim, input._array.ndim, "scatter")
    if src is None:
        src = value
    _same_dtype(input, src)
    by_value = not is_tensor(src)
    if by_value:
        src = primitive._make(np.full(idx.shape, checked(src, input._array.dtype)))
    _check_scatter_index(input, d, idx, "scatter", src)
    src = _value_tensor(src, input, "scatter")
    out = Scatter.apply(input, src, dim=d, index=idx, src_shape=src._array.shape)
    return named_as(out, "ScatterBackward1", input) if by_value else out  # torch's overload


def _vector_index(index, op):
    idx = _index_array(index, op, "int32 or int64") if is_tensor(index) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    return idx.reshape(-1)


def index_select(input, dim: int, index):
    """Slices of ``input`` along ``dim`` at the 1-D int ``index`` (``torch.index_select``); a copy."""
    d = wrap_dim(dim, input._array.ndim, "index_select")
    idx = _vector_index(index, "index_select")
    size = input._array.shape[d] if input._array.ndim else 1
    if input._array.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    if idx.size and not size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if idx.size and (idx.max() >= size or idx.min() < 0):
        bad = int(idx.max() if idx.max() >= size else idx.min())
        if d:  # PyTorch's kernel for an inner dim words it so
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}"
                               f"\nglassgrad: index_select of dim {d} (size {size}) with index "
                               f"{bad}; indices must be in [0, {size}).")
        raise IndexError(
            f"index out of range in self\nglassgrad: index_select of dim {d} (size {size}) with "
            f"index {bad}; indices must be in [0, {size}) (no counting from the end)."
        )
    return named_as(getitem(input, (slice(None),) * d + (idx,)), "IndexSelectBackward0", input)


def _index_along(input, dim, index, source, op):
    d = wrap_dim(dim, input._array.ndim, op)
    idx = _vector_index(index, op)
    size = input._array.shape[d] if input._array.ndim else 1
    low = -size if op == "index_fill" else 0  # NOTE: only index_fill counts -1 from the end
    if idx.size and (idx.max() >= size or idx.min() < low):
        bad = int(idx.max() if idx.max() >= size else idx.min())
        # PyTorch's own types: RuntimeError for index_add, IndexError (named) for index_copy
        error, name = (RuntimeError, "") if op == "index_add" else (IndexError, f"{op}_(): ")
        if op == "index_fill":
            name = ""
        raise error(f"{name}index {bad} is out of bounds for dimension {d} with size {size}\n"
                    f"glassgrad: {op} into a {list(input.shape)} tensor; indices must be in "
                    f"[{low}, {size}).")
    if source is not None and is_tensor(source):
        if source._array.dtype != input._array.dtype and op == "index_copy":
            raise RuntimeError(
                "index_copy_(): self and source expected to have the same dtype, but got (self) "
                f"{scalar_type(input.dtype)} and (source) {scalar_type(source.dtype)}")
        if source._array.dtype != input._array.dtype:
            raise RuntimeError(
                f"{op}_(): self ({scalar_type(input.dtype)}) and source "
                f"({scalar_type(source.dtype)}) must have the same scalar type"
            )
        n = source._array.shape[d] if source._array.ndim else 1
        if source._array.ndim and n != idx.size:
            raise RuntimeError(
                f"{op}_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                f"({n}), for dim: {d}"
            )
    return (slice(None),) * d + (idx,)


def index_add(input, dim: int, index, source, *, alpha=1):
    """Add ``alpha * source`` into a copy of ``input`` at ``index`` along ``dim``; repeated
    indices add up (``torch.index_add``)."""
    where = _index_along(input, dim, index, source, "index_add")
    if alpha != 1 and not is_tensor(source):
        raise TypeError(f"index_add(): argument 'source' (position 4) must be Tensor, not "
                        f"{type(source).__name__}")
    src = source if alpha == 1 else source * alpha
    out = named_as(IndexPut.apply(input, src, index=where, accumulate=True), "IndexAddBackward0",
                   input)
    return out if src._requires_grad else keep_attrs(out)  # NOTE [Freed attributes]


def index_copy(input, dim: int, index, source):
    """Copy ``source``'s slices into a copy of ``input`` at ``index`` along ``dim``
    (``torch.index_copy``)."""
    where = _index_along(input, dim, index, source, "index_copy")
    return IndexPut.apply(input, source, index=where, accumulate=False)


def index_fill(input, dim: int, index, value):
    """Fill the slices at ``index`` along ``dim`` with ``value`` (number or 0-d tensor)
    (``torch.index_fill``)."""
    if is_tensor(index) and index._array.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.\n"
                         "glassgrad: convert the index with .long().")
    where = _index_along(input, dim, index, None, "index_fill")
    return IndexPut.apply(
        input, _value_tensor(value, input, "index_fill"), index=where, accumulate=False
    )
