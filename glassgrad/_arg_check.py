"""PyTorch's TypeError for a non-Tensor where a Tensor is expected, at the public functions.

``glassgrad.exp([1.0])`` must not surface ``AttributeError: 'list' object has no attribute
'_array'`` from deep inside an op. Checking every argument up front would cost every call; instead
``install`` wraps the public functions once, and only when one raises an AttributeError on one of
its own arguments (or an element of a list/tuple argument) that is not a Tensor does the wrapper
replace it with PyTorch's message, e.g. "exp(): argument 'input' (position 1) must be Tensor, not
list". The happy path pays one extra Python call (about 0.1 us); anything else is re-raised as is.
"""

from __future__ import annotations

import functools
import inspect
import types

from .tensor import Tensor

_WRAPPED: dict = {}


def _type_name(value) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _explain(fn, params, args, kwargs, exc) -> str | None:
    obj, attr = getattr(exc, "obj", None), getattr(exc, "name", None)
    if obj is None or isinstance(obj, Tensor) or attr is None or not hasattr(Tensor, attr):
        return None
    op = fn.__name__
    named = [(k, params[k] if k < len(params) else params[-1] if params else "input", v)
             for k, v in enumerate(args)]
    named += [(None, name, v) for name, v in kwargs.items()]
    if not any(value is obj or isinstance(value, (list, tuple)) and any(v is obj for v in value)
               for _, _, value in named):  # a derived value (`source * alpha` of an ndarray)
        named = [n for n in named if type(n[2]) is type(obj)][:1]
        obj = named[0][2] if named else obj
    for k, name, value in named:
        where = f" (position {k + 1})" if k is not None else ""
        if value is obj:
            arg = f"argument '{name}'{where}" if name else f"argument {k + 1}"
            return f"{op}(): {arg} must be Tensor, not {_type_name(obj)}"
        if isinstance(value, (list, tuple)):
            for j, item in enumerate(value):
                if item is obj:
                    return (f"expected Tensor as element {j} in argument {0 if k is None else k}, "
                            f"but got {_type_name(obj)}")
    return None


def tensor_args(fn, method: bool = False):
    """Wrap public function ``fn``: an AttributeError on a non-Tensor argument becomes PyTorch's
    TypeError naming the function, the argument and its type, plus glassgrad's way out."""
    if fn in _WRAPPED:
        return _WRAPPED[fn]
    params = [p.name if p.kind != p.VAR_POSITIONAL else None
              for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as exc:
            # fn does not take torch's out= (raised by the call itself, not from inside fn)
            if "out" not in kwargs or exc.__traceback__.tb_next is not None or method:
                raise
            from . import _arg_out

            return _arg_out.call(fn, args, kwargs)
        except AttributeError as exc:
            if method:  # PyTorch counts a method's positions after self
                msg = _explain(fn, params[1:], args[1:], kwargs, exc)
            else:
                msg = _explain(fn, params, args, kwargs, exc)
            if msg is None:
                raise
            raise TypeError(
                f"{msg}\nglassgrad: {fn.__name__} takes Tensors; convert the value first with "
                "glassgrad.tensor(value) or glassgrad.as_tensor(value)."
            ) from None

    _WRAPPED[fn] = wrapper
    _WRAPPED[wrapper] = wrapper
    return wrapper


def _public_op(value) -> bool:
    module = getattr(value, "__module__", "") or ""
    return isinstance(value, types.FunctionType) and (
        module.startswith(("glassgrad.ops.", "glassgrad.nn._functional", "glassgrad._ops_"))
        or module in ("glassgrad.comparison", "glassgrad.functional")
    )


def install_methods(cls) -> None:
    """Wrap the Tensor methods that take another Tensor (two or more required positional
    parameters: ``x.add(other)``, ``x.index_add_(dim, index, source)``); one-input methods such
    as ``x.exp()`` or ``x.sum()`` cannot get a non-Tensor and stay unwrapped, at full speed."""
    for name, value in list(vars(cls).items()):
        if name.startswith("_") or not (_public_op(value) or getattr(
                value, "__module__", None) == "glassgrad._tensor_methods"):
            continue
        if not isinstance(value, types.FunctionType):
            continue
        params = inspect.signature(value).parameters.values()
        required = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                    and p.default is p.empty]
        star = any(p.kind == p.VAR_POSITIONAL for p in params) and name.endswith("_")
        if len(required) >= 2 or star:  # NOTE: x.add_(*args) forwards to index_add etc.
            setattr(cls, name, tensor_args(value, method=True))


def install(namespace: dict) -> None:
    """Wrap every public op function in ``namespace`` (a module's ``vars()``) in place."""
    import sys

    for name, value in list(namespace.items()):
        if not name.startswith("_") and _public_op(value):
            wrapper = namespace[name] = tensor_args(value)
            home = sys.modules.get(wrapper.__module__)
            if getattr(home, wrapper.__qualname__, None) is not wrapper:
                # NOTE: pickle finds a function by __module__ and __qualname__; the defining
                # module holds the unwrapped one, so point them at the namespace that holds this
                wrapper.__module__, wrapper.__qualname__ = namespace["__name__"], name
