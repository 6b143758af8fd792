"""Composites emitted whole during an export (NOTE [Tracing ops] in onnx/tracer.py).

Each entry names a function (by module and attribute) and an emitter ``emit(tracer, args,
kwargs, result) -> names`` (one name per Tensor of the result, flattened). While installed, the
function's every binding in glassgrad's modules is a wrapper: when a Tensor argument is a traced
value, the wrapper runs the original with tracing paused and emits its nodes; otherwise (a
constant, or no export) it is the original. Index snapshots (NOTE [Index snapshots] in
ops/_util.py) are off during an export, so an op's index attribute is its index tensor's array
and the tracer can follow it; ``no_grad`` inside forward keeps recording (``_keep_recording``).
"""

from __future__ import annotations

import contextlib
import importlib
import sys

from ..tensor import Tensor

_INHERITED = object()  # an attribute the class did not define itself: removed on undo
PATCHES: list = []  # (module name, attribute, emitter, when(args, kwargs) or None)


def patch(module: str, attr: str, when=None):
    """Decorator: ``emit`` replaces ``module.attr`` while exporting (when ``when(args,
    kwargs)`` is true, if given)."""

    def deco(emit):
        PATCHES.append((module, attr, emit, when))
        return emit

    return deco


def _tensors(obj, out):
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _tensors(o, out)
    return out


def _wrap(orig, emit, when, tracer):
    def wrapper(*args, **kwargs):
        if tracer.paused or not any(tracer.live(t) is not None
                                    for t in _tensors((args, tuple(kwargs.values())), [])):
            return orig(*args, **kwargs)
        if when is not None and not when(args, kwargs):
            return orig(*args, **kwargs)
        tracer.paused += 1
        try:
            result = orig(*args, **kwargs)
        finally:
            tracer.paused -= 1
        names = emit(tracer, args, kwargs, result)
        flat = _tensors(result, [])
        for t, n in zip(flat, names if isinstance(names, (tuple, list)) else (names,)):
            if n is not None:
                tracer.bind(t, n)
        return result

    wrapper.__wrapped__ = orig
    return wrapper


def _identity(arr):
    return arr


def _keep_recording(mode: bool) -> None:
    """``grad_mode._set_grad`` during an export: ``no_grad`` and ``inference_mode`` inside
    forward still record, so the tracer sees their ops (PyTorch's tracer records them too)."""
    from ..autograd.grad_mode import _state

    _state.grad = mode


@contextlib.contextmanager
def installed(tracer):
    """Every patch in ``PATCHES`` (and index snapshots off) for the body of the block."""
    from . import _ops_modules, _ops_rnn  # noqa: F401 - they register their patches

    undo = []
    try:
        for mod in ("glassgrad.ops.indexing", "glassgrad.ops.elementwise", "glassgrad.ops.gather"):
            m = importlib.import_module(mod)
            undo.append((m, "index_snapshot", m.index_snapshot))
            m.index_snapshot = _identity
        grad_mode = importlib.import_module("glassgrad.autograd.grad_mode")
        undo.append((grad_mode, "_set_grad", grad_mode._set_grad))
        grad_mode._set_grad = _keep_recording
        for module, attr, emit, when in PATCHES:
            owner = importlib.import_module(module) if not module.startswith("class:") else (
                _class(module[6:]))
            orig = getattr(owner, attr, None)
            if orig is None:
                continue
            _install(owner, attr, orig, _wrap(orig, emit, when, tracer), undo)
        yield
    finally:
        for target, attr, value in reversed(undo):
            if value is _INHERITED:
                delattr(target, attr)
            else:
                setattr(target, attr, value)


def _class(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _install(owner, attr, orig, wrapper, undo) -> None:
    """Replace ``orig`` by ``wrapper`` at ``owner.attr`` and wherever a glassgrad module imported
    it by name (``from ._functional_pool import max_pool2d``)."""
    if isinstance(owner, type):
        undo.append((owner, attr, owner.__dict__.get(attr, _INHERITED)))
        setattr(owner, attr, wrapper)
        return
    for name, mod in list(sys.modules.items()):
        if not (name == "glassgrad" or name.startswith("glassgrad.")) or mod is None:
            continue
        d = getattr(mod, "__dict__", {})
        for key, value in list(d.items()):
            # NOTE: public functions are bound wrapped in their argument checks (_arg_check.py)
            if value is orig or getattr(value, "__wrapped__", None) is orig:
                undo.append((mod, key, value))
                setattr(mod, key, wrapper)
