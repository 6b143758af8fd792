"""Selecting reductions: ``max``/``min`` (overall, along a dim with indices, or elementwise),
``argmax``/``argmin``, ``aminmax``. Values along a dim are a ``gather`` at the arg index, so the
gradient goes to that one element (PyTorch's rule); overall ``max()`` shares it among ties."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autograd.node_names import named_as
from . import primitive
from ._util import is_tensor, wrap_dim
from .primitive import Primitive

MaxMin = namedtuple("max", ["values", "indices"])
_MinResult = namedtuple("min", ["values", "indices"])
_AMinMax = namedtuple("aminmax", ["min", "max"])


class MaxDim(Primitive):
    """``max(x, dim)`` values: ``x`` at the arg ``index`` (a keepdim int64 array) along ``dim``;
    the gradient goes to that one element (Gather's backward), as PyTorch's MaxBackward0."""

    node_name = "MaxBackward0"
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, *, dim, index, keepdim, shape):
        out = xp.take_along_axis(x, index, axis=dim)
        return out if keepdim else xp.squeeze(out, axis=dim)

    @staticmethod
    def backward(grad, *, dim, index, keepdim, shape):
        from .gather import Gather

        return Gather.backward(grad if keepdim else grad.unsqueeze(dim), dim=dim, index=index,
                               shape=shape)


class MinDim(MaxDim):
    node_name = "MinBackward0"


def _along(input, dim, keepdim, np_arg, name, result_type):
    arr = input._array
    d = wrap_dim(dim, arr.ndim, name)
    if arr.ndim == 0:
        from .elementwise import clone

        return result_type(clone(input), primitive._make(np.zeros((), np.int64)))
    if arr.shape[d] == 0:
        raise IndexError(
            f"{name}(): Expected reduction dim {d} to have non-zero size.\n"
            f"glassgrad: the input has shape {list(arr.shape)}."
        )
    idx = np_arg(arr, axis=d, keepdims=True).astype(np.int64, copy=False)
    cls = MaxDim if name == "max" else MinDim
    values = cls.apply(input, dim=d, index=idx, keepdim=keepdim, shape=arr.shape)
    if not keepdim:
        idx = np.squeeze(idx, axis=d)
    return result_type(values, primitive._make(idx))


def max(input, dim=None, keepdim: bool = False):
    """``max(x)``: the overall maximum (ties share the gradient); ``max(x, dim)``: the namedtuple
    ``(values, indices)`` along ``dim``; ``max(x, other)``: elementwise ``maximum`` (``torch.max``).
    RuntimeError for an empty input without dim."""
    if is_tensor(dim):
        from .elementwise import maximum

        return maximum(input, dim)
    if dim is None:
        return _overall(input, "max")
    return _along(input, dim, keepdim, np.argmax, "max", MaxMin)


def min(input, dim=None, keepdim: bool = False):
    """Counterpart of ``max`` (``torch.min``): overall, ``(values, indices)`` along ``dim``, or
    elementwise ``minimum`` with a Tensor."""
    if is_tensor(dim):
        from .elementwise import minimum

        return minimum(input, dim)
    if dim is None:
        return _overall(input, "min")
    return _along(input, dim, keepdim, np.argmin, "min", _MinResult)


def _overall(input, op):
    """``max()``/``min()`` of all elements: amax/amin whose gradient NaNs share (see Amax)."""
    from .reduction import MaxAll, MinAll, reduce_dims

    if not input._array.size:
        _empty_error(input, op)
    cls = MaxAll if op == "max" else MinAll
    return cls.apply(input, dims=reduce_dims(None, input._array.ndim, op), keepdim=False,
                     evenly=True)


def _empty_error(input, op):
    raise RuntimeError(
        f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
        f"reduction dim with the 'dim' argument.\nglassgrad: the input has shape "
        f"{list(input.shape)}."
    )


def _arg(np_fn, name):
    def fn(input, dim=None, keepdim: bool = False):
        arr = input._array
        if arr.dtype.kind == "c":
            raise RuntimeError(f"{name}(): does not support complex input\nglassgrad: take "
                               ".abs() or .real first.")
        if dim is None:
            if arr.size == 0:
                raise IndexError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            out = np_fn(arr).astype(np.int64)  # NOTE: not np.asarray (vmap batched arrays)
            return primitive._make(out.reshape((1,) * arr.ndim) if keepdim else out)
        d = wrap_dim(dim, arr.ndim, name)
        if arr.ndim == 0:
            return primitive._make(np.zeros((), np.int64))
        if arr.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return primitive._make(np_fn(arr, axis=d, keepdims=keepdim).astype(np.int64))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Index of the {name[3:]}imum along ``dim`` (of the flattened input when None) "
        f"(``torch.{name}``); int64, no gradient; the first one among ties."
    )
    return fn


argmax = _arg(np.argmax, "argmax")
argmin = _arg(np.argmin, "argmin")


def aminmax(input, *, dim=None, keepdim: bool = False):
    """``(min, max)`` over ``dim`` or all elements (``torch.aminmax``)."""
    from .reduction import amax, amin

    d = () if dim is None else dim
    return _AMinMax(named_as(amin(input, d, keepdim), "AminmaxBackward0", input),
                    named_as(amax(input, d, keepdim), "AminmaxBackward0", input))
