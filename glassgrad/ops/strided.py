"""``torch.as_strided`` and its family: a view of the input's storage at any sizes, strides and
offset (NOTE [Storage] in _storage.py), with the gradient torch defines.

NOTE [AsStrided gradient]: the output and the input are two windows on one storage. The gradient
is scattered (added, so overlapping output windows accumulate) into a zero storage at the output's
element positions, divided by how many times the input reads each position when the input
overlaps itself (an expanded input), and read back at the input's positions: torch's
``as_strided_backward``. It is written in index_add/take/div, so double backward works.
"""

from __future__ import annotations

import numpy as np

from .. import _storage, dtypes
from . import primitive
from ._util import mark_view
from .primitive import Primitive


def _positions(size, stride, offset) -> np.ndarray:
    """The storage position of every element of a geometry, shaped ``size``."""
    pos = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


class AsStrided(Primitive):
    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(xp, x, *, size, stride, offset, src):
        return _storage.view_of(x, size, stride, offset)

    @staticmethod
    def backward(grad, *, size, stride, offset, src):
        from .gather import index_add
        from .indexing import take

        out_pos = _positions(size, stride, offset)
        in_pos = _positions(*src)
        if in_pos.size == 0:
            return (primitive._make(np.zeros(src[0], grad._array.dtype)),)
        lo = min(in_pos.min(), out_pos.min()) if out_pos.size else in_pos.min()
        hi = max(in_pos.max(), out_pos.max()) if out_pos.size else in_pos.max()
        flat = primitive._make(np.zeros(hi - lo + 1, grad._array.dtype))
        index = primitive._make((out_pos - lo).reshape(-1))
        flat = index_add(flat, 0, index, grad.reshape(-1))
        count = np.bincount((in_pos - lo).reshape(-1), minlength=hi - lo + 1)
        if count.max() > 1:  # NOTE [AsStrided gradient]: an input that overlaps itself
            flat = flat / primitive._make(np.maximum(count, 1).astype(grad._array.dtype))
        return (take(flat, primitive._make(in_pos - lo)),)


def _geometry(input, size, stride, storage_offset, op):
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape\nglassgrad: {op} got sizes "
                           f"{list(size)} and strides {list(stride)}.")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}\nglassgrad: sizes must be >= 0.")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{op}: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    arr = input._array
    if type(arr) is not np.ndarray:  # NOTE: a BatchedArray claims ndarray as its __class__
        raise RuntimeError(f"{op}: glassgrad has no vmap batching rule for views of a storage "
                           "(each entry's storage is the batch's); call it outside vmap.")
    offset = _storage.storage_offset(arr) if storage_offset is None else int(storage_offset)
    need = _storage.required_size(size, stride, offset)
    have = _storage.storage_bounds(arr)[1]
    if need * arr.itemsize > have:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {arr.itemsize} requiring a storage size of {need * arr.itemsize} are out of "
            f"bounds for storage of size {have}\nglassgrad: {op} views the input's storage; the "
            "window must lie inside it.")
    return size, stride, offset


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with element ``size``/``stride`` starting at
    ``storage_offset`` (default: input's own) (``torch.as_strided``); differentiable (NOTE
    [AsStrided gradient]). RuntimeError for mismatched lengths, negative strides, or a window
    outside the storage."""
    size, stride, offset = _geometry(input, size, stride, storage_offset, "as_strided")
    arr = input._array
    src = (arr.shape, _storage.strides(arr), _storage.storage_offset(arr))
    out = AsStrided.apply(input, size=size, stride=stride, offset=offset, src=src)
    return mark_view(out, input, lambda b: as_strided(b, size, stride, offset))


def as_strided_copy(input, size, stride, storage_offset=None):
    """``as_strided`` copied into fresh contiguous memory (``torch.as_strided_copy``)."""
    from .fill import clone

    return clone(as_strided(input, size, stride, storage_offset))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A contiguous copy of ``input`` with ``src`` written at the ``as_strided`` window (offset
    counted in the copy; default 0) (``torch.as_strided_scatter``); differentiable in both."""
    from .fill import clone

    out = clone(input)
    view = as_strided(out, size, stride, 0 if storage_offset is None else storage_offset)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out


def as_strided_(input, size, stride, storage_offset=None):
    """``input`` re-pointed in place at the ``as_strided`` window of its own storage
    (``torch.Tensor.as_strided_``); on a tensor with history the new history is the view's."""
    size, stride, offset = _geometry(input, size, stride, storage_offset, "as_strided_")
    if input._requires_grad and input.grad_fn is None and primitive._state.enabled:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.")
    if input._requires_grad and primitive._state.enabled:
        view = as_strided(input, size, stride, offset)
        input._array, input.grad_fn, input._output_nr = view._array, view.grad_fn, 0
    else:
        input._array = _storage.view_of(input._array, size, stride, offset)
    return input


def _strided_empty(size, stride, dtype, requires_grad, op):
    from .._factories import _finish

    dt = (dtypes.get_default_dtype() if dtype is None else dtype).np
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape\nglassgrad: {op} got sizes "
                           f"{list(size)} and strides {list(stride)}.")
    n = _storage.required_size(size, stride, 0)
    buf = np.zeros(max(n, 0), dt)
    return _finish(_storage.view_of(buf, size, stride, 0), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised (here: zeroed) tensor with the given element strides over a storage just
    big enough for them (``torch.empty_strided``)."""
    return _strided_empty(size, stride, dtype, requires_grad, "empty_strided")


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """A tensor of ``size`` laid out in memory in the dim order ``physical_layout`` (outermost
    first) (``torch.empty_permuted``)."""
    size = tuple(int(s) for s in size)
    order = tuple(int(d) for d in physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"Duplicate dim not allowed\nglassgrad: empty_permuted's "
                           f"physical_layout {list(order)} must name each dim of the size "
                           f"{list(size)} once.")
    stride = [0] * len(size)
    step = 1
    for d in reversed(order):
        stride[d] = step
        step *= max(size[d], 1)
    return _strided_empty(size, stride, dtype, requires_grad, "empty_permuted")
