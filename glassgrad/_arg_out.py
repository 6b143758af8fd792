"""``out=`` on the public functions, with torch's rules, for every function at once.

torch's functions take ``out=``: the result is written into that tensor, which is resized when
its shape differs (with a UserWarning when it had elements), must be able to hold the result's
dtype, and may not be used while autograd records (``out=`` variants have no derivative).
glassgrad's functions mostly do not take it; ``_arg_check``'s wrapper sends a call whose only
fault was an ``out=`` it does not take here (an exception path: a call without ``out=`` costs
nothing), which runs the function out of place and writes the result as torch would.
"""

from __future__ import annotations


import numpy as np

from .autograd.grad_mode import _state, no_grad
from .tensor import Tensor
from ._user_warning import warn_user


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, Tensor))


def _write(out, result, op: str) -> None:
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not isinstance(result, Tensor):
        raise TypeError(f"{op}() returned {type(result).__name__}; out= needs a Tensor result")
    arr = result._array
    if out._array.shape != arr.shape:
        if out._array.size:
            warn_user(
                "An output with one or more elements was resized since it had shape "
                f"{list(out._array.shape)}, which does not match the required output shape "
                f"{list(arr.shape)}. This behavior is deprecated, and in a future PyTorch release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=4)
        out._array = np.empty(arr.shape, dtype=out._array.dtype)
    out._write(arr, op)


def call(fn, args, kwargs):
    """``fn(*args, **kwargs)`` for a ``kwargs`` holding an ``out=`` that ``fn`` does not take."""
    op = fn.__name__
    out = kwargs.pop("out")
    if out is None:
        return fn(*args, **kwargs)
    outs = tuple(out) if isinstance(out, (list, tuple)) else (out,)
    if _state.enabled and any(t._requires_grad for t in _tensors((*args, *kwargs.values(),
                                                                   *outs))):
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad.\nglassgrad: call it under "
            "glassgrad.no_grad(), or drop out= and use the returned tensor.")
    with no_grad():
        result = fn(*args, **kwargs)
    results = tuple(result) if isinstance(result, tuple) else (result,)
    if len(results) != len(outs):
        raise TypeError(f"{op}(): out= needs {len(results)} tensor(s), got {len(outs)}")
    for o, r in zip(outs, results):
        _write(o, r, op)
    if isinstance(result, tuple) and type(result) is not tuple:  # torch.return_types.max etc.
        return type(result)(*outs)
    return out
