"""torch's ``suggest_memory_format``: which layout an nn op's output takes from its input.

Many CPU kernels (interpolate, pooling, padding, feature dropout) write a channels-last output
for a channels-last input. torch decides from the strides alone (``is_channels_last_strides_2d``
in c10/core/MemoryFormat.h): walking the dims from innermost (C, then W, H, [D], N) each stride
must be at least the span of the dims inside it, with ambiguous cases (an N111 tensor, C stride
0) falling back to the contiguous format.
"""

from __future__ import annotations

from .. import _memory_format as mf
from .. import _storage

_WALK = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def _strides_like_channels_last(shape, strides) -> bool:
    walk = _WALK[len(shape)]
    if strides[1] == 0:
        return False
    low = 0
    for d in walk:
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest_memory_format(x):
    """``channels_last`` / ``channels_last_3d`` when torch would call ``x`` so, else
    ``contiguous_format`` (``Tensor.suggest_memory_format()``)."""
    arr = x._array
    if arr.ndim in _WALK and _strides_like_channels_last(arr.shape, _storage.strides(arr)):
        return mf.channels_last if arr.ndim == 4 else mf.channels_last_3d
    return mf.contiguous_format


def like_input(result, x):
    """``result`` laid out in ``x``'s suggested memory format, as torch's nn kernels write
    their outputs: channels-last, else C-contiguous; ``result`` itself when already so."""
    fmt = suggest_memory_format(x)
    if fmt is mf.contiguous_format or result.ndim != x.ndim:
        return result.contiguous()
    return result.contiguous(memory_format=fmt)


def like_strides(result, x):
    """``result`` laid out in the dim order of ``x``'s strides (largest first), as torch's
    elementwise kernels (TensorIterator) lay out an output after a permuted input."""
    arr = x._array
    if arr.flags.c_contiguous or result.ndim != arr.ndim:
        return result
    strides = _storage.strides(arr)
    order = tuple(sorted(range(arr.ndim), key=lambda d: (-strides[d], d)))
    if order == tuple(range(arr.ndim)):
        return result.contiguous()
    from .._tensor_methods_storage import ContiguousCopy

    return ContiguousCopy.apply(result, order=order)
