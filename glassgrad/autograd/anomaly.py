"""Anomaly detection: NaN checks on every backward output and the source line of every node.

``detect_anomaly()`` (context manager and decorator) and ``set_detect_anomaly(mode)`` switch
``_Anomaly.enabled``; the engine tests that flag once per node and calls ``run_checked`` only when
it is on. While on, every recorded node remembers the user line that created it (``node.source``),
and an error raised while a node runs backward gets "glassgrad: the node was created at file:line".

glassgrad goes further with ``check_nan``: each recorded op whose forward output holds NaN (or Inf
made from finite inputs) is noted on its node (``check_forward``, from ``Primitive.apply``'s
recording path, so nothing is paid while anomaly mode is off). A backward then names the first such
op in forward order, with shapes, dtypes, sample values and the forward traceback: it raises when
the output it starts from is non-finite because of that op, and adds it to PyTorch's "returned nan
values" error.
"""

from __future__ import annotations

import functools
import linecache
import math
import sys
import traceback

from ..backend import xp
from .graph import _PACKAGE_DIR, _Anomaly, _Hooks, _second_time_message
from .._user_warning import warn_user


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
        warn_user(
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


_running: list = []  # the nodes whose backward runs now under anomaly mode, innermost last


def note_source(node, where: str) -> None:
    """A node made under anomaly mode: its source line, and the node whose backward made it
    (PyTorch's "Previous calculation was induced by ..." for a double backward)."""
    node.source = where
    if _running:
        node._anomaly_parent = _running[-1]


def _described(node) -> str:
    where = node.source
    file, _, line = (where or "").rpartition(":")
    text = linecache.getline(file, int(line)).strip() if line.isdigit() else ""
    return f"  {where}\n    {text}" if text else f"  {where}"


def run_checked(node, grads):
    """Run ``node``'s backward; raise on NaN outputs; add the node's source line to any error."""
    try:
        if node._freed:
            raise RuntimeError(_second_time_message(node))
        _running.append(node)
        try:
            out = node._run_backward(grads)
        finally:
            _running.pop()
        if _Anomaly.check_nan:
            check_backward(node, out)
    except Exception as e:
        where = node.source or "<unknown: the node was created before anomaly detection was on>"
        if node.source:
            message = (f"Error detected in {node.name()}. Traceback of forward call that caused "
                       f"the error:\n{_described(node)}")
        else:
            message = (f"Error detected in {node.name()}. No forward pass information available. "
                       "Enable detect anomaly during forward pass for more information.")
        messages = [message]
        parent = node.__dict__.get("_anomaly_parent") if hasattr(node, "__dict__") else None
        while parent is not None:  # the backward that built this node, and so on up
            messages.append(f"Previous calculation was induced by {parent.name()}. Traceback of "
                            f"forward call that induced the previous calculation:\n"
                            f"{_described(parent)}")
            parent = parent.__dict__.get("_anomaly_parent")
        for message in messages:
            try:
                warn_user(message, UserWarning, stacklevel=2)
            except Warning:  # NOTE: warnings made errors: the backward's error is the one to
                print(f"Warning: {message}", file=sys.stderr)  # raise; torch prints to stderr
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
                f"{int(xp.isnan(arr).sum())} NaN value(s)."  # (run_checked adds the node's line)
                + (f"\nIn forward: {_current[0][1]}" if _current[0] is not None else "")
            )



_FINDING = "glassgrad_forward_nonfinite"  # node.metadata key, as PyTorch keeps "traceback_" there
_current: list = [None]  # the first forward finding in the graph of the running backward


def check_forward(node, result, inputs, attrs) -> None:
    """glassgrad goes further than PyTorch: while anomaly mode checks NaN, note on ``node`` when its
    forward output holds NaN (or Inf made from finite inputs) with the op, shapes, dtypes, sample
    values and the forward traceback. Inf arriving through an input or an attribute (a
    ``masked_fill(-inf)`` mask) is not noted; neither is NaN passed on from a noted op. A backward
    reports the first noted op in forward order (``check_graph``)."""
    arr = result._array
    if arr.dtype.kind not in "fc" or bool(xp.isfinite(arr).all()):
        return
    nan = bool(xp.isnan(arr).any())
    arrays = [t._array for t in inputs]
    finite_in = [a.dtype.kind not in "fc" or bool(xp.isfinite(a).all()) for a in arrays]
    nan_in = [a.dtype.kind in "fc" and bool(xp.isnan(a).any()) for a in arrays]
    if not nan and (not all(finite_in) or any(_non_finite_attr(v) for v in attrs.values())):
        return  # Inf came in: propagation, or a mask
    if any(bad and t.grad_fn is not None for t, bad in zip(inputs, nan_in)):
        return  # passed on from an op before it
    what = "nan" if nan else "inf"
    op = node._prim.__name__ if node._prim is not None else node.name()
    came, kind = "", "produced"
    if any(nan_in):
        k = nan_in.index(True)
        kind = "entered"
        came = (f" NaN entered through input {k} ({list(arrays[k].shape)}, "
                f"{'a leaf' if inputs[k]._requires_grad else 'data or a detached tensor'}).")
    elif not all(finite_in):
        came = f" Input {finite_in.index(False)} holds Inf, and {op} turned it into NaN."
    node.metadata[_FINDING] = (kind, (
        f"Function '{node.name()}' produced {what} values in its forward output.\n"
        f"glassgrad: {op} is the first op in forward order whose output ({list(arr.shape)} "
        f"{arr.dtype}) holds {int((~xp.isfinite(arr)).sum())} non-finite value(s).{came}\n"
        + "".join(f"  input {k}: {list(a.shape)} {a.dtype}\n" for k, a in enumerate(arrays))
        + _samples(arr, arrays)
        + "Forward traceback (most recent call last):\n" + _forward_stack()
    ))


def _non_finite_attr(value) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _samples(arr, arrays, limit: int = 3) -> str:
    lines = []
    for idx in xp.argwhere(~xp.isfinite(arr))[:limit]:
        idx = tuple(int(i) for i in idx)
        parts = []
        for k, a in enumerate(arrays):
            try:
                v = xp.broadcast_to(a, arr.shape)[idx]
            except ValueError:
                continue
            parts.append(f"input {k} = {v.item()!r}")
        lines.append(f"  at {list(idx)}: " + ", ".join(parts) + f" -> {arr[idx].item()!r}\n")
    return "".join(lines)


def _forward_stack(limit: int = 6) -> str:
    frames = [fs for fs in traceback.extract_stack(sys._getframe(2))
              if not fs.filename.startswith(_PACKAGE_DIR)]
    return "".join(traceback.format_list(frames[-limit:]))


def check_graph(roots, seen) -> None:
    """At the start of a backward in anomaly mode: find the first op in forward order that made a
    non-finite value (``check_forward``); raise when the output backward starts from is non-finite
    because of it, warn when the value came from data (PyTorch lets a NaN loss with finite
    gradients pass)."""
    first = None
    for n in seen:
        meta = n._metadata
        if meta and _FINDING in meta and (first is None or n._seq < first._seq):
            first = n
    finding = first._metadata[_FINDING] if first is not None else None
    _current[0] = finding
    for i, t in enumerate(roots):
        arr = t._array
        if not t.is_floating_point() or bool(xp.isfinite(arr).all()):
            continue
        what = "NaN" if bool(xp.isnan(arr).any()) else "Inf"
        head = (f"glassgrad: backward starts from output {i}, which contains {what} (shape "
                f"{list(t.shape)}, made by {t.grad_fn.name() if t.grad_fn else 'a leaf'}).")
        if finding is not None and finding[0] == "produced":
            raise RuntimeError(finding[1] + "\n" + head)
        warn_user(
            head + " The gradients may be finite, but the loss is not: check the forward pass."
            + ("\n" + finding[1] if finding is not None else ""),
            UserWarning,
            stacklevel=4,
        )
