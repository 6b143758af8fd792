"""The recording fast path of the commonest calls: ``x.tanh()``, ``x * 0.5``, ``x ** 2``.

NOTE [Fast path]: a define-by-run program spends most of its ops on a float32/float64 tensor that
requires grad, with nothing else switched on (no autocast, saved-tensor hooks, source lines,
diagnostics or vmap). For that case these closures, installed as the Tensor methods and operators
themselves, run forward, make the result and record its node in one
frame, with every per-primitive fact (forward, node class, what is saved) bound when the method
is made, and a 0-d input handed to forward as a NumPy scalar (scalar arithmetic is 5x faster
than 0-d array arithmetic, with the same result; a primitive may declare its forward's ufunc, or
for a number op on a 0-d input, the plain operation on the NumPy scalar: ``Primitive.ufunc``,
``Primitive.scalar_op``). Anything else goes to the method's general form
(``_tensor_operators.py``: promotion, autocast, ``Primitive.apply_*``), which handles everything
and explains a failing forward. The result, node and saved values are
field for field those of ``Tensor._make``, ``Node.__init__`` and ``SavedTensor`` (kept so by
tests/test_fast_path.py, which compares the two paths slot by slot).
"""

from __future__ import annotations

import numpy as np
from numpy import asarray as _asarray
from numpy import ndarray as _ndarray

from ..autograd.grad_mode import _state
from ..autograd.graph import (
    ZERO_D_META,
    InferenceVersion,
    SavedTensor,
    _Hooks,
    _sequence,
    grad_accumulator,
    own_code,
)
from ..backend import xp
from . import primitive

_new = object.__new__
_NO_EDGE = (None, 0)
_NO_ATTRS = primitive._NO_ATTRS
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def unary(prim, fallback):
    """``x.name()`` for a one-input, attribute-less primitive; ``fallback(x)`` (the method's
    general form) whenever the fast case does not apply."""
    return _fast(prim, fallback, None, False)


def scalar(prim, fallback, check_autocast: bool = False, tensor_prim=None):
    """``x <op> number`` (``prim`` takes the number as its one attribute), and ``x <op> y`` of two
    tensors of one dtype through ``tensor_prim`` when given; ``fallback(x, other)`` (the
    operator's general form) for any other operand or case."""
    binary = _binary(tensor_prim, fallback) if tensor_prim is not None else None
    return _fast(prim, fallback, prim.scalar_attr, check_autocast, binary)


def _casts_under_autocast(name: str) -> bool:
    """Whether autocast may change ``name`` for one float32/float64 input (and a number): only a
    lower-precision or banned op does; an fp32 or promote policy leaves such an input as it is."""
    from ..amp.autocast import BANNED, LOWER, POLICIES

    return any(policy.get(name.strip("_")) in (LOWER, BANNED) for policy in POLICIES.values())


def _fast(prim, fallback, key, check_autocast, binary=None):
    from ..amp.autocast import state as autocast
    from ..tensor import Tensor

    if prim._save1 == 3 or prim.multi_output or (key is None and prim.scalar_edge):
        raise TypeError(f"{prim.__name__} has no fast path")  # a declaration error, at import
    fwd = prim.forward
    node_cls = prim.node_cls
    how = prim._save1
    hooks = _Hooks
    number_edge = prim.scalar_edge
    as_scalar = prim.zero_d_as_scalar
    ufunc = prim.ufunc
    scalar_op = prim.scalar_op
    unary_op = key is None
    # _in_meta of a 0-d input, made once (NOTE: fewer tuples kept per node, fewer GC passes)
    m32, m64 = ((e, e) if number_edge else (e,) for e in ZERO_D_META)
    check_autocast = (check_autocast or unary_op) and _casts_under_autocast(fallback.__name__)

    def apply(x, other=None):
        if not (unary_op or other.__class__ is float or other.__class__ is int):
            if binary is not None and isinstance(other, Tensor):
                return binary(x, other)
            return fallback(x, other)
        a = x._array
        # the fast case: a float32/float64 ndarray that records, a Python number, nothing on
        if not (x._requires_grad and _state.enabled and type(a) is _ndarray
                and ((dt := a.dtype) is _F32 or dt is _F64)
                and not (check_autocast and autocast.on)
                and not hooks.any_on):
            return fallback(x) if unary_op else fallback(x, other)
        shape = a.shape
        try:
            if unary_op:
                attrs = _NO_ATTRS
                if ufunc is not None:
                    out = ufunc(a if shape else a[()])
                else:
                    out = fwd(xp, a if shape or not as_scalar else a[()])
            else:
                attrs = {key: other}
                if scalar_op is not None and not shape:
                    out = scalar_op(a[()], other)
                else:
                    out = fwd(xp, a if shape or not as_scalar else a[()], **attrs)
        except Exception:  # noqa: BLE001 - the general form runs it again and explains it
            return fallback(x) if unary_op else fallback(x, other)
        if out.__class__ is not _ndarray:
            out = _asarray(out)  # NumPy returns scalars for 0-d results
        r = _new(Tensor)  # Tensor._make's fields
        r._array = out
        r._grad = None
        r._base = None
        r._view_fn = None
        r._output_nr = 0
        r._grad_acc = None
        r._hooks = None
        r._post_acc_hooks = None
        r._retains_grad = False
        r._name = None
        r._requires_grad = True
        fn = x.grad_fn
        edge = (fn, x._output_nr) if fn is not None else (grad_accumulator(x), 0)
        if how == 1:  # the output (NOTE [Saved outputs] in autograd/graph.py)
            s = _new(SavedTensor)
            r._vc = s._vc = [0, None]  # NOTE [Diagnostics]: a saved tensor's counter is watched
            s._version = 0
            s._is_output = True
            s._output_nr = 0
            s._unpack_hook = None
            s._packed = None
            s._tensor = None
            s._array = out
            saved = (s,)
        else:
            r._vc = [0]
            if how == 2:  # the input (SavedTensor.__init__'s fields)
                vc = x._vc
                if vc.__class__ is InferenceVersion:  # refused there, with PyTorch's error
                    return fallback(x) if unary_op else fallback(x, other)
                s = _new(SavedTensor)
                s._version = vc[0]
                if len(vc) == 1:
                    vc.append(None)  # NOTE [Diagnostics]: a saved tensor's counter is watched
                s._is_output = False
                s._output_nr = 0
                s._unpack_hook = None
                s._packed = None
                s._tensor = x
                saved = (s,)
            else:
                saved = ()
        n = _new(node_cls)  # Node.__init__'s fields
        if number_edge:  # the number's (None, 0) edge, as PyTorch shows it
            n.next_functions = (edge, _NO_EDGE)
            n._in_meta = ((shape, dt), ((), dt)) if shape else m32 if dt is _F32 else m64
        else:
            n.next_functions = (edge,)
            n._in_meta = ((shape, dt),) if shape else m32 if dt is _F32 else m64
        n._saved = saved
        n._attrs = attrs
        n._seq = next(_sequence)
        n._freed = False  # the rest are class defaults (NOTE [Node fields])
        r.grad_fn = n
        return r

    apply = own_code(apply)  # NOTE [Own code] in autograd/graph.py
    apply.__name__, apply.__qualname__ = fallback.__name__, fallback.__qualname__
    apply.__doc__ = fallback.__doc__
    return apply


def _binary(prim, fallback):
    """``x <op> y`` for two tensors of one float32/float64 dtype, either recording (``prim`` an
    attribute-less two-input primitive that saves inputs only); ``fallback(x, y)`` otherwise."""
    from ..tensor import Tensor

    idx = prim._save_idx
    when = prim._save_when  # NOTE [Saved when needed] in primitive.py: one input each, or None
    pairs = tuple((i, -1 if w is None else w[0]) for i, w in zip(idx, when or [None] * len(idx)))
    if prim.multi_output or any(i < 0 for i in idx) or len(prim._input_names) != 2 \
            or any(w is not None and len(w) != 1 for w in when or ()):
        raise TypeError(f"{prim.__name__} has no binary fast path")  # at import
    fwd = prim.forward
    node_cls = prim.node_cls
    hooks = _Hooks
    as_scalar = prim.zero_d_as_scalar
    meta0 = {e[1]: (e, e) for e in ZERO_D_META}

    def apply(x, y):
        a = x._array
        b = y._array
        if not ((x._requires_grad or y._requires_grad) and _state.enabled
                and type(a) is _ndarray and type(b) is _ndarray and a.dtype is b.dtype
                and (a.dtype is _F32 or a.dtype is _F64)
                and not hooks.any_on):
            return fallback(x, y)
        try:
            if as_scalar:
                out = fwd(xp, a if a.shape else a[()], b if b.shape else b[()])
            else:
                out = fwd(xp, a, b)
        except Exception:  # noqa: BLE001 - the general form runs it again and explains it
            return fallback(x, y)
        if out.__class__ is not _ndarray:
            out = _asarray(out)
        r = _new(Tensor)  # Tensor._make's fields
        r._array = out
        r._grad = None
        r._base = None
        r._view_fn = None
        r._output_nr = 0
        r._grad_acc = None
        r._hooks = None
        r._post_acc_hooks = None
        r._retains_grad = False
        r._name = None
        r._requires_grad = True
        r._vc = [0]
        fn = x.grad_fn
        if fn is not None:
            ex = (fn, x._output_nr)
        else:
            ex = (grad_accumulator(x), 0) if x._requires_grad else _NO_EDGE
        fn = y.grad_fn
        if fn is not None:
            ey = (fn, y._output_nr)
        else:
            ey = (grad_accumulator(y), 0) if y._requires_grad else _NO_EDGE
        if when is not None:
            xy = (x, y)
            saved = tuple([SavedTensor(xy[i], False) if j < 0 or xy[j]._requires_grad else None
                           for i, j in pairs])
        elif idx:
            xy = (x, y)
            saved = tuple([SavedTensor(xy[i], False) for i in idx])
        else:
            saved = ()
        n = _new(node_cls)  # Node.__init__'s fields
        n.next_functions = (ex, ey)
        n._in_meta = meta0[a.dtype] if not a.shape and not b.shape else \
            ((a.shape, a.dtype), (b.shape, b.dtype))
        n._saved = saved
        n._attrs = _NO_ATTRS
        n._seq = next(_sequence)
        n._freed = False  # the rest are class defaults (NOTE [Node fields])
        r.grad_fn = n
        return r

    return own_code(apply)
