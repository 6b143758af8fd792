"""PyTorch's printing of a sparse COO tensor: ``tensor(indices=..., values=..., size=...,
nnz=..., layout=torch.sparse_coo)``, suffixes wrapped at 80 columns as ``torch._tensor_str``
does."""

from __future__ import annotations

from .. import _layout, dtypes
from .._repr import tensor_repr

_WIDTH = 80


def _body(t, indent: int) -> str:
    """``t``'s printed data without ``tensor(`` and the suffixes, continuation lines indented
    to column ``indent``."""
    if t.numel() == 0:
        return f"[], size={tuple(t.shape)}"
    text = tensor_repr(t.detach().to(dtypes.float32) if t.dtype is dtypes.bfloat16 else t.detach())
    text = text[len("tensor("):]
    depth, end = 0, len(text)
    for i, ch in enumerate(text):  # the data's closing bracket ends the body
        depth += ch == "["
        depth -= ch == "]"
        if depth == 0 and ch == "]":
            end = i + 1
            break
    if "[" not in text:  # (a 0-d body has no brackets; values are never 0-d)
        end = text.find(",") if "," in text else len(text) - 1
    return text[:end].replace("\n" + " " * len("tensor("), "\n" + " " * indent)


def sparse_repr(t) -> str:
    """The repr of sparse COO or CSR tensor ``t`` (``print(x)``)."""
    indent = len("tensor(")
    if t.layout is not _layout.sparse_coo:  # NOTE: torch starts CSR's size on the values' line
        fields = [("crow_indices", t._crow_t), ("col_indices", t._indices_t[1]),
                  ("values", t._values_t)]
        force_newline = False
    else:
        fields = [("indices", t._indices_t), ("values", t._values_t)]
        force_newline = True
    text = (",\n" + " " * indent).join(
        f"{name}=tensor(" + _body(data, indent + len(name) + len("=tensor(")) + ")"
        for name, data in fields)
    suffixes = [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    if t.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool):
        suffixes.append(f"dtype={t.dtype!r}")
    suffixes.append(f"layout={t.layout!r}")
    grad_fn = t._values_t.grad_fn
    if t.requires_grad:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>" if grad_fn is not None
                        else "requires_grad=True")
    parts, last = ["tensor(" + text], len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # NOTE: measured as torch spells the names, so lines break where PyTorch's do
        width = len(suffix.replace("glassgrad.", "torch."))
        if force_newline or last + width + 2 > _WIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last, force_newline = indent + width, False
        else:
            parts.append(", " + suffix)
            last += width + 2
    return "".join(parts) + ")"
