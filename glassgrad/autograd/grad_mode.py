"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode`` (thread-local).

NOTE [Grad mode flag]: the hot path reads ``_state.enabled`` once per op. The state is a
``threading.local`` so each thread has its own mode, as in PyTorch.
"""

from __future__ import annotations

import functools
import threading


class _State(threading.local):
    enabled = True
    inference = False


_state = _State()


def is_grad_enabled() -> bool:
    """True when operations are recorded for autograd (``torch.is_grad_enabled``)."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _DecoratorContextManager:
    """Usable as ``with mode():`` and as ``@mode()`` (or bare ``@no_grad``)."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Context manager and decorator that disables recording (``torch.no_grad``).

    Example: ``with glassgrad.no_grad(): p -= lr * p.grad``.
    """

    def __init__(self, orig_func=None):
        self._prev = []
        if callable(orig_func):  # bare @no_grad
            self._fn = orig_func
            functools.update_wrapper(self, orig_func)

    def __call__(self, *args, **kwargs):
        fn = getattr(self, "_fn", None)
        if fn is not None:
            with no_grad():
                return fn(*args, **kwargs)
        return super().__call__(*args)

    def __enter__(self):
        self._prev.append(_state.enabled)
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self._prev.pop()


class enable_grad(_DecoratorContextManager):
    """Re-enables recording inside ``no_grad`` (``torch.enable_grad``)."""

    def __init__(self):
        self._prev = []

    def __enter__(self):
        self._prev.append(_state.enabled)
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self._prev.pop()


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on or off, as a function call or a context manager (``torch.set_grad_enabled``)."""

    def __init__(self, mode: bool):
        self._prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def clone(self):
        return set_grad_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self._prev


class inference_mode(_DecoratorContextManager):
    """No recording and tensors marked as inference tensors (``torch.inference_mode(mode=True)``)."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self._prev = []

    def clone(self):
        return inference_mode(self.mode)

    def __enter__(self):
        self._prev.append((_state.enabled, _state.inference))
        if self.mode:
            _state.enabled = False
            _state.inference = True

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self._prev.pop()
