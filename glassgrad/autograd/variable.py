"""``Variable``: the deprecated pre-0.4 wrapper, now an alias of Tensor
(``torch.autograd.Variable``).

``Variable(t, requires_grad=True)`` returns ``t.detach()`` (same storage) with ``requires_grad``
set, and ``isinstance(x, Variable)`` is true of every Tensor, as in torch; ``volatile`` warns and
does nothing (``with torch.no_grad():`` replaced it).
"""

from __future__ import annotations
from .._user_warning import warn_user



class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        from ..tensor import Tensor

        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)`` -> a Tensor sharing ``data``'s
    storage, a leaf. TypeError "Variable data has to be a tensor" for anything but a Tensor;
    RuntimeError "Only Tensors of floating point and complex dtype can require gradients" for an
    integer tensor with ``requires_grad=True``."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        from .. import _legacy, dtypes
        from ..tensor import Tensor

        if volatile:
            warn_user(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                stacklevel=2,
            )
        if data is None:
            return _legacy.construct(dtypes.get_default_dtype(), (), {})
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        result = data.detach()
        if requires_grad:
            if not result.is_floating_point():
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients\n"
                    f"glassgrad: this tensor is {result.dtype!r}; convert it first with .float()."
                )
            result.requires_grad = True
        return result
