"""``Parameter``: a Tensor that a ``Module`` registers as a learnable weight (``torch.nn.Parameter``)."""

from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor that ``Module.__setattr__`` registers as a parameter (``torch.nn.Parameter``).

    ``Parameter(data=None, requires_grad=True)`` shares ``data``'s storage; ``data=None`` gives an
    empty float tensor. ``copy.deepcopy`` gives an independent Parameter (without ``.grad``, as in
    PyTorch).

    Example::

        >>> w = glassgrad.nn.Parameter(glassgrad.zeros(2))
        >>> w
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    # NOTE [Hot path]: Tensor is slotted; a Parameter adds only a lazily made __dict__, for the
    # attributes programs tag parameters with (p._no_weight_decay = True), as torch allows
    __slots__ = ("__dict__",)

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from .._factories import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}"
            )
        out = cls._make(data._array)
        out._vc = data._vc
        out.requires_grad = requires_grad
        return out

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass  # everything happens in __new__ (Tensor.__init__ would rebuild from a legacy size)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(Tensor._make(self._array.copy()), self._requires_grad)
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._array.copy(), self._requires_grad, self.__dict__))


def _rebuild_parameter(arr, requires_grad, state=None):
    out = Parameter(Tensor._make(arr), requires_grad)
    if state:
        out.__dict__.update(state)
    return out


def is_parameter(obj) -> bool:
    return isinstance(obj, Parameter)


# issue 16, lane module: torch.nn.parameter's lazy placeholders and Buffer
from ._parameter_lazy import (  # noqa: E402,F401
    Buffer,
    UninitializedBuffer,
    UninitializedParameter,
    UninitializedTensorMixin,
    is_lazy,
)
