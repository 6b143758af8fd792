"""Composites at ``torch.*`` level built from primitives, with no derivative code of their own
(``torch.softmax``, ``torch.log_softmax``)."""

from __future__ import annotations


import numpy as np

from . import dtypes
from .amp.autocast import autocast_arg
from .amp.autocast import state as _autocast
from .ops._names import scalar_type
from .ops._util import wrap_dim
from .ops.elementwise import exp, to_dtype
from .ops.fused import LogSoftmax, Softmax
from .ops.reduction import logsumexp
from ._user_warning import warn_user


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warn_user(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _prepare(input, dim, dtype, name):
    if dim is None:
        dim = _softmax_dim(name, input.ndim, 4)
    if dtype is not None:
        input = to_dtype(input, dtype)
    elif input._array.dtype.kind == "c":
        kernel = "lastdim_kernel_impl" if dim in (-1, input.ndim - 1) else "kernel_impl"
        raise NotImplementedError(
            f'"{name}_{kernel}" not implemented for \'{scalar_type(input.dtype)}\'\nglassgrad: '
            f"{name} of complex numbers is not defined; take .abs() or .real first.")
    elif not input.is_floating_point():
        raise RuntimeError(
            f'"{name}_lastdim_kernel_impl" not implemented for '
            f"'{dtypes.type_name(input.dtype).split('.')[-1].replace('Tensor', '')}'\n"
            f"glassgrad: {name} needs a floating input; call .float() first."
        )
    return input, dim


def log_softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """``x - logsumexp(x, dim)``: log-probabilities along ``dim``, stable for large inputs
    (``torch.log_softmax``); any shape, floating dtypes (``dtype`` casts first)."""
    if _autocast.on and dtype is None:
        input = autocast_arg("log_softmax", input)
    x, dim = _prepare(input, dim, dtype, "log_softmax")
    if type(x._array) is np.ndarray and x._array.size:
        return LogSoftmax.apply(x, dim=wrap_dim(dim, x._array.ndim, "log_softmax"))  # one op
    return x - logsumexp(x, dim, keepdim=True)


def softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """``exp(x) / sum(exp(x), dim)``, shifted by the max for stability (``torch.softmax``): one
    op (``SoftmaxBackward0``); any shape, floating dtypes (``dtype`` casts first)."""
    if _autocast.on and dtype is None:
        input = autocast_arg("softmax", input)
    x, dim = _prepare(input, dim, dtype, "softmax")
    if type(x._array) is np.ndarray and x._array.size:
        return Softmax.apply(x, dim=wrap_dim(dim, x._array.ndim, "softmax"))  # one op
    return exp(x - logsumexp(x, dim, keepdim=True))


def softmin(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """``softmax(-x, dim)`` (``torch.nn.functional.softmin``)."""
    x, dim = _prepare(input, dim, dtype, "softmin")
    return softmax(-x, dim)
