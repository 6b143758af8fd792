"""Joins and splits: ``cat``/``stack`` (and the h/v/d/column variants), ``split``, ``chunk``,
``tensor_split``, ``unbind``. Pieces of a split are views (``narrow``); a join is one
``concatenate`` whose backward narrows the gradient back into pieces."""

from __future__ import annotations

import itertools

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import _state
from . import _util, _view_meta
from ._util import cast, wrap_dim
from .primitive import Primitive
from .shape import atleast_1d, atleast_2d, atleast_3d, narrow, reshape


class Cat(Primitive):
    @staticmethod
    def forward(xp, *xs, dim, sizes):
        return xp.concatenate(xs, axis=dim)

    @staticmethod
    def backward(grad, *, dim, sizes):
        out = []
        start = 0
        for s in sizes:
            out.append(narrow(grad, dim, start, s))
            start += s
        return tuple(out)


def _describe(tensors) -> str:
    return ", ".join(f"{list(x._array.shape)} {x.dtype}" for x in tensors)


def cat(tensors, dim: int = 0):
    """Join tensors along an existing dim (``torch.cat``); dtypes promote to the widest.

    All shapes must match except in ``dim``; 1-D empty tensors are skipped (PyTorch's legacy
    rule). RuntimeError for an empty list, 0-d tensors, or mismatched shapes."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # NOTE: PyTorch skips legacy 1-D empty tensors
    kept = [x for x in tensors if not (x._array.ndim == 1 and x._array.size == 0)] or tensors
    ref = kept[0]
    nd = ref._array.ndim
    for i, x in enumerate(tensors):
        if x._array.ndim == 0:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {i}) cannot be concatenated\n"
                f"glassgrad: cat of {_describe(tensors)}; use stack() to join 0-d tensors."
            )
    d = wrap_dim(dim, nd, "cat")
    kept_ids = {id(x) for x in kept}
    for i, x in enumerate(tensors):
        if id(x) not in kept_ids:
            continue
        if x._array.ndim != nd:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {nd} and {x._array.ndim}\n"
                f"glassgrad: cat of {_describe(tensors)} along dim {dim}."
            )
        for k, (a, b) in enumerate(zip(x._array.shape, ref._array.shape)):
            if k != d and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {b} but "
                    f"got size {a} for tensor number {i} in the list.\n"
                    f"glassgrad: cat of {_describe(tensors)} along dim {dim}; only dim {d} may "
                    "differ."
                )
    # the skipped empties still take part in the result dtype, as in PyTorch
    kept = _promote_all(kept, tensors)
    return Cat.apply(*kept, dim=d, sizes=tuple(x._array.shape[d] for x in kept))


concat = concatenate = cat


def _promote_all(tensors, over=None):
    """``tensors`` cast to the promoted dtype of ``over`` (default: of ``tensors``)."""
    over = tensors if over is None else over
    first = over[0]
    if all(x._array.dtype == first._array.dtype for x in over):
        return tensors
    rd = first.dtype
    for x in over[1:]:
        rd = dtypes.promote_types(rd, x.dtype)
    return [cast(x, rd.np) if x._array.dtype != rd.np else x for x in tensors]


def stack(tensors, dim: int = 0):
    """Join tensors along a new dim (``torch.stack``); all shapes must be equal (RuntimeError)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = tensors[0]._array.shape
    for i, x in enumerate(tensors):
        if x._array.shape != shp:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                f"{list(x._array.shape)} at entry {i}\n"
                f"glassgrad: stack of {_describe(tensors)}; use cat() to join along an existing "
                "dim where sizes differ."
            )
    d = wrap_dim(dim, len(shp) + 1, "stack")
    return Stack.apply(*_promote_all(tensors), dim=d, count=len(tensors))


class Stack(Primitive):
    @staticmethod
    def forward(xp, *xs, dim, count):
        return xp.stack(xs, axis=dim)

    @staticmethod
    def backward(grad, *, dim, count):
        from .indexing import getitem

        lead = (slice(None),) * dim
        return tuple(getitem(grad, lead + (i,)) for i in range(count))


def hstack(tensors):
    """Join column-wise: along dim 1, or dim 0 for 1-D tensors (``torch.hstack``)."""
    tensors = atleast_1d(list(tensors))
    return cat(tensors, 0 if tensors[0]._array.ndim == 1 else 1)


def vstack(tensors):
    """Join row-wise after making tensors at least 2-D (``torch.vstack``)."""
    return cat(atleast_2d(list(tensors)), 0)


row_stack = vstack


def dstack(tensors):
    """Join depth-wise (dim 2) after making tensors at least 3-D (``torch.dstack``)."""
    return cat(atleast_3d(list(tensors)), 2)


def column_stack(tensors):
    """Join as columns: 0-d and 1-D tensors become (n, 1) columns (``torch.column_stack``)."""
    cols = [reshape(x, (x._array.size, 1)) if x._array.ndim <= 1 else x for x in tensors]
    return cat(cols, 1)


def split(tensor, split_size_or_sections, dim: int = 0):
    """Pieces of ``split_size`` (last one smaller) or of the listed sizes (``torch.split``): views."""
    if tensor._array.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor._array.ndim, "split")
    size = tensor._array.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        step = int(split_size_or_sections)
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got {size}")
        sizes = [min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
        return _pieces(tensor, d, sizes, "SplitWithSizesPiece")
    return _pieces(tensor, d, sizes, "SplitPiece")


def _pieces(tensor, d, sizes, cls="Slice"):
    """Views of consecutive ``sizes`` along ``d``, each node named by the Index subclass
    ``cls`` (PyTorch's SplitBackward0 ...: NOTE [Node names] in indexing.py)."""
    from . import indexing

    cls = getattr(indexing, cls)
    lead = (slice(None),) * d
    out = []
    start = 0
    for s in sizes:
        out.append(indexing.view_index(tensor, lead + (slice(start, start + s), Ellipsis), cls))
        start += s
    return _multi_output(out) if cls is not indexing.Slice else tuple(out)


def _multi_output(views) -> tuple:
    """The pieces of split/chunk/unbind: PyTorch refuses a recorded in-place write to them
    (NOTE [View creation] in _view_meta.py; under no_grad they are marked as no_grad views)."""
    if _state.enabled:
        for i, v in enumerate(views):
            if v._base is not None:
                _view_meta.mark(v, _view_meta.MULTI_OUTPUT, i)
    return tuple(views)


def chunk(input, chunks: int, dim: int = 0):
    """Split into ``chunks`` nearly equal pieces, fewer if the dim is short (``torch.chunk``)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input._array.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, input._array.ndim, "chunk")
    size = input._array.shape[d]
    if size == 0:  # NOTE: PyTorch gives `chunks` empty pieces here
        return _pieces(input, d, [0] * chunks, "SplitPiece")
    return split(input, -(-size // chunks), d)


def split_with_sizes(input, split_sizes, dim: int = 0):
    """Pieces of the listed sizes along ``dim`` (``torch.split_with_sizes``): views."""
    return split(input, [int(s) for s in split_sizes], dim)


def _unsafe(split_fn):
    def unsafe(input, split_size, dim: int = 0):
        pieces = split_fn(input, split_size, dim)
        for v in pieces:  # NOTE [View creation] in _view_meta.py: in-place writes are allowed
            _view_meta.CREATION_META.pop(id(v), None)
            if v._base is not None:  # as PyTorch's: no view, a version counter of its own
                _util.VIEWS.get(id(v._base), {}).pop(id(v), None)
                v._base = v._view_fn = None
                v._vc = [0]
        return pieces

    unsafe.__name__ = unsafe.__qualname__ = "unsafe_" + split_fn.__name__
    unsafe.__doc__ = (f"``{split_fn.__name__}`` whose pieces may be written in place "
                      f"(``torch.unsafe_{split_fn.__name__}``).")
    return unsafe


def tensor_split(input, indices_or_sections, dim: int = 0):
    """Split into ``n`` pieces whose sizes differ by at most one, or at the given indices
    (``torch.tensor_split``): views."""
    from ._util import is_tensor

    if input._array.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, input._array.ndim, "tensor_split")
    size = input._array.shape[d]
    spec = indices_or_sections
    if is_tensor(spec):
        spec = int(spec.item()) if spec._array.ndim == 0 else spec._array.tolist()
    if isinstance(spec, (int, np.integer)):
        n = int(spec)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        base, extra = divmod(size, n)
        return _pieces(input, d, [base + 1] * extra + [base] * (n - extra))
    bounds = [0] + [int(i) for i in spec] + [size]
    out = []
    for a, b in itertools.pairwise(bounds):
        a = min(max(a + size if a < 0 else a, 0), size)
        b = min(max(b + size if b < 0 else b, a), size)
        out.append(narrow(input, d, a, b - a))
    return tuple(out)


unsafe_split = _unsafe(split)
unsafe_chunk = _unsafe(chunk)
unsafe_split_with_sizes = _unsafe(split_with_sizes)


def unbind(input, dim: int = 0):
    """Tuple of slices along ``dim`` with that dim removed (``torch.unbind``): views."""
    from .indexing import UnbindPiece, view_index

    if input._array.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, input._array.ndim, "unbind")
    lead = (slice(None),) * d
    return _multi_output([view_index(input, lead + (i, Ellipsis), UnbindPiece)
                          for i in range(input._array.shape[d])])
