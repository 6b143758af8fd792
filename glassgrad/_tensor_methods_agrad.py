"""Tensor attribute rules of the autograd lane (issue 15, lane agrad): ``del t.grad`` clears the
gradient, ``del t.data`` is refused, and ``t.data = value`` takes only a Tensor, as in PyTorch.
Attached with setattr, as _tensor_methods.py does."""

from __future__ import annotations

from .tensor import Tensor

_grad, _data = Tensor.grad, Tensor.data


def _del_grad(self) -> None:
    _grad.fset(self, None)


def _set_data(self, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    _data.fset(self, value)


def _del_data(self) -> None:
    raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")


setattr(Tensor, "grad", property(_grad.fget, _grad.fset, _del_grad, _grad.__doc__))
setattr(Tensor, "data", property(_data.fget, _set_data, _del_data, _data.__doc__))
