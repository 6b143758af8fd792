"""Construction and shape functions composed of existing ops (issue 15, lane ops): kron,
block_diag, cartesian_prod, combinations, meshgrid, diagflat, the split helpers, ravel,
unravel_index, tril/triu_indices, range, rsub, scalar_tensor, fill, nonzero_static and the
dtype and shape predicates. No derivative code: gradients come from the ops they are made of."""

from __future__ import annotations

import builtins
import itertools

import numpy as np

from . import dtypes
from ._ops_vmap import loops_under_vmap
from .ops import elementwise as ew
from .ops import joins
from .ops import shape as sh
from .ops._names import scalar_type
from .ops.diagonal import diag
from .ops.fill import clone
from .ops.gather import index_select
from .ops.primitive import _make
from .tensor import Size, Tensor
from ._user_warning import warn_user


def _long(values, dtype=None):
    return _make(np.asarray(values, dtype=(dtype or dtypes.int64).np))


def kron(input, other):
    """The Kronecker product (``torch.kron``): dims are aligned from the right (the smaller
    operand gets leading 1s) and each result dim has size ``input.shape[k] * other.shape[k]``."""
    nd = builtins.max(input._array.ndim, other._array.ndim)
    a = sh.reshape(input, (1,) * (nd - input._array.ndim) + input._array.shape)
    b = sh.reshape(other, (1,) * (nd - other._array.ndim) + other._array.shape)
    a_shape = [s for d in a._array.shape for s in (d, 1)]
    b_shape = [s for d in b._array.shape for s in (1, d)]
    out = ew.mul(sh.reshape(a, a_shape), sh.reshape(b, b_shape))
    return sh.reshape(out, [p * q for p, q in zip(a._array.shape, b._array.shape)])


def block_diag(*tensors):
    """The tensors (0-d, 1-D as one row, or 2-D) on the diagonal of a zero matrix, in the
    promoted dtype (``torch.block_diag``). RuntimeError for an input with more than 2 dims."""
    blocks = []
    for k, t in enumerate(tensors):
        nd = t._array.ndim
        if nd > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {nd} dimensions")
        blocks.append(sh.reshape(t, (1, -1) if nd == 1 else (1, 1)) if nd < 2 else t)
    dt = dtypes.result_type(*blocks) if blocks else dtypes.get_default_dtype()
    blocks = [b if b.dtype == dt else ew.to_dtype(b, dt) for b in blocks]
    width = builtins.sum(b._array.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b._array.shape
        parts = [_zeros((r, left), dt), b, _zeros((r, width - left - c), dt)]
        rows.append(joins.cat(parts, 1))
        left += c
    return joins.cat(rows, 0) if rows else _zeros((0, 0), dt)


def _zeros(shape, dt):
    return _make(np.zeros(shape, dt.np))


def meshgrid(*tensors, indexing: str | None = None):
    """Coordinate grids of 1-D (or 0-d) tensors (``torch.meshgrid``): ``indexing='ij'`` gives
    each grid the shape ``(len(t0), len(t1), ...)``, ``'xy'`` swaps the first two. Without
    ``indexing`` it is 'ij' with PyTorch's UserWarning. The grids are expanded views."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warn_user("torch.meshgrid: in an upcoming release, it will be required to pass the "
                  "indexing argument.", UserWarning, stacklevel=3)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t._array.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    flat = [sh.reshape(t, (-1,)) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = [t._array.shape[0] for t in flat]
    grids = []
    for k, t in enumerate(flat):
        view = [1] * len(flat)
        view[k] = -1
        g = sh.expand(sh.reshape(t, view), shape)
        grids.append(g)
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, as rows (``torch.cartesian_prod``);
    one tensor is returned as it is."""
    for t in tensors:
        if t._array.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._array.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return joins.stack([sh.reshape(g, (-1,)) for g in grids], 1)


def combinations(input, r: int = 2, with_replacement: bool = False):
    """The length-``r`` combinations of a 1-D tensor's elements as rows, in itertools' order
    (``torch.combinations``); ``r=0`` gives an empty 1-D tensor."""
    if input._array.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._array.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _make(np.zeros((0,), input._array.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.asarray(list(pick(range(input._array.shape[0]), r)), dtype=np.int64)
    idx = idx.reshape(-1, r)
    cols = [index_select(input, 0, _long(idx[:, k])) for k in range(r)]
    return joins.stack(cols, 1)


def diagflat(input, offset: int = 0):
    """The flattened input on the ``offset`` diagonal of a square zero matrix
    (``torch.diagflat``)."""
    return diag(sh.reshape(input, (-1,)), offset)


def _split_along(name, dim, min_dims):
    def fn(input, indices_or_sections):
        nd = input._array.ndim
        if nd < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {nd} dimensions!")
        d = 0 if name == "hsplit" and nd == 1 else dim
        if isinstance(indices_or_sections, (int, np.integer)):
            size = input._array.shape[d]
            n = int(indices_or_sections)
            if n == 0 or size % n:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                                   f"the size of the dimension {size} is not divisible by the "
                                   f"split_size {n}!")
        return joins.tensor_split(input, indices_or_sections, d)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}``: ``tensor_split`` along dim {dim} into equal sections or "
                  "at the given indices; views. RuntimeError when the sections do not divide "
                  "the dim.")
    return fn


vsplit = _split_along("vsplit", 0, 2)
hsplit = _split_along("hsplit", 1, 1)
dsplit = _split_along("dsplit", 2, 3)


def ravel(input):
    """The elements as a 1-D tensor, a view when possible (``torch.ravel``)."""
    return sh.reshape(input, (-1,))


def unravel_index(indices, shape):
    """Flat ``indices`` as a tuple of coordinate tensors for ``shape`` (``torch.unravel_index``);
    negative indices count from the end, as in PyTorch."""
    if not isinstance(indices, Tensor):
        indices = _long(indices)
    if indices._array.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    flat = indices._array.astype(np.int64)
    coords = []
    for s in reversed(shape):
        coords.append(np.mod(flat, s) if s else np.zeros_like(flat))
        flat = np.floor_divide(flat, s) if s else flat
    return tuple(_make(c) for c in reversed(coords))


def _index_pairs(np_fn, name):
    def fn(row, col, offset=0, *, dtype=None, device=None, layout=None):
        dt = dtype or dtypes.int64
        if dt.is_floating_point or dt == dtypes.bool:
            raise NotImplementedError(f"\"{name}\" not implemented for '{scalar_type(dt)}'")
        r, c = np_fn(row, offset, col)
        return _long(np.stack([r, c]).reshape(2, -1), dt)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}``: the (2, N) row and column indices of the "
                  f"{'lower' if name[1] == 'r' and name[2] == 'i' else 'upper'} triangle of a "
                  "``row`` x ``col`` matrix, shifted by ``offset``, in row-major order.")
    return fn


tril_indices = _index_pairs(np.tril_indices, "tril_indices")
triu_indices = _index_pairs(np.triu_indices, "triu_indices")


def range_(start, end, step=1, *, dtype=None, device=None, requires_grad=False,
           out=None, layout=None):
    """Deprecated ``torch.range``: ``start`` to ``end`` *inclusive* by ``step``, in the default
    float dtype, with PyTorch's UserWarning (use ``arange``)."""
    warn_user("torch.range is deprecated and will be removed in a future release because "
              "its behavior is inconsistent with Python's range builtin. Instead, use "
              "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=3)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = builtins.int(np.floor((end - start) / step)) + 1
    dt = dtype or dtypes.get_default_dtype()
    out_t = _make((start + step * np.arange(builtins.max(n, 0))).astype(dt.np))
    return out_t.requires_grad_(requires_grad) if requires_grad else out_t


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``torch.rsub``)."""
    if isinstance(other, Tensor):
        return ew.sub(other, input, alpha=alpha)
    # a number: promoted as in PyTorch (int tensor, float number -> float)
    return ew.add(ew.neg(input) if alpha == 1 else ew.mul(input, -alpha), other)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """A 0-d tensor holding the number ``s``, in the default float dtype unless ``dtype`` says
    otherwise (``torch.scalar_tensor``)."""
    dt = dtype or dtypes.get_default_dtype()
    out = _make(np.asarray(s, dtype=dt.np))
    return out.requires_grad_(requires_grad) if requires_grad else out


def fill(input, value):
    """A new tensor shaped as ``input``, every element ``value`` (``torch.fill``); the gradient
    reaches a 0-d Tensor ``value``, not ``input``."""
    return clone(input).fill_(value)


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (``torch.broadcast_shapes``), a ``Size``;
    RuntimeError naming the mismatching dimension as PyTorch does."""
    norm = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    nd = builtins.max((len(s) for s in norm), default=0)
    out = [1] * nd
    for k, s in enumerate(norm):
        for j, size in enumerate(s):
            if size < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            pos = nd - len(s) + j
            if size == 1:
                continue
            if out[pos] not in (1, size):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {j - len(s)}! "
                    f"Mismatching argument at index {k} had {s}; but expected shape should be "
                    f"broadcastable to {out}")
            out[pos] = size
    return Size(out)


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` -> ``to`` (``torch.can_cast``): never
    to a lower category (complex > floating > integer > bool)."""
    return from_._kind <= to._kind


def is_same_size(input, other) -> bool:
    """Whether the two tensors have the same shape (``torch.is_same_size``)."""
    return input._array.shape == other._array.shape


def is_signed(input) -> bool:
    """Whether the tensor's dtype is signed (``torch.is_signed``): False for bool and uint8."""
    return input.dtype.is_signed


@loops_under_vmap
def nonzero_static(input, *, size: int, fill_value: int = -1):
    """``nonzero(input)`` with exactly ``size`` rows: truncated, or padded with ``fill_value``
    (``torch.nonzero_static``); int64 of shape ``(size, input.dim())``."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    idx = np.argwhere(input._array)[:size]
    out = np.full((size, input._array.ndim), fill_value, dtype=np.int64)
    out[: len(idx)] = idx
    return _make(out)


def fill_diagonal_(self, fill_value, wrap: bool = False):
    """Write ``fill_value`` on the main diagonal in place (``torch.Tensor.fill_diagonal_``):
    all dims equal beyond 2-D; a tall matrix restarts the diagonal every ``cols + 1`` rows when
    ``wrap``. The gradient there is zero."""
    shape = self._array.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(shape, dtype=np.bool_)
    n = builtins.min(shape)
    mask[(np.arange(n),) * len(shape)] = True
    if wrap and len(shape) == 2 and shape[0] > shape[1] + 1:
        step = shape[1] + 1
        for start in range(step, shape[0], step):
            k = np.arange(builtins.min(shape[1], shape[0] - start))
            mask[start + k, k] = True
    return self.masked_fill_(_make(mask), fill_value)


def where_method(self, condition, y):
    """``x.where(condition, y)``: ``torch.where(condition, x, y)``."""
    return ew.where(condition, self, y)


range_.__name__ = range_.__qualname__ = "range"
