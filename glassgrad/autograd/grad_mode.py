"""Grad modes, thread-local: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

NOTE [Grad mode flag]: the hot path reads ``_state.enabled`` once per op. The state is a
``threading.local`` so each thread has its own mode, as in PyTorch (a new thread starts enabled).
Each mode is a context manager and a decorator (bare ``@no_grad`` too); a decorated generator runs
each step under the mode, as PyTorch's decorators do.
"""

from __future__ import annotations

import functools
import inspect
import threading
from .._user_warning import warn_user


class _State(threading.local):
    # enabled: ops record (the hot path's one flag); grad: grad mode as set by the user, which
    # differs from enabled only inside inference_mode: enable_grad() there turns grad mode on,
    # but nothing records (PyTorch's InferenceMode wins), so enabled = grad and not inference
    enabled = True
    inference = False
    grad = True


_state = _State()


def is_grad_enabled() -> bool:
    """True when grad mode is on (``torch.is_grad_enabled``): operations record, except inside
    ``inference_mode``, where ``enable_grad()`` turns grad mode on yet nothing records."""
    return _state.grad if _state.inference else _state.enabled


def _set_grad(mode: bool) -> None:
    _state.grad = mode
    _state.enabled = mode and not _state.inference


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (``torch.is_inference_mode_enabled``)."""
    return _state.inference


class _DecoratorContextManager:
    """Usable as ``with mode():`` and as ``@mode()``; generators keep the mode at every step."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            warn_user(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=3,
            )
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)

        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:  # noqa: BLE001 - forwarded into the generator
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as e:
                return e.value

        return generator

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A mode without arguments, so that the bare ``@no_grad`` decorates too."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that disables recording (``torch.no_grad``).

    Tensors computed inside do not require grad; in-place updates of leaves are allowed.
    Example: ``with glassgrad.no_grad(): p -= lr * p.grad``.
    """

    def __init__(self) -> None:
        self._prev = []

    def __enter__(self) -> None:
        self._prev.append((_state.enabled, _state.grad))
        _set_grad(False)

    def __exit__(self, *exc) -> None:
        _state.enabled, _state.grad = self._prev.pop()


class enable_grad(_NoParamDecoratorContextManager):
    """Re-enables recording inside ``no_grad`` (``torch.enable_grad``)."""

    def __init__(self) -> None:
        self._prev = []

    def __enter__(self) -> None:
        self._prev.append((_state.enabled, _state.grad))
        _set_grad(True)

    def __exit__(self, *exc) -> None:
        _state.enabled, _state.grad = self._prev.pop()


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on or off, as a call, a context manager or a decorator
    (``torch.set_grad_enabled(mode)``)."""

    def __init__(self, mode: bool) -> None:
        self.prev = (_state.enabled, _state.grad)
        self.mode = bool(mode)
        _set_grad(self.mode)

    def __call__(self, fn):
        _state.enabled, _state.grad = self.prev  # as a decorator it applies only inside fn
        return super().__call__(fn)

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        _set_grad(self.mode)

    def __exit__(self, *exc) -> None:
        _state.enabled, _state.grad = self.prev


class inference_mode(_DecoratorContextManager):
    """No recording, and the tensors made inside are inference tensors that autograd refuses to
    save later (``torch.inference_mode(mode=True)``); also a bare decorator."""

    def __new__(cls, mode=True):
        if mode is None or isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # a bare decorator: mode is the function

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self._prev = []

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        self._prev.append((_state.enabled, _state.inference, _state.grad))
        # NOTE: as PyTorch's InferenceMode guard: inference_mode(False) turns grad mode on
        _state.inference = self.mode
        _set_grad(not self.mode)

    def __exit__(self, *exc) -> None:
        _state.enabled, _state.inference, _state.grad = self._prev.pop()
