"""``max_unpool1d/2d/3d`` (``torch.nn.functional.max_unpool2d`` ...): the partial inverse of
``max_pool*d(return_indices=True)``, each value written at its flat index in a zero plane. A
``scatter`` into zeros, so the gradient is the gather of the output's gradient at ``indices``
(and its own derivatives follow). PyTorch's output-size rule and argument errors."""

from __future__ import annotations

import numpy as np

from ..ops._names import scalar_type
from ..tensor import Tensor
from ._functional_pool import _ntuple

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _output_size(in_size, kernel, stride, padding, output_size):
    """PyTorch's ``_unpool_output_size``: the default ``(in - 1) * stride - 2 * pad + kernel``, or
    ``output_size`` (its last ``nd`` entries) strictly within one stride of it (ValueError)."""
    nd = len(kernel)
    default = [(i - 1) * s - 2 * p + k for i, s, p, k in zip(in_size, stride, padding, kernel)]
    if output_size is None:
        return tuple(default)
    given = [int(v) for v in output_size]
    if len(given) == nd + 2:
        given = given[2:]
    if len(given) != nd:
        raise ValueError(
            f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has "
            f"a length of '{len(given)}'"
        )
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < given[d] < hi:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})'
            )
    return tuple(given)


def _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, nd, kernel_nd):
    """``kernel_nd``: the dims PyTorch's kernel names in its errors (1-D runs as 2-D there)."""
    name = f"max_unpooling{kernel_nd}d"
    if not isinstance(input, Tensor) or not isinstance(indices, Tensor):
        raise TypeError(f"max_unpool{nd}d(): input and indices must be Tensors")
    if input.ndim < nd:  # torch's output-size code indexes input.size()[-nd:] first
        raise IndexError(f"tuple index out of range\nglassgrad: max_unpool{nd}d needs an input "
                         f"with {nd} spatial dims; got shape {list(input.shape)}")
    batched_dims = kernel_nd + 2
    in_dims = input.ndim + (kernel_nd - nd)
    if in_dims not in (batched_dims - 1, batched_dims):
        raise RuntimeError(
            f"Input to {name} should be a {batched_dims - 1}d or {batched_dims}d Tensor, but got "
            f"a tensor with {in_dims} dimensions."
        )
    if indices._array.dtype != np.int64:
        raise RuntimeError(
            f"elements in indices should be type int64 but got: {scalar_type(indices.dtype)}"
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    kernel = _ntuple(kernel_size, nd, "kernel_size", f"max_unpool{nd}d")
    step = kernel if stride is None else _ntuple(stride, nd, "stride", f"max_unpool{nd}d")
    pad = _ntuple(padding, nd, "padding", f"max_unpool{nd}d")
    in_size = tuple(input.shape[-nd:])
    out = _output_size(in_size, kernel, step, pad, output_size)
    lead = tuple(input.shape[:-nd])
    plane = int(np.prod(out))
    # NOTE: an explicit plane size: -1 cannot be inferred when the batch is empty
    per_plane = int(np.prod(in_size))
    idx = indices._array.reshape(lead + (per_plane,))
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        bad = idx.max() if idx.max() >= plane else idx.min()
        sizes = "x".join(str(s) for s in (out + (1,) * (kernel_nd - nd)))
        raise RuntimeError(
            f"Found an invalid max index: {int(bad)} (output volumes are of size {sizes})"
        )
    from ..ops.primitive import _make

    flat = input.reshape(*lead, per_plane)
    zeros = _make(np.zeros(lead + (plane,), dtype=input._array.dtype))
    return zeros.scatter(-1, _make(idx), flat).reshape(*lead, *out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """(N, C, L) or (C, L) values and their ``max_pool1d`` indices -> (N, C, L_out), zeros
    elsewhere (``torch.nn.functional.max_unpool1d``); L_out = (L - 1) * stride - 2 * padding +
    kernel_size unless ``output_size`` says otherwise. RuntimeError for non-int64 indices, a
    shape mismatch or an index outside the output; ValueError for a bad ``output_size``."""
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 1, 2)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """(N, C, H, W) or (C, H, W) values and their ``max_pool2d`` indices -> (N, C, H_out,
    W_out) (``torch.nn.functional.max_unpool2d``); see ``max_unpool1d``."""
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 2, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """(N, C, D, H, W) or (C, D, H, W) values and their ``max_pool3d`` indices -> (N, C, D_out,
    H_out, W_out) (``torch.nn.functional.max_unpool3d``); see ``max_unpool1d``."""
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 3, 3)
