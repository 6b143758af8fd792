"""Forward-mode AD (``torch.autograd.forward_ad``): dual tensors whose tangents ride every op.

NOTE [Forward AD]: while a dual level is open, ``_Hooks.trace`` (autograd/graph.py) is this
module's ``_propagate`` (chained to a tracer already installed), so ``Primitive.apply`` hands it
every op it runs, recorded or not, in-place writes and multi-output ops included; under no_grad
the op path's ``_Hooks.forward_ad`` test does the same. Nothing is added to an op while no level
is open: setting the hook turns the fast path off (``_Hooks.any_on``), as a tracer does.
Tangents live in a table keyed by the tensor's id (a weak reference checks it is the same
tensor); a tensor made outside an op (``detach()``, a factory) has none, as in PyTorch. An op's
tangent comes from its JVP rule (ops/_jvp_rules.py), computed with propagation paused, so the
rule's own ops carry no tangents: only one level exists, as in PyTorch ("Nested forward mode AD
is not supported at the moment"). Writes that bypass ``apply_inplace`` (setitem, the composite
in-place methods, ``_snapshot``) pass tangents on through ``setitem_tangent``, ``commit_tangent``
and ``copy_tangent``. A tangent carries no graph back to the primal (rules run on detached
primals under no_grad), so forward-over-reverse is not available: func/_forward.py says where
the transforms fall back.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import NamedTuple

from .graph import _Hooks


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view of the dual tensor) and its tangent, or None
    (``torch.autograd.forward_ad.UnpackedDualTensor``)."""

    primal: object
    tangent: object


class _State:
    level = -1  # the open level (0), or -1 when none is open
    tangents: dict = {}  # id(tensor) -> (weakref to it, tangent Tensor)
    paused = 0  # > 0 while a JVP rule or a custom Function's forward runs
    prev_trace = None  # the tracer installed before the level opened
    inplace_target = None  # the tensor an in-place op is writing (its tangent comes after)
    backward_runs = 0  # engine runs while a level is open (NOTE [Forward transforms], func/)


_current_level = -1  # the open level, -1 when none (torch.autograd.forward_ad._current_level)


def tangent_of(t):
    """The tangent of Tensor ``t`` at the open level, or None."""
    entry = _State.tangents.get(id(t))
    if entry is not None and entry[0]() is t:
        return entry[1]
    return None


def set_tangent(t, tangent) -> None:
    """Make ``t`` dual with ``tangent`` (a Tensor of its shape); None removes its tangent."""
    key = id(t)
    table = _State.tangents
    if tangent is None:
        table.pop(key, None)
        return

    def drop(ref, key=key, table=table):
        entry = table.get(key)
        if entry is not None and entry[0] is ref:
            del table[key]

    table[key] = (weakref.ref(t, drop), tangent)


def _propagate(cls, result, inputs, attrs) -> None:
    """NOTE [Forward AD]: ``_Hooks.trace`` while a level is open."""
    prev = _State.prev_trace
    if prev is not None:
        prev(cls, result, inputs, attrs)
    if (_State.paused or not _State.tangents or result is _State.inplace_target
            or inputs and result is inputs[0]):  # setitem's record: setitem_tangent follows
        return
    tangents = [tangent_of(t) for t in inputs]
    if all(v is None for v in tangents):
        return
    out = _run_rule(cls, result, inputs, tangents, attrs)
    if cls.multi_output:
        for r, v in zip(result, out):
            set_tangent(r, v)
    else:
        set_tangent(result, out)


def _run_rule(cls, result, inputs, tangents, attrs):
    from ..ops._jvp_rules import jvp

    _State.paused += 1
    try:
        return jvp(cls, result, inputs, tangents, attrs)
    finally:
        _State.paused -= 1


def inplace_begin(cls, target, inputs, attrs):
    """``Primitive.apply_inplace`` before the write: the new tangent of ``target``, computed out
    of place from the values before the write (None when no input is dual)."""
    if _State.paused or not _State.tangents:
        return None
    tangents = [tangent_of(t) for t in inputs]
    if all(v is None for v in tangents):
        return None
    from ..autograd.grad_mode import no_grad

    with no_grad():
        _State.paused += 1
        try:
            primals = [t.detach() for t in inputs]
            result = cls.apply(*primals, **attrs)
        finally:
            _State.paused -= 1
    _State.inplace_target = target
    return _run_rule(cls, result, primals, tangents, attrs)


def inplace_end(target, tangent) -> None:
    """After the write: ``target``'s tangent becomes ``tangent``, written into its existing
    tangent's memory so views of a dual tensor and their base keep sharing one tangent."""
    _State.inplace_target = None
    if tangent is None:  # the write failed
        return
    old = tangent_of(target)
    if old is not None and old.shape != target.shape:  # x.t_() & co. changed target's shape
        set_tangent(target, tangent)
        return
    _writable_tangent(target)._array[...] = tangent._array


def _writable_tangent(target):
    """``target``'s tangent, made (zeros) when it has none; a view's is the same view of its
    base's tangent, so a write through a view reaches the base's tangent as in PyTorch."""
    old = tangent_of(target)
    if old is not None:
        return old
    from .. import zeros_like

    base = target._base
    _State.paused += 1
    try:
        if base is not None and target._view_fn is not None:
            tangent = target._view_fn(_writable_tangent(base))
            if tangent.shape != target.shape or not tangent._array.flags.writeable:
                tangent = zeros_like(target)
        else:
            tangent = zeros_like(target)
    finally:
        _State.paused -= 1
    set_tangent(target, tangent)
    return tangent


def setitem_tangent(target, index, value) -> None:
    """``target[index] = value`` was written: the same write on the tangents."""
    if _State.paused or (tangent_of(target) is None and tangent_of(value) is None):
        return
    tangent = tangent_of(value)
    _writable_tangent(target)._array[index] = 0 if tangent is None else tangent._array


def copy_tangent(src, out) -> None:
    """``out`` (a copy of ``src``'s values, ``Tensor._snapshot``) gets a copy of its tangent."""
    tangent = tangent_of(src)
    if tangent is not None:
        set_tangent(out, tangent.clone())


def commit_tangent(target, result) -> None:
    """A composite in-place op wrote ``result`` into ``target``: the tangent follows."""
    tangent = tangent_of(result)
    if tangent is not None:
        inplace_end(target, tangent)
    elif tangent_of(target) is not None:
        from .. import zeros_like

        inplace_end(target, zeros_like(target))


def enter_dual_level() -> int:
    """Open a dual level and return it (``torch.autograd.forward_ad.enter_dual_level``); only
    one level may be open (RuntimeError otherwise, as in PyTorch)."""
    if _State.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    global _current_level
    _State.level = _current_level = 0
    _State.tangents = {}
    _State.prev_trace = _Hooks.trace
    _Hooks.trace = _propagate
    _Hooks.forward_ad = _propagate
    return 0


def exit_dual_level(*, level=None) -> None:
    """Close the open dual level, dropping every tangent
    (``torch.autograd.forward_ad.exit_dual_level``)."""
    if level is None:
        level = _State.level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _State.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    global _current_level
    _State.level = _current_level = -1
    _State.tangents = {}
    if _Hooks.trace is _propagate:
        _Hooks.trace = _State.prev_trace
    _State.prev_trace = None
    _Hooks.forward_ad = None


class dual_level(contextlib.ContextDecorator):
    """Context manager (and decorator) for one dual level: tangents made inside are dropped on
    exit (``torch.autograd.forward_ad.dual_level``). Example::

        with dual_level():
            y = unpack_dual(make_dual(x, v).sin()).tangent   # cos(x) * v
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _level_or_current(level, what: str) -> int:
    if level is None:
        level = _State.level
    elif level != _State.level:
        raise RuntimeError(f"Invalid level given to {what}")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` that carries ``tangent`` (same shape, floating or complex) at the open
    level (``torch.autograd.forward_ad.make_dual``). Raises RuntimeError with no open level, for
    a size mismatch, or a tensor already dual; ValueError for a non-floating primal or tangent."""
    if level is None and _State.level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    level = _level_or_current(level, "_make_dual")
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise ValueError(f"Expected {name} to be floating point or complex, but got: "
                             f"{t.dtype}")
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if tangent_of(tangent) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the "
            f"given forward gradient is of size {list(tangent.shape)}.")
    from .grad_mode import _state

    _State.paused += 1
    try:  # a view of tensor (PyTorch's), but none in inference mode, as there
        out = tensor.detach() if _state.inference else tensor[...]
    finally:
        _State.paused -= 1
    set_tangent(out, tangent)
    return out


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor: the primal a view without tangent, the tangent
    None for a tensor that is not dual (``torch.autograd.forward_ad.unpack_dual``)."""
    if level is None:
        level = _State.level
    if level < 0 or _State.paused:  # a custom Function's forward sees primals (PyTorch)
        return UnpackedDualTensor(tensor, None)
    level = _level_or_current(level, "_unpack_dual")
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    _State.paused += 1
    try:
        primal = tensor[...]
    finally:
        _State.paused -= 1
    return UnpackedDualTensor(primal, tangent)


def function_jvp(fn_cls, ctx, args, outs) -> None:
    """After ``Function.apply``: when an input is dual, the outputs' tangents come from the
    Function's ``jvp(ctx, *tangents)`` (a tangent per forward argument: zeros for a floating
    tensor that is not dual, None for any other value), reading ``save_for_forward``'s tensors as
    ``ctx.saved_tensors``; its NotImplementedError when it has none, and PyTorch's checks of what
    it returns (count, sizes, views of the input's tangent, in-place for dirty inputs)."""
    from .. import zeros_like
    from .engine import _Tensor

    tangents = [tangent_of(a) if isinstance(a, _Tensor) else None for a in args]
    if all(v is None for v in tangents):
        return
    tangents = [zeros_like(a) if v is None and isinstance(a, _Tensor) and _floating(a) else v
                for a, v in zip(args, tangents)]
    versions = [None if v is None else v._vc[0] for v in tangents]
    saved = ctx._saved
    ctx._saved = tuple(getattr(ctx, "saved_for_forward", ()))
    freed, ctx._freed = ctx._freed, False
    _State.paused += 1
    try:
        out = fn_cls.jvp(ctx, *tangents)
    finally:
        _State.paused -= 1
        ctx._saved, ctx._freed = saved, freed
    out = out if isinstance(out, tuple) else (out,)
    if len(out) != len(outs):
        raise RuntimeError("Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(out)})")
    dirty = {id(t) for t in getattr(ctx, "dirty_tensors", ())}
    non_diff = {id(t) for t in getattr(ctx, "non_differentiable", ())}
    for k, (o, v) in enumerate(zip(outs, out)):
        if v is None:
            continue
        if not isinstance(o, _Tensor) or id(o) in non_diff or not _floating(o):
            raise RuntimeError(
                f"Function's jvp returned a gradient at position {k}, but  the corresponding "
                "forward output is not a differentiable Tensor.You should return None at that "
                "position instead.")
        if tuple(v.shape) != tuple(o.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(o.shape)} while "
                f"the given forward gradient is of size {list(v.shape)}.")
        if id(o) in dirty:  # jvp must have written the input's tangent in place
            given, ver = next(((t, n) for a, t, n in zip(args, tangents, versions) if a is o),
                              (None, None))
            if given is not None and (v is not given or given._vc[0] == ver):
                raise RuntimeError(
                    "An inplace custom Function is not modifying the forward mode gradients "
                    "inplace. If the forward is modifying an input inplace, then the jvp function "
                    "must modify the corresponding gradient inplace.")
        else:
            _check_view_tangent(o, v, args, tangents)
        set_tangent(o, v)


def _floating(t) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def _check_view_tangent(o, v, args, tangents) -> None:
    """A forward that returns a view of an input (or the input as-is) needs a jvp that returns
    the same view of that input's tangent (PyTorch's errors)."""
    for a, t in zip(args, tangents):
        if t is None or not (o._array is a._array or o._base is not None
                             and (o._base is a or o._base is a._base)):
            continue
        if v._base is None:
            raise RuntimeError("A custom Function's forward is returning a view (or an input "
                               "as-is) but the jvp is not returning a view.")
        if t._base is None and v._base is not t:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the given grad input.")
        if t._base is not None and v._base is not t._base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the same base as the given grad input.")
        return


@contextlib.contextmanager
def paused():
    """Tangents do not propagate inside (a custom Function's forward: its ``jvp`` decides)."""
    _State.paused += 1
    try:
        yield
    finally:
        _State.paused -= 1


def is_active() -> bool:
    """Whether a dual level is open and some tensor is dual."""
    return _State.level >= 0 and bool(_State.tangents)
