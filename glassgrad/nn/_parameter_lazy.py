"""``UninitializedParameter``, ``UninitializedBuffer``, ``Buffer`` and ``is_lazy``
(``torch.nn.parameter``): the placeholders lazy modules hold until their first forward, and the
Tensor kind that ``Module.__setattr__`` registers as a buffer."""

from __future__ import annotations

import numpy as np

from .._factories import empty
from ..tensor import Tensor
from .parameter import Parameter

_SHAPE_ERROR = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
    "in `load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
    "Call `forward` to initialize the parameters before accessing their attributes."
)


class _Unmaterialized(np.ndarray):
    """The empty storage of a placeholder: any NumPy computation on it raises PyTorch's
    ValueError, so an op given an uninitialized parameter fails instead of returning an empty
    result. Reading its dtype, or ``astype`` (a dtype change), stays allowed."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise ValueError(_use_error(ufunc.__name__))

    def __array_function__(self, func, types, args, kwargs):
        raise ValueError(_use_error(func.__name__))


def _use_error(what: str) -> str:
    return (
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you are "
        "using a `LazyModule` or explicitly manipulating `torch.nn.parameter.Uninitialized*` "
        "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
        "parameters before calling torch functions"
    )


def _placeholder_storage(dtype):
    return empty(0, dtype=dtype)._array.view(_Unmaterialized)


class Buffer(Tensor):
    """A Tensor that a Module registers as a buffer when it is assigned as an attribute
    (``torch.nn.Buffer``); ``persistent=False`` keeps it out of ``state_dict``.

    ``Buffer(data=None, *, persistent=True)`` shares ``data``'s storage (an empty float tensor when
    None) and keeps its ``requires_grad``. Unlike PyTorch, where the result's type is plain
    ``torch.Tensor``, the object is an instance of this Tensor subclass.

    Example::

        >>> m = glassgrad.nn.Module()
        >>> m.stats = glassgrad.nn.Buffer(glassgrad.zeros(3), persistent=False)
        >>> list(dict(m.named_buffers())), list(m.state_dict())
        (['stats'], [])
    """

    __slots__ = ("persistent", "__dict__")  # __dict__: attributes programs tag buffers with

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be Tensor, not {type(data).__name__}")
        out = cls._make(data._array)
        out._vc = data._vc
        out._requires_grad = data._requires_grad
        out.persistent = persistent
        return out

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True):
        pass  # everything happens in __new__

    def __reduce_ex__(self, protocol):
        return (_rebuild_buffer, (self._array.copy(), self._requires_grad, self.persistent))


def _rebuild_buffer(arr, requires_grad, persistent):
    return Buffer(Tensor._make(arr).requires_grad_(requires_grad), persistent=persistent)


class UninitializedTensorMixin:
    """What the uninitialized placeholders share: no shape until ``materialize(shape)`` gives them
    storage and turns them into their ``cls_to_become`` (``torch.nn.parameter``)."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the placeholder storage of ``shape`` (uninitialized values, its dtype unless
        ``dtype``) and make it a ``cls_to_become`` in place, so modules and optimizers holding it
        see the real tensor."""
        self._array = empty(shape, dtype=dtype if dtype is not None else self.dtype)._array
        self.__class__ = self.cls_to_become

    def _retype(self, new: Tensor) -> None:
        """Take ``new``'s dtype (``module.double()`` on a lazy module), staying a placeholder."""
        self._array = new._array.view(_Unmaterialized)

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_ERROR)

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = self._fresh()
        memo[id(self)] = out
        return out


def is_lazy(param) -> bool:
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer``
    (``torch.nn.parameter.is_lazy``)."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (``torch.nn.UninitializedParameter``): lazy
    modules hold it until their first forward. Only dtype changes (``module.double()``) and
    ``materialize`` apply to it; reading ``.shape`` raises RuntimeError.

    ``UninitializedParameter(requires_grad=True, device=None, dtype=None)``.
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        out = Parameter.__new__(cls, empty(0, dtype=dtype), requires_grad)
        out._array = _placeholder_storage(out.dtype)
        return out

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        pass

    def _fresh(self):
        return type(self)(self._requires_grad, None, self.dtype)

    def __reduce_ex__(self, protocol):
        return (type(self), (self._requires_grad, None, self.dtype))


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer whose shape is not known yet (``torch.nn.UninitializedBuffer``), e.g. a lazy
    BatchNorm's running statistics; ``materialize`` turns it into a ``Buffer`` (PyTorch: a plain
    Tensor).

    ``UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True)``.
    """

    __slots__ = ()
    cls_to_become = Buffer

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None,
                persistent: bool = True):
        out = Buffer.__new__(cls, empty(0, dtype=dtype), persistent=persistent)
        out._array = _placeholder_storage(out.dtype)
        out._requires_grad = requires_grad
        return out

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True):
        pass

    def _fresh(self):
        return type(self)(self._requires_grad, None, self.dtype, self.persistent)

    def __reduce_ex__(self, protocol):
        return (type(self), (self._requires_grad, None, self.dtype, self.persistent))
