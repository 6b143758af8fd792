"""``torch.autograd``'s remaining public names that have a meaning here: the ``SavedTensor`` type,
the ``__torch_function__`` protocol helpers, and the engine settings (multithreading, view
replay, kineto).

The protocol helpers follow torch.overrides: an argument "has a torch function" when its type
defines ``__torch_function__`` and is not glassgrad's Tensor (glassgrad's own Tensor dispatches
nowhere); ``handle_torch_function`` calls those overrides, subclasses before their bases and
otherwise left to right, and returns the first result that is not NotImplemented.
"""

from __future__ import annotations

import abc

from .graph import SavedTensor as _SavedTensor


class SavedTensor(abc.ABC):
    """The type of a tensor a node saved for backward (``torch.autograd.SavedTensor``): what
    ``saved_tensors_hooks`` pack and unpack. Only the engine makes them; calling the class
    raises RuntimeError, as in torch."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "Trying to create a SavedTensor object from Python is forbidden.\nglassgrad: saved "
            "tensors are made by the ops that save them (see grad_fn's saved tensors).")


SavedTensor.register(_SavedTensor)


def _tensor_type():
    from ..tensor import Tensor

    return Tensor


def _overloaded(relevant_args) -> list:
    """The arguments whose types override ``__torch_function__``, in dispatch order."""
    tensor_fn = getattr(_tensor_type(), "__torch_function__", None)
    types, args = [], []
    for arg in relevant_args:
        t = type(arg)
        fn = getattr(t, "__torch_function__", None)
        if fn is None or t in types or getattr(fn, "__func__", fn) is getattr(
                tensor_fn, "__func__", tensor_fn):
            continue
        index = next((i for i, seen in enumerate(types) if issubclass(t, seen)), len(types))
        types.insert(index, t)
        args.insert(index, arg)
    return args


def has_torch_function(relevant_args) -> bool:
    """Whether any of ``relevant_args`` overrides ``__torch_function__``
    (``torch.overrides.has_torch_function``, re-exported as ``torch.autograd``'s)."""
    return bool(_overloaded(relevant_args))


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call ``public_api``'s overrides among ``relevant_args`` (``__torch_function__(func,
    types, args, kwargs)``) and return the first result that is not NotImplemented
    (``torch.overrides.handle_torch_function``). Raises TypeError when every override declines."""
    overloaded = _overloaded(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    import glassgrad

    name = getattr(public_api, "__name__", repr(public_api))
    top = getattr(glassgrad, name, None)
    if top is public_api or getattr(top, "__wrapped__", None) is public_api:
        name = f"torch.{name}"  # torch names its own functions by the public path
    else:
        name = f"{getattr(public_api, '__module__', '')}.{name}".replace("glassgrad.", "torch.")
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {list(types)}")


def is_tensor_like(inp) -> bool:
    """True for a Tensor or an object whose type defines ``__torch_function__``
    (``torch.overrides.is_tensor_like``)."""
    return type(inp) is _tensor_type() or hasattr(inp, "__torch_function__")


_MULTITHREADING = [True]


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is enabled (``torch.autograd.is_multithreading_enabled``).
    glassgrad's backward runs on the calling thread either way, as torch's does on the CPU."""
    return _MULTITHREADING[0]


class set_multithreading_enabled:
    """Enable or disable multithreaded backward, as a function call or for a ``with`` block
    (``torch.autograd.set_multithreading_enabled``); see ``is_multithreading_enabled``."""

    def __init__(self, mode: bool) -> None:
        self.prev = _MULTITHREADING[0]
        self.mode = mode
        _MULTITHREADING[0] = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _MULTITHREADING[0] = self.prev

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)


def is_view_replay_enabled() -> bool:
    """False, torch's default (``torch.autograd.is_view_replay_enabled``): glassgrad has no
    view replay to turn on."""
    return False


def kineto_available() -> bool:
    """False (``torch.autograd.kineto_available``): glassgrad has no Kineto profiler."""
    return False
