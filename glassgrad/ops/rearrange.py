"""Reorderings and repeats: ``flip``, ``roll``, ``rot90``, ``repeat``, ``tile``,
``repeat_interleave``, ``diff``. Flip and roll are primitives (one NumPy call each, their own
inverse as backward), and so is repeat (RepeatBackward0, as PyTorch); the rest are composed from
views, ``index_select`` and ``cat``."""

from __future__ import annotations

import numpy as np

from ..autograd.node_names import named_as
from . import primitive
from ._util import is_tensor, wrap_dim, wrap_dims
from .primitive import Primitive
from .shape import _shape_arg, flatten, narrow, reshape, transpose


class Flip(Primitive):
    @staticmethod
    def forward(xp, x, *, dims):
        return xp.flip(x, dims).copy()

    @staticmethod
    def backward(grad, *, dims):
        return (flip(grad, dims),)


class Roll(Primitive):
    @staticmethod
    def forward(xp, x, *, shifts, dims):
        return xp.roll(x, shifts, dims)

    @staticmethod
    def backward(grad, *, shifts, dims):
        return (Roll.apply(grad, shifts=tuple(-s for s in shifts), dims=dims),)


class Repeat(Primitive):
    """``x`` tiled ``sizes`` times per dim (leading new dims for extra sizes). Backward folds
    each dim of the gradient into (count, size) and sums the counts away."""

    @staticmethod
    def forward(xp, x, *, sizes, shape):  # shape: the input's
        return xp.tile(x, sizes)

    @staticmethod
    def backward(grad, *, sizes, shape):
        padded = (1,) * (len(sizes) - len(shape)) + tuple(shape)
        folded = []
        for r, s in zip(sizes, padded):
            folded += [r, s]
        g = reshape(grad, tuple(folded)).sum(tuple(range(0, 2 * len(sizes), 2)))
        return (reshape(g, shape),)


def flip(input, dims):
    """Reverse the order of elements along ``dims`` (``torch.flip``); a copy."""
    dims = wrap_dims(dims if isinstance(dims, (tuple, list)) else (dims,), input._array.ndim,
                     "flip")
    dims = dims if input._array.ndim else ()
    return Flip.apply(input, dims=dims)


def fliplr(input):
    """Flip dim 1 (left/right) of an at least 2-D tensor (``torch.fliplr``)."""
    if input._array.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """Flip dim 0 (up/down) of an at least 1-D tensor (``torch.flipud``)."""
    if input._array.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    """Rotate elements along ``dims`` by ``shifts``; the flattened tensor when ``dims`` is None
    (``torch.roll``). RuntimeError when shifts and dims differ in length."""
    shifts_t = tuple(shifts) if isinstance(shifts, (list, tuple)) else (shifts,)
    if dims is None:
        if len(shifts_t) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts_t)}, dims:0")
        if input._array.size == 0:
            return input.clone()
        out = Roll.apply(flatten(input), shifts=(int(shifts_t[0]),), dims=(0,))
        return reshape(out, input._array.shape)
    dims_t = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    if len(shifts_t) != len(dims_t):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts_t)}, dims:{len(dims_t)}"
        )
    dims_t = tuple(wrap_dim(d, input._array.ndim, "roll") for d in dims_t)
    return Roll.apply(input, shifts=tuple(int(s) for s in shifts_t), dims=dims_t)


def rot90(input, k: int = 1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (``torch.rot90``)."""
    nd = input._array.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = wrap_dim(dims[0], nd, "rot90"), wrap_dim(dims[1], nd, "rot90")
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k %= 4
    if k == 1:
        out = transpose(flip(input, (d1,)), d0, d1)
    elif k == 2:
        out = flip(input, (d0, d1))
    elif k == 3:
        out = transpose(flip(input, (d0,)), d0, d1)
    else:
        out = input.clone()
    return named_as(out, "Rot90Backward0", input)


def repeat(input, *sizes):
    """Tile the data ``sizes`` times per dim, adding leading dims (``torch.Tensor.repeat``)."""
    sizes = _shape_arg(sizes, "repeat")
    nd = input._array.ndim
    if len(sizes) < nd:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            f"tensor\nglassgrad: repeat{tuple(sizes)} of a {list(input.shape)} tensor; give one "
            "count per dim."
        )
    return Repeat.apply(input, sizes=sizes, shape=input._array.shape)


def tile(input, dims):
    """``repeat`` with missing leading counts taken as 1 (``torch.tile``); ``dims`` is a tuple
    or one int."""
    dims = _shape_arg((dims,), "tile")
    nd = input._array.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times along ``dim`` (flattened when None)
    (``torch.repeat_interleave``); ``repeats`` is an int or a 1-D int64 tensor.
    ``repeat_interleave(counts)`` alone gives ``arange(len(counts))`` repeated by ``counts``."""
    from .indexing import index_select

    if repeats is None:
        counts = input._array
        return primitive._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    x = flatten(input) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, x._array.ndim, "repeat_interleave")
    size = x._array.shape[d] if x._array.ndim else 1
    counts = repeats._array if is_tensor(repeats) else np.asarray(repeats)
    if counts.ndim > 1:
        raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
    if counts.dtype.kind not in "iu":
        raise NotImplementedError(
            f'"repeat_interleave_cpu" not implemented for \'{counts.dtype}\'\n'
            "glassgrad: repeats must be an integer tensor or int; convert it with .long()."
        )
    if counts.size == 1:
        counts = counts.reshape(())
    elif counts.shape[0] != size:
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got repeats.size(0) = "
            f"{counts.shape[0]} and input.size({d}) = {size}"
        )
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    idx = np.repeat(np.arange(size, dtype=np.int64), counts)
    out = index_select(x, d, primitive._make(idx))
    # NOTE [Freed attributes] in primitive.py: PyTorch expands a number of repeats (nothing saved)
    return out if is_tensor(repeats) else primitive.keep_attrs(out)


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None):
    """``n``-th forward difference along ``dim``, after joining ``prepend``/``append``
    (``torch.diff``); bool input uses ``!=``."""
    from .joins import cat

    if input._array.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = wrap_dim(dim, input._array.ndim, "diff")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = x._array.shape[d]
        if length == 0:
            break
        hi, lo = narrow(x, d, 1, length - 1), narrow(x, d, 0, length - 1)
        x = hi != lo if x._array.dtype == np.bool_ else hi - lo
    return x
