"""Writes into expanded tensors: PyTorch's internal-overlap rule on NumPy's read-only views.

NOTE [Expanded writes]: NumPy makes every broadcast view read-only, whatever is written. PyTorch
refuses a write only when the written region itself has internal overlap (a dimension of size > 1
and stride 0: ``at::has_internal_overlap`` is ``YES``), so ``ones(1, 3).clone().expand(2, 3)[0]
= 0`` writes the one shared row, while ``[:, 0] = 0`` or ``.add_(1)`` on the whole view raises
"unsupported operation: more than one element of the written-to tensor refers to a single memory
location". A scalar ``fill_``/``zero_`` is exempt there, and ``masked_fill_``, ``index_fill_`` and
advanced-index writes only warn (deprecated). ``writable`` gives the write a writable array on
the same memory when PyTorch would write.
"""

from __future__ import annotations


import numpy as np
from .._user_warning import warn_user

# op names as ``Tensor._write`` gets them: written with overlap without a word / with a warning
# (threshold_ too: torch skips the check for it, the write being idempotent)
_EXEMPT = frozenset({"fill", "threshold_"})
_DEPRECATED = {"maskedfill": "masked_fill_", "maskedfill_index": "masked_fill_",
               "index_fill_": "index_fill_", "index_put_": "index_put_"}
_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def internal_overlap(arr) -> bool:
    """Whether ``arr`` repeats an element (PyTorch's ``has_internal_overlap(...) == YES``)."""
    return any(s == 0 and n > 1 for n, s in zip(arr.shape, arr.strides))


def overlap_error(what: str) -> RuntimeError:
    return RuntimeError(f"{_OVERLAP_MESSAGE}\nglassgrad: {what} is an expanded view that repeats "
                        "an element; clone() it first.")


def warn_deprecated(name: str) -> None:
    example = "tensor[indices] = tensor" if name == "index_put_" else "tensor[mask] = scalar"
    warn_user(
        f"Use of {name} on expanded tensors is deprecated. Please clone() the tensor before "
        f"performing this operation. This also applies to advanced indexing e.g. {example}",
        UserWarning, stacklevel=4)


def write_changed(alias, before, out) -> None:
    """Write into an overlapping ``alias`` only the elements that ``out`` changes: a masked or
    indexed write touches its selected elements alone, not every alias of them."""
    changed = (out != before) | (out != out)
    alias[changed] = out[changed] if out.shape == alias.shape else \
        np.broadcast_to(out, alias.shape)[changed]


def writable(arr, op: str, region=None):
    """A writable array on ``arr``'s memory for an in-place ``op`` (``Tensor._write``'s name) on
    the read-only ``arr`` (NOTE [Expanded writes]); ``region`` (``arr[index]``, a view) is what a
    basic-index write touches. RuntimeError with PyTorch's wording where PyTorch refuses; None
    when the memory itself is read-only (not an expanded view)."""
    owner = arr
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if not owner.flags.writeable or not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return None
    if internal_overlap(arr if region is None else region):
        if op in _DEPRECATED:
            if op == "maskedfill_index":  # x[mask] = number: PyTorch says both
                warn_deprecated("index_put_")
            warn_deprecated(_DEPRECATED[op])
        elif op not in _EXEMPT:
            raise overlap_error(f"the {list(arr.shape)} tensor written by {op}")
    offset = arr.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return np.ndarray(arr.shape, arr.dtype, buffer=owner, offset=offset, strides=arr.strides)
