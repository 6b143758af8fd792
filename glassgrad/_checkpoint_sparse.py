"""Sparse tensors in checkpoints: ``glassgrad.save``/``load`` of COO and CSR tensors, and
``torch._utils._rebuild_sparse_tensor`` when reading a file ``torch.save`` wrote.

NOTE [Sparse tensors in checkpoints]: a sparse tensor is saved as the dense tensors that make it
and a tag holding them: ``{"sparse_coo": {"indices": ..., "values": ..., "size": [...],
"coalesced": bool}}`` or ``{"sparse_csr": {"crow_indices": ..., "col_indices": ...,
"values": ..., "size": [...]}}``. The values are saved detached: torch's load gives a sparse
tensor that does not require grad. Loading rebuilds through the constructors, which always check
the invariants (indices in range, CSR pointers), and checks a "coalesced" claim (sorted, no
duplicates), so a file cannot hand glassgrad a tensor that computes on entries it lacks; a bad
field is the caller's ValueError naming the file.
"""

from __future__ import annotations

import numpy as np

from . import _layout
from .tensor import Tensor

__all__ = ["TAGS", "decode", "encode", "layout_named", "rebuild_from_torch"]

TAGS = frozenset(("sparse_coo", "sparse_csr"))


def encode(encoder, obj: Tensor, path: list) -> dict:
    """The tag of sparse ``obj``; its dense parts are entries the encoder collects."""
    size = [int(n) for n in obj.shape]
    if obj.layout is _layout.sparse_coo:
        return {"sparse_coo": {
            "indices": encoder.encode(obj._indices(), [*path, "indices"]),
            "values": encoder.encode(obj._values().detach(), [*path, "values"]),
            "size": size, "coalesced": bool(obj.is_coalesced())}}
    return {"sparse_csr": {
        "crow_indices": encoder.encode(obj.crow_indices(), [*path, "crow_indices"]),
        "col_indices": encoder.encode(obj.col_indices(), [*path, "col_indices"]),
        "values": encoder.encode(obj.values().detach(), [*path, "values"]), "size": size}}


def decode(node: dict, tensors: dict, where: str, depth: int, decode_value, bad):
    """The sparse tensor of tag ``node``; ``bad(where, what)`` makes the ValueError."""
    (kind, fields), = node.items()
    want = ({"indices", "values", "size", "coalesced"} if kind == "sparse_coo"
            else {"crow_indices", "col_indices", "values", "size"})
    if len(node) != 1 or not isinstance(fields, dict) or set(fields) != want:
        held = sorted(fields) if isinstance(fields, dict) else fields
        raise bad(where, f"a {kind} tag holds {held!r}; it needs {sorted(want)}")
    parts = {k: decode_value(v, tensors, where, depth + 1) for k, v in fields.items()
             if k not in ("size", "coalesced")}
    size = fields["size"]
    if not (isinstance(size, list) and all(type(n) is int and n >= 0 for n in size)):
        raise bad(where, f"a {kind} tensor has the size {size!r}; it needs non-negative ints")
    if not all(isinstance(t, Tensor) and not t._sparse for t in parts.values()):
        raise bad(where, f"a {kind} tensor's parts are not all dense tensors")
    try:
        if kind == "sparse_coo":
            return _coo(parts["indices"], parts["values"], size, fields["coalesced"])
        from .sparse import sparse_csr_tensor

        return sparse_csr_tensor(parts["crow_indices"], parts["col_indices"], parts["values"],
                                 size)
    except (RuntimeError, TypeError, ValueError, IndexError) as exc:
        raise bad(where, f"a {kind} tensor is not valid: {str(exc).splitlines()[0]}") from None


def _coo(indices: Tensor, values: Tensor, size, coalesced):
    from .sparse import sparse_coo_tensor

    if type(coalesced) is not bool and coalesced is not None:
        raise ValueError(f"is_coalesced is {coalesced!r}, not true or false")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dim() != 2:
        raise ValueError(f"indices must be 2-D integers, got {indices.dtype} of shape "
                         f"{list(indices.shape)}")
    out = sparse_coo_tensor(indices, values, size, is_coalesced=coalesced)
    if coalesced and out._nnz() > 1:
        idx = out._indices_t._array
        linear = np.ravel_multi_index(tuple(idx), tuple(size[: idx.shape[0]]))
        if np.any(np.diff(linear) <= 0):
            raise ValueError("it is marked coalesced but its indices are not sorted and unique")
    return out


def layout_named(name):
    """``torch.serialization._get_layout``: the layout a torch file names ("torch.sparse_coo");
    ValueError for any other name."""
    layouts = {"torch.sparse_coo": _layout.sparse_coo, "torch.sparse_csr": _layout.sparse_csr,
               "torch.strided": _layout.strided}
    if name not in layouts:
        raise ValueError(f"glassgrad: a torch file names the layout {name!r}, which glassgrad "
                         "does not have")
    return layouts[name]


def rebuild_from_torch(layout, data):
    """``torch._utils._rebuild_sparse_tensor`` for glassgrad's reader of torch's files: the same
    checks as ``decode`` (ValueError for a tensor that breaks them or a layout glassgrad does not
    have; torch's own load takes indices out of range)."""
    try:
        return _rebuild(layout, data)
    except (RuntimeError, TypeError, IndexError) as exc:
        raise ValueError(f"a sparse tensor is not valid: {str(exc).splitlines()[0]}") from None


def _rebuild(layout, data):
    if layout is _layout.sparse_coo:
        if not isinstance(data, tuple) or len(data) not in (3, 4):
            raise ValueError("a sparse COO tensor's data is not (indices, values, size[, "
                             "is_coalesced])")
        indices, values, size = data[:3]
        return _coo(indices, values, tuple(size), data[3] if len(data) == 4 else None)
    if layout is _layout.sparse_csr:
        from .sparse import sparse_csr_tensor

        crow, col, values, size = data
        return sparse_csr_tensor(crow, col, values, tuple(size))
    raise ValueError(f"glassgrad: rebuilding a sparse tensor of layout {layout} is not "
                     "supported; glassgrad has sparse_coo and sparse_csr.")
