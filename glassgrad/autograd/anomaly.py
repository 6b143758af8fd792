"""Anomaly detection: NaN checks on every backward output and the source line of every node.

``detect_anomaly()`` (context manager and decorator) and ``set_detect_anomaly(mode)`` switch
``_Anomaly.enabled``; the engine tests that flag once per node and calls ``run_checked`` only when
it is on. While on, every recorded node remembers the user line that created it (``node.source``),
and an error raised while a node runs backward gets "glassgrad: the node was created at file:line".
"""

from __future__ import annotations

import functools
import warnings

from ..backend import xp
from .graph import _Anomaly, _Hooks, _second_time_message


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return _Anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True while anomaly detection also checks backward outputs for NaN."""
    return _Anomaly.check_nan


_source_before = [False]  # record_source as it was before anomaly mode turned it on


def _set(mode: bool, check_nan: bool) -> tuple:
    prev = (_Anomaly.enabled, _Anomaly.check_nan, _Hooks.record_source)
    if mode and not _Anomaly.enabled:
        _source_before[0] = _Hooks.record_source
    _Anomaly.enabled = mode
    _Anomaly.check_nan = check_nan
    _Hooks.record_source = mode or _source_before[0]
    return prev


def _restore(prev: tuple) -> None:
    _Anomaly.enabled, _Anomaly.check_nan, _Hooks.record_source = prev


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on
    (``torch.autograd.detect_anomaly``).

    A backward node that returns NaN raises RuntimeError "Function 'SqrtBackward0' returned nan
    values in its 0th output."; any error raised in backward names the line that created the node.

    Example::

        >>> with glassgrad.autograd.detect_anomaly():
        ...     loss.backward()
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._prev = []
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._prev.append(_set(True, self.check_nan))

    def __exit__(self, *exc) -> None:
        _restore(self._prev.pop())

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off, as a call or a context manager
    (``torch.autograd.set_detect_anomaly(mode, check_nan=True)``)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = _set(bool(mode), check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _restore(self._prev)


def run_checked(node, grads):
    """Run ``node``'s backward; raise on NaN outputs; add the node's source line to any error."""
    try:
        if node._freed:
            raise RuntimeError(_second_time_message(node))
        out = node._run_backward(grads)
        if _Anomaly.check_nan:
            check_backward(node, out)
    except Exception as e:
        where = node.source or "<unknown: the node was created before anomaly detection was on>"
        warnings.warn(
            f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
            f"  {where}",
            UserWarning,
            stacklevel=2,
        )
        note = f"\nglassgrad: the node was created at {where}"
        if e.args and isinstance(e.args[0], str) and note not in e.args[0]:
            e.args = (e.args[0] + note,) + e.args[1:]
        raise
    return out


def check_backward(node, out) -> None:
    """PyTorch's NaN check on the gradients a node returned."""
    for i, g in enumerate(out):
        if g is None or not g.is_floating_point():
            continue
        arr = g._array
        if bool(xp.isnan(arr).any()):
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output.\n"
                f"glassgrad: gradient {i} of {node.name()} (shape {list(g.shape)}) has "
                f"{int(xp.isnan(arr).sum())} NaN value(s); the node was created at "
                f"{node.source or '<unknown>'}."
            )


def check_roots(roots) -> None:
    """glassgrad goes further than PyTorch: warn when backward starts from a NaN value."""
    for i, t in enumerate(roots):
        arr = t._array
        if t.is_floating_point() and bool(xp.isnan(arr).any()):
            warnings.warn(
                f"glassgrad: backward starts from output {i}, which contains NaN (shape "
                f"{list(t.shape)}, made by {t.grad_fn.name() if t.grad_fn else 'a leaf'}). The "
                "gradients may be finite, but the loss is not: check the forward pass.",
                UserWarning,
                stacklevel=4,
            )
