"""Tensor attribute rules of the autograd lane (issue 15, lane agrad): ``del t.grad`` clears the
gradient, ``del t.data`` is refused, and ``t.data = value`` takes only a Tensor, as in PyTorch;
``_grad_fn`` and ``_backward_hooks`` read as PyTorch's and refuse deletion.
Attached with setattr, as _tensor_methods.py does."""

from __future__ import annotations

from .autograd import diagnostics as _diagnostics
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


_requires_grad = Tensor.requires_grad
_detach_ = Tensor.detach_


def _detach_in_place(self):
    """``detach_`` (PyTorch's): a graph that saved this tensor as an input refuses to use it."""
    watched = self.grad_fn is not None and len(self._vc) > 1  # (saved for backward somewhere)
    out = _detach_(self)
    if watched:
        self._vc[0] += _diagnostics.DETACHED  # above VERSION_MASK: _version does not change
    return out


def _del_requires_grad(self) -> None:
    # PyTorch's setter sees the deletion as a non-bool value
    raise RuntimeError("requires_grad must be a bool\nglassgrad: set x.requires_grad = False "
                       "instead of deleting it.")


def _grad_fn_of(self):
    """``torch.Tensor._grad_fn``: the same node as ``grad_fn``."""
    return self.grad_fn


def _del_grad_fn(self) -> None:
    raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")


def _backward_hooks(self):
    """``torch.Tensor._backward_hooks``: the live store of the hooks ``register_hook`` added to
    this tensor (handle id -> hook, in order), or None while none was ever registered."""
    fn = self.grad_fn
    if fn is None or self._hooks is not None:
        return self._hooks
    return (fn._tensor_hooks or {}).get(self._output_nr)


def _set_backward_hooks(self, hooks) -> None:
    # as torch's setter: ``hooks`` becomes the store itself, so a leaf runs what is added to it
    # later; a non-leaf only keeps it (its registered hooks live on its grad_fn, as in torch)
    self._hooks = hooks


def _del_backward_hooks(self) -> None:
    raise RuntimeError("Deletion of _backwards_hooks not allowed!")


setattr(Tensor, "detach_", _detach_in_place)
setattr(Tensor, "requires_grad", property(_requires_grad.fget, _requires_grad.fset,
                                          _del_requires_grad, _requires_grad.__doc__))
setattr(Tensor, "_grad_fn", property(_grad_fn_of, None, _del_grad_fn, _grad_fn_of.__doc__))
setattr(Tensor, "_backward_hooks", property(_backward_hooks, _set_backward_hooks,
                                            _del_backward_hooks, _backward_hooks.__doc__))
