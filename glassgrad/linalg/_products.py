"""``torch.linalg``'s products and views: ``matmul``, ``cross`` (dim -1 by default), ``vecdot``,
``diagonal`` (the last two dims by default); composites of ops/linalg.py and ops/diagonal.py."""

from __future__ import annotations

from ..ops import diagonal as _diagonal
from ..ops import linalg as _linalg
from ..ops._linalg_check import check_same_dtype, write_out


def matmul(input, other, *, out=None):
    """``torch.linalg.matmul``, an alias of ``torch.matmul``."""
    return write_out(_linalg.matmul(input, other), out, "linalg_matmul")


def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along ``dim`` (default -1), batch dims broadcast
    (``torch.linalg.cross``); RuntimeError when that dim is not 3 or the ranks differ."""
    return write_out(_linalg.cross(input, other, dim), out, "linalg_cross")


def vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y, dim)``, broadcasting (``torch.linalg.vecdot``); same dtypes
    required."""
    from ..ops._util import cj

    check_same_dtype("linalg.vecdot", x, y, ("x", "y"))
    return write_out((cj(x) * y).sum(dim), out, "linalg_vecdot")


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The ``offset`` diagonal of the matrices in dims ``dim1``, ``dim2`` (the last two by
    default) as a view (``torch.linalg.diagonal``)."""
    from ..ops._linalg_check import check_tensors

    check_tensors("linalg_diagonal", ("A", A))
    return _diagonal.diagonal(A, offset, dim1, dim2)
