"""Triangles and diagonals: ``tril``, ``triu``, ``diagonal`` (a writable view, as in PyTorch),
``diag_embed`` and ``diag``. ``Diagonal`` and ``DiagEmbed`` are each other's backward."""

from __future__ import annotations

import numpy as np

from ._util import mark_view, wrap_dim
from .primitive import Primitive


def _diagonal_view(xp, x, offset, dim1, dim2):
    """The diagonal of dims (dim1, dim2) moved last, as a strided view (writable if ``x`` is)."""
    m = xp.moveaxis(x, (dim1, dim2), (-2, -1))
    m = m[..., :, offset:] if offset >= 0 else m[..., -offset:, :]
    n = max(min(m.shape[-2], m.shape[-1]), 0)
    return np.lib.stride_tricks.as_strided(
        m, shape=m.shape[:-2] + (n,), strides=m.strides[:-2] + (m.strides[-2] + m.strides[-1],)
    )


class Diagonal(Primitive):
    @staticmethod
    def forward(xp, x, *, offset, dim1, dim2, shape):  # shape: the input's, for backward
        return _diagonal_view(xp, x, offset, dim1, dim2)

    @staticmethod
    def backward(grad, *, offset, dim1, dim2, shape):
        return (DiagEmbed.apply(grad, offset=offset, dim1=dim1, dim2=dim2, shape=shape),)


class DiagonalCopy(Diagonal):
    """``torch.diag`` of a matrix: the diagonal as a copy, under PyTorch's node name."""

    node_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(xp, x, *, offset, dim1, dim2, shape):
        return _diagonal_view(xp, x, offset, dim1, dim2).copy()


class DiagEmbed(Primitive):
    """Zeros of ``shape`` with the input's last dim written on the (dim1, dim2) diagonal."""

    @staticmethod
    def forward(xp, x, *, offset, dim1, dim2, shape):
        out = xp.zeros(shape, dtype=x.dtype)
        _diagonal_view(xp, out, offset, dim1, dim2)[...] = x
        return out

    @staticmethod
    def backward(grad, *, offset, dim1, dim2, shape):
        return (_apply_diagonal(grad, offset, dim1, dim2),)


def _apply_diagonal(x, offset, d1, d2):
    return Diagonal.apply(x, offset=offset, dim1=d1, dim2=d2, shape=x._array.shape)


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """The diagonal of dims ``dim1``/``dim2`` (shifted by ``offset``) as a new last dim
    (``torch.diagonal``): a view, so writing into it writes into ``input``."""
    nd = input._array.ndim
    d1, d2 = wrap_dim(dim1, nd, "diagonal"), wrap_dim(dim2, nd, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = _apply_diagonal(input, int(offset), d1, d2)
    return mark_view(out, input, lambda b: diagonal(b, offset, d1, d2))


def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """Matrices (in dims ``dim1``, ``dim2`` of a result with one more dim) whose ``offset``
    diagonal is the last dim of ``input`` (``torch.diag_embed``)."""
    nd = input._array.ndim + 1
    d1, d2 = wrap_dim(dim1, nd, "diag_embed"), wrap_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input._array.shape[-1] if input._array.ndim else 1) + abs(int(offset))
    shape = list(input._array.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    x = input if input._array.ndim else input.reshape(1)
    return DiagEmbed.apply(x, offset=int(offset), dim1=d1, dim2=d2, shape=tuple(shape))


def diag(input, diagonal: int = 0):
    """1-D input: a square matrix with ``input`` on the ``diagonal``-th diagonal; 2-D input: that
    diagonal as a 1-D copy (``torch.diag``). RuntimeError for other ranks."""
    nd = input._array.ndim
    if nd == 1:
        return diag_embed(input, diagonal, 0, 1)
    if nd == 2:
        return DiagonalCopy.apply(input, offset=int(diagonal), dim1=0, dim2=1,
                                  shape=input._array.shape)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")


class Tril(Primitive):
    @staticmethod
    def forward(xp, x, *, diagonal):
        return xp.tril(x, diagonal)

    @staticmethod
    def backward(grad, *, diagonal):
        return (Tril.apply(grad, diagonal=diagonal),)


class Triu(Primitive):
    @staticmethod
    def forward(xp, x, *, diagonal):
        return xp.triu(x, diagonal)

    @staticmethod
    def backward(grad, *, diagonal):
        return (Triu.apply(grad, diagonal=diagonal),)


def _triangle(prim, name, part):
    def fn(input, diagonal: int = 0):
        if input._array.ndim < 2:
            raise RuntimeError(
                f"{name}: input tensor must have at least 2 dimensions\n"
                f"glassgrad: got a {list(input.shape)} tensor."
            )
        return prim.apply(input, diagonal=int(diagonal))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Zero the elements {part} the ``diagonal``-th diagonal of the last two dims "
        f"(``torch.{name}``); batched over leading dims."
    )
    return fn


tril = _triangle(Tril, "tril", "above")
triu = _triangle(Triu, "triu", "below")
