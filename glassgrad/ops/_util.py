"""Helpers shared by the op modules: operand promotion, scalar wrapping, dim wrapping, views.

NOTE [Promotion]: primitives see arrays of one dtype. The public functions promote first
(PyTorch's ``result_type``) and cast with the differentiable ``to``, so every gradient comes back in
its input's dtype without any op knowing about mixed dtypes.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import _state
from ..autograd.graph import InferenceVersion, no_accumulator
from . import _view_meta, primitive
from ._convert import _python_int_range, wrapped


def T():
    """The Tensor class (bound at import of tensor.py; ops never import it)."""
    return primitive.Tensor


# NOTE [16-bit accumulation]: PyTorch reduces float16/bfloat16 in float32 (its accumulate type)
# and rounds the result once to the input dtype. NumPy adds bfloat16 (ml_dtypes) in 16 bits, and
# float16 too along a strided axis or in a scan, so 10,000 x 0.1 summed to 32. Every forward that
# reduces tests ``half(x.dtype)`` and then runs on float32 copies (``widened``): float32 and
# float64 pay that one test and nothing else. PyTorch 2.13's CPU kernels keep 16 bits, and so does
# glassgrad, in ``prod``, ``index_add``, ``index_put(accumulate=True)`` (so an indexing gradient)
# and the embedding gradient: 10,000 x 0.1 gives 32 (or 256 for ones) there in both.


def index_snapshot(arr):
    """``arr``, an index or mask read from a user's tensor, copied when a node may keep it.

    NOTE [Index snapshots]: nodes keep index and mask arrays as attributes, not SavedTensors, so
    no version counter watches them; an in-place write to the index tensor between forward and
    backward (``y = x[i]; i[1] = 2``) would send gradients to the new positions, a wrong number
    without an error. PyTorch raises "modified by an inplace operation" there; glassgrad keeps
    the forward's index and gives the forward's gradient. Under no_grad nothing is kept."""
    if _state.enabled and arr.__class__ is np.ndarray and arr.flags.writeable:
        return arr.copy()
    return arr


def half(dt) -> bool:
    """Whether ``dt`` is float16 or bfloat16 (ml_dtypes' bfloat16 is NumPy kind 'V')."""
    return dt.itemsize == 2 and dt.kind in "fV"


def divide_count(a, n: int):
    """``a / n`` for a count ``n`` rounded once to ``a``'s dtype: a 16-bit type divides in
    float32, since ``n`` itself may not be representable (bfloat16(3000) is 3008, float16(70000)
    is inf)."""
    if half(a.dtype):
        return (a / np.float32(n)).astype(a.dtype)
    return a / a.dtype.type(n)


def widened(forward, xp, *arrays, **attrs):
    """``forward(xp, *arrays, **attrs)`` with the arrays of the first one's 16-bit dtype promoted
    to float32, and its float32 result(s) rounded once back to that dtype (NOTE [16-bit
    accumulation])."""
    dt = arrays[0].dtype
    wide = np.float32
    out = forward(xp, *[a.astype(wide) if getattr(a, "dtype", None) == dt else a
                        for a in arrays], **attrs)
    if type(out) is tuple:
        return tuple(o if o is None or o.dtype != wide else o.astype(dt) for o in out)
    return out.astype(dt) if out.dtype == wide else out


def is_tensor(x) -> bool:
    return isinstance(x, primitive.Tensor)


def scalar(value, np_dtype) -> object:
    """Wrap a Python/NumPy number as a 0-d Tensor of ``np_dtype`` (never requires grad); a Python
    int wraps into an integer dtype as in PyTorch (NOTE [Number conversion] in _convert.py)."""
    if value.__class__ is int:
        return primitive._make(np.asarray(wrapped(value, np.dtype(np_dtype))))
    return primitive._make(np.asarray(value, dtype=np_dtype))


def cast(t, np_dtype):
    if t._array.dtype == np_dtype:
        return t
    from .elementwise import to_dtype

    return to_dtype(t, dtypes._FROM_NP[np_dtype])


def promote(a, b, op: str, float_only: bool = False):
    """Two operands (Tensor or number) -> two Tensors of PyTorch's result dtype."""
    Tensor = primitive.Tensor
    ta = isinstance(a, Tensor)
    tb = isinstance(b, Tensor)
    if ta and tb:
        if a._array.dtype == b._array.dtype and not float_only:
            return a, b
        rd = dtypes.result_type(a, b)
    elif ta:
        _check_number(b, op)
        rd = _no_uint64(dtypes.result_type(a, b), a, b)
    elif tb:
        _check_number(a, op)
        rd = _no_uint64(dtypes.result_type(a, b), b, a)
    else:
        raise TypeError(f"{op}(): expected at least one Tensor, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if float_only and rd._kind < 2:
        rd = dtypes.get_default_dtype()
    np_dt = rd.np
    a = cast(a, np_dt) if ta else scalar(a, np_dt)
    b = cast(b, np_dt) if tb else scalar(b, np_dt)
    return a, b


def _no_uint64(rd, t, number):
    """PyTorch reads a Python int in [2**63, 2**64) as a uint64, which a bool tensor cannot
    promote with (an integer tensor takes it wrapped: NOTE [Number conversion])."""
    if number.__class__ is int and number >= 2**63 and t._array.dtype == np.bool_:
        _python_int_range(number)
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            "Bool and UInt64\nglassgrad: the number is beyond int64; use a smaller one.")
    return rd


def write_out(prim, x, out, op: str):
    """``fn(x, out=out)``: PyTorch refuses it under autograd, resizes a differently shaped
    ``out`` (warning when it had elements), and refuses a result its dtype cannot hold."""
    if _state.enabled and (x._requires_grad or out._requires_grad):
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad.")
    result = prim.forward(np, x._array)
    resize_out(out, result.shape)
    out._write(result, op)
    return out


def resize_out(out, shape, stacklevel: int = 4) -> None:
    """PyTorch resizes an ``out=`` tensor of another shape, warning when it had elements."""
    if out._array.shape != shape:
        if out._array.size:
            from .._user_warning import warn_user

            warn_user(
                "An output with one or more elements was resized since it had shape "
                f"{list(out._array.shape)}, which does not match the required output shape "
                f"{list(shape)}.", UserWarning, stacklevel=stacklevel)
        out._array = np.empty(shape, dtype=out._array.dtype)


def _check_number(x, op: str) -> None:
    if not isinstance(x, (int, float, bool, complex, np.number, np.bool_)):
        raise TypeError(
            f"{op}(): unsupported operand type {type(x).__name__}; expected a Tensor or a number"
        )


def cj(t):
    """``t.conj()`` for a complex Tensor or array, ``t`` itself otherwise: the factor a
    holomorphic derivative rule multiplies the incoming gradient by is conjugated (NOTE [Complex
    gradients] in complex_ops.py), and a real dtype pays one dtype test."""
    if getattr(t, "_array", t).dtype.kind == "c":
        return t.conj()
    return t


def as_tensor_arg(x, like, op: str):
    """Accept a Tensor or number where a Tensor is expected; numbers take ``like``'s dtype."""
    if is_tensor(x):
        return x
    _check_number(x, op)
    return scalar(x, like._array.dtype)


def wrap_dim(dim: int, ndim: int, op: str = "op") -> int:
    """PyTorch's dim wrapping: -1 is the last dim; IndexError naming the valid range otherwise."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
            f" (in {op}, tensor of {ndim} dims)"
        )
    return dim % n if ndim else 0


def wrap_dims(dim, ndim: int, op: str = "op") -> tuple:
    """``dim`` as int, tuple/list or None -> a sorted tuple of non-negative dims (None = all)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (wrap_dim(int(dim), ndim, op),)
    out = tuple(sorted({wrap_dim(int(d), ndim, op) for d in dim}))
    if len(out) != len(tuple(dim)):
        raise RuntimeError(f"{op}: dim {list(dim)} appears multiple times in the list of dims")
    return out


# NOTE [Stale views]: id(base) -> {id(view): weakref to the view} for the views made from a base
# while recording. An in-place write recorded on the base or on any of its views gives the base a
# new history; PyTorch then rebuilds every other view's grad_fn over it (AsStridedBackward0), or
# their gradients would skip the write: shape.refresh_views replays each live view's _view_fn on
# the base. Keyed by id, not by Tensor (a Tensor's == is elementwise); entries leave with the
# objects (weakref callbacks).
VIEWS: dict = {}


def mark_view(result, x, fn):
    """Make ``result`` a view of ``x``'s base when the arrays share memory (see rebase_view)."""
    if not np.may_share_memory(result._array, x._array):
        return result
    base = x._base
    if base is None:
        base = result._base = x
        result._view_fn = fn
    else:
        prev = x._view_fn
        result._base = base
        result._view_fn = lambda b: fn(prev(b))
    result._vc = x._vc
    if not _state.enabled:  # a no_grad view: a recorded in-place write to it is refused
        _view_meta.mark(result, _view_meta.INFERENCE if _state.inference else _view_meta.NO_GRAD)
        if x._requires_grad and x._vc.__class__ is not InferenceVersion:
            result._requires_grad = True  # through its base, as PyTorch's view
            result._grad_acc = no_accumulator
        return result
    if _view_meta.CREATION_META:  # NOTE [View creation] in _view_meta.py
        _view_meta.inherit(result, x)
    key = id(base)  # NOTE [Stale views]
    views = VIEWS.get(key)
    if views is None:
        views = VIEWS[key] = {}
        weakref.finalize(base, VIEWS.pop, key, None)
    vid = id(result)
    views[vid] = weakref.ref(result, lambda _, views=views, vid=vid: views.pop(vid, None))
    return result


def shape_str(t) -> str:
    return f"{list(t.shape)} {t.dtype}"


def reject_bool_sub(input, other) -> None:
    """PyTorch refuses ``-`` with exactly one bool operand (a bool tensor or a Python bool)."""
    for v in (input, other):
        if v.__class__ is int:  # (after Python's own int range check, as in PyTorch)
            _python_int_range(v)
    if _is_bool(input) != _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _is_bool(v) -> bool:
    return v.__class__ is bool or (is_tensor(v) and v._array.dtype == np.bool_)
