"""``torch.futures``: a result that may arrive later (``Future``), ``collect_all``, ``wait_all``;
and ``torch.fork``/``torch.wait``, which run the function at once on CPU, as torch's do outside
TorchScript, and hand back a completed Future.

A Future completes once, with ``set_result`` or ``set_exception``; callbacks registered with
``then`` (which returns a Future of the callback's result) or ``add_done_callback`` run in
registration order when it completes, or at once if it already has.
"""

from __future__ import annotations

import threading

__all__ = ["Future", "collect_all", "wait_all"]


class _BaseFuture:
    """``torch.Future`` (glassgrad.Future): see the module docstring; thread-safe."""

    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self) -> bool:
        """True once a result or an exception is set (``torch.futures.Future.done``)."""
        return self._done.is_set()

    def wait(self):
        """Block until completed; the value, or the exception raised (``Future.wait``)."""
        parent = getattr(self, "_parent", None)
        if parent is not None and not self._done.is_set():
            # NOTE: a then() future completes when its parent does; a parent that completes
            # only when waited on (a distributed Work's future) is driven from here
            try:
                parent.wait()
            except Exception:  # noqa: BLE001 - the callback hands it to this future
                pass
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed Future, or its exception raised (``Future.value``);
        RuntimeError before it completes."""
        if not self.done():
            raise RuntimeError("Future.value() called before the Future completed\nglassgrad: "
                               "call wait() first, or read value() inside a callback.")
        return self.wait()

    def set_result(self, result) -> None:
        """Complete with ``result`` and run the callbacks (``Future.set_result``); RuntimeError
        when already completed."""
        self._complete(result, None)

    def set_exception(self, result) -> None:
        """Complete with an exception, raised by ``wait()`` (``Future.set_exception``)."""
        assert isinstance(result, Exception), f"{result} is of type {type(result)}, not an Exception."
        self._complete(None, result)

    def _complete(self, value, error) -> None:
        with self._lock:
            if self._done.is_set():
                raise RuntimeError(
                    "Attempting to mark a completed Future as complete again. Note that a Future "
                    "can only be marked completed once.")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback) -> None:
        """Run ``callback(self)`` when completed, at once if already (``add_done_callback``)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback) -> Future:
        """A Future of ``callback(self)``, run when this one completes (``Future.then``); an
        exception in the callback completes it with torch's RuntimeError."""
        out = Future()
        out._parent = self

        def run(fut):
            try:
                result = callback(fut)
            except Exception as exc:  # noqa: BLE001 - handed to the waiter, as torch does
                out.set_exception(RuntimeError(
                    f"Got the following error when running the callback: "
                    f"{type(exc).__name__}: {exc}"))
            else:
                out.set_result(result)

        self.add_done_callback(run)
        return out

    def __repr__(self) -> str:
        return f"<glassgrad.Future {'done' if self.done() else 'pending'}>"


class Future(_BaseFuture):
    """``torch.futures.Future``: a subclass of ``glassgrad.Future``, as in torch."""


_BaseFuture.__name__ = _BaseFuture.__qualname__ = "Future"  # torch.Future's name


def collect_all(futures) -> Future:
    """A Future completed with the list of ``futures`` once all have completed
    (``torch.futures.collect_all``)."""
    futures = list(futures)
    out = Future()
    left = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            out.set_result(futures)

    if not futures:
        out.set_result([])
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures) -> list:
    """The values of ``futures``, waiting for each; the first error raised (``wait_all``)."""
    return [f.wait() for f in collect_all(futures).wait()]


def fork(func, *args, **kwargs) -> Future:
    """Run ``func(*args, **kwargs)`` now and return a completed Future of its result
    (``torch.fork``/``torch.jit.fork`` outside TorchScript); its exception propagates."""
    out = Future()
    out.set_result(func(*args, **kwargs))
    return out


def wait(future):
    """The value of a Future made by ``fork`` (``torch.wait``/``torch.jit.wait``)."""
    return future.wait()
