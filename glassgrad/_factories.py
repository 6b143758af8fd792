"""Tensor factories (``torch.tensor``, ``zeros``, ``randn``, ...) and the random ``Generator``."""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from ._factory_args import _check_nested, _int_arg, _num, _steps
from .autograd.grad_mode import _state as _grad_state
from .autograd.graph import INFERENCE_VERSION
from .ops import _convert
from .ops._names import scalar_type
from .tensor import Tensor


from ._generator import (  # noqa: E402,F401 - re-exported: torch has them beside the factories
    Generator,
    _engine,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)


# Python's scalar types as torch reads them in dtype= (torch.tensor([1], dtype=float) is float64)
_PY_DTYPES = {float: dtypes.float64, int: dtypes.int64, bool: dtypes.bool, complex: dtypes.complex128}

def _rng(generator):
    """The generator's engine: torch's samplers (``_sampling.Samplers``) over its mt19937;
    TypeError (torch's "invalid combination of arguments") for a generator= of another type."""
    try:
        return (generator or default_generator)._rng
    except AttributeError:
        raise TypeError(
            f"received an invalid combination of arguments - got generator="
            f"{type(generator).__name__}, but expected torch.Generator generator\nglassgrad: "
            "pass generator=glassgrad.Generator() (or None for the default one).") from None


def _finish(arr, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    if _grad_state.inference:  # made under inference_mode(): autograd must refuse to save it
        t._vc = INFERENCE_VERSION
    if requires_grad:
        # NOTE: PyTorch's factory wording (capital O), not _()'s
        if not t.is_floating_point() and arr.dtype.kind != "c":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients\n"
                f"glassgrad: a {t.dtype} tensor; pass a floating dtype (dtype=glassgrad.float32)."
            )
        t.requires_grad_(True)
    return t


def _dt(dtype, default=None):
    if dtype is None:
        return (default or dtypes.get_default_dtype()).np
    if isinstance(dtype, dtypes.dtype):
        return dtype.np
    return dtypes.from_numpy_dtype(dtype).np


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s.item())
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"size must be a tuple of ints, but got an element of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _infer_array(data, dtype):
    if isinstance(data, Tensor):
        arr = data._array
        return arr.astype(dtype.np) if dtype is not None else arr.copy()
    if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype, as a 0-d array (PyTorch)
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        src = data
        if dtype is None:
            d = dtypes.from_numpy_dtype(src.dtype)
            return np.array(src, dtype=d.np)
        return np.array(src, dtype=dtype.np)
    kinds = set()  # the element types of a nested list: NumPy scalars count with their dtype
    if isinstance(data, (list, tuple)):
        data = _unwrap_nested(data, kinds)
    try:
        arr = np.asarray(data)
    except ValueError:  # NumPy's "inhomogeneous shape": find PyTorch's reason
        _check_nested(data)
        raise
    if arr.dtype == np.uint64 or arr.dtype.kind in "Of" and _big_int_in(data, arr, kinds):
        arr = _beyond_int64(data, arr, dtype)
    if dtype is not None and dtype.np.kind in "iu" and arr.dtype.kind in "iuf":
        _check_fits(arr, dtype.np)
    if arr.dtype == object:
        _check_nested(data)
        raise ValueError(
            "glassgrad.tensor: could not infer a dtype; nested sequences must be rectangular "
            "lists of numbers"
        )
    if dtype is not None:
        return np.array(arr, dtype=dtype.np)
    if any(isinstance(k, np.dtype) for k in kinds) and arr.dtype.kind in "fiub":
        return arr.astype(_sequence_dtype(kinds).np)
    if arr.dtype.kind == "f":
        return arr.astype(dtypes.get_default_dtype().np)
    if arr.dtype.kind == "c":  # Python complex numbers: the default complex dtype
        return arr.astype(dtypes.default_complex_dtype().np)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "US":
        raise TypeError(f"new(): invalid data type '{arr.dtype.kind == 'U' and 'str'}'")
    return np.array(arr, dtype=dtypes.from_numpy_dtype(arr.dtype).np)


def _big_int_in(data, arr, kinds) -> bool:
    """Whether the list (or number) ``data`` holds a Python int beyond int64."""
    if arr.dtype.kind == "f":  # ints and floats together: only a large float may be one
        if int not in kinds or not arr.size or np.abs(arr).max() < 2**63:
            return False
    return _big_int(data)


def _big_int(data) -> bool:
    if isinstance(data, (list, tuple)):
        return any(_big_int(v) for v in data)
    return data.__class__ is int and not -(2**63) <= data < 2**63


def _beyond_int64(data, arr, dtype):
    """Python ints beyond int64 (NumPy makes uint64 or object arrays of them): PyTorch's
    ValueError, unless they are stored as floats or bools."""
    if dtype is None or dtype.np.kind in "iu":
        raise ValueError(
            "Overflow when unpacking long long\nglassgrad: tensor() takes ints in the int64 range "
            "[-2**63, 2**63); pass dtype=glassgrad.float64 to store larger ones as floats."
        )
    try:
        return np.array(data, dtype=np.float64 if dtype.is_floating_point else np.bool_)
    except (TypeError, ValueError):
        return arr  # not numbers after all: the caller explains


def _check_fits(arr, np_dtype):
    """PyTorch's overflow check of the numbers of a list stored as an integer dtype (NOTE
    [Number conversion] in ops/_convert.py); an array or tensor argument wraps instead."""
    if not arr.size:
        return
    low, high = arr.min(), arr.max()
    if _convert.overflows(low.item(), np_dtype) or _convert.overflows(high.item(), np_dtype):
        raise _convert.overflow_error(np_dtype, c_names=False)


def _sequence_dtype(kinds):
    """PyTorch's dtype for a nested list: its element types promoted together, a Python float as
    the default dtype, an int as int64, a NumPy scalar as its own dtype."""
    out = None
    for k in kinds:
        d = (dtypes.from_numpy_dtype(k) if isinstance(k, np.dtype) else dtypes.bool if k is bool
             else dtypes.int64 if k is int else dtypes.get_default_dtype())
        out = d if out is None else dtypes.promote_types(out, d)
    return out


def _unwrap_nested(data, kinds):
    out = []
    for v in data:
        if isinstance(v, Tensor):  # an element: a number, as PyTorch (one element only)
            if v._array.size != 1:
                raise ValueError(
                    "only one element tensors can be converted to Python scalars\n"
                    f"glassgrad: tensor() of a list holding a {list(v.shape)} tensor; each tensor "
                    "in the list becomes one number. To join tensors use glassgrad.stack(list) "
                    "or glassgrad.cat(list)."
                )
            out.append(v._array.reshape(()).item())
        elif isinstance(v, (list, tuple)):
            out.append(_unwrap_nested(v, kinds))
        else:
            kinds.add(v.dtype if isinstance(v, np.generic) else type(v))
            out.append(v)
    return out


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory=False) -> Tensor:
    """A new leaf tensor that copies ``data`` (numbers, nested lists, arrays, tensors)
    (``torch.tensor``). Python floats become the default dtype, ints int64, bools bool.

    Raises RuntimeError for ``requires_grad=True`` on a non-floating dtype or for data of no
    number type (None), ValueError for ragged nested lists or multi-element tensors in a list.
    """
    if data is None or isinstance(data, (dict, set)):
        raise RuntimeError(
            f"Could not infer dtype of {type(data).__name__}\nglassgrad: tensor() takes numbers, "
            "nested lists of numbers, arrays or tensors; for an empty tensor use tensor([]) or "
            "glassgrad.empty(size)."
        )
    dtype = _PY_DTYPES.get(dtype, dtype) if isinstance(dtype, type) else dtype
    if dtype is not None and not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"tensor(): argument 'dtype' must be torch.dtype, not "
                        f"{type(dtype).__module__}.{type(dtype).__qualname__}\nglassgrad: pass a "
                        "glassgrad dtype (glassgrad.float64, ...), not a NumPy or Python type.")
    arr = _infer_array(data, dtype)
    if requires_grad and arr.dtype.kind not in "fc" and arr.dtype != dtypes.bfloat16.np:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return _finish(arr, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Share memory with ``data`` when it is an ndarray of a supported dtype (``torch.as_tensor``)."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and dtype is None:
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def from_numpy(ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (``torch.from_numpy``)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dtypes.from_numpy_dtype(ndarray.dtype)
    if ndarray.dtype.kind == "u" and ndarray.dtype != np.uint8:
        raise TypeError(f"can't convert np.ndarray of type numpy.{ndarray.dtype}.")
    return Tensor._make(ndarray)


def _size_kw(fn: str, args: tuple, size) -> tuple:
    """The shape from ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))`` (gat's
    ``torch.empty(size=...)``); torch's TypeErrors for both forms at once and for a bare int."""
    if size is None:
        return _size(args)
    if args:
        raise TypeError(f"{fn}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return _size((size,))


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False, out=None,
          layout=None) -> Tensor:
    """A tensor of zeros of shape ``size`` (``torch.zeros``): ``zeros(2, 3)``, ``zeros((2, 3))``
    or ``zeros(size=(2, 3))``."""
    return _finish(np.zeros(_size_kw("zeros", args, size), dtype=_dt(dtype)), requires_grad)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False, out=None,
         layout=None) -> Tensor:
    """A tensor of ones of shape ``size`` (``torch.ones``), called as ``zeros`` is."""
    return _finish(np.ones(_size_kw("ones", args, size), dtype=_dt(dtype)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``; dtype inferred from the value."""
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    dt, shape = _dt(dtype), _size((size,))
    return _finish(np.full(shape, _fill_value(fill_value, dt, shape)), requires_grad)


def _fill_value(value, np_dtype, shape):
    """A fill number (or 0-d tensor) checked as PyTorch checks it (NOTE [Number conversion])."""
    if isinstance(value, Tensor):
        value = value.item()
    return _convert.checked(value, np_dtype, "fill1" if math.prod(shape) == 1 else "fill")


def empty(*args, size=None, dtype=None, device=None, requires_grad=False, **kwargs) -> Tensor:
    """Uninitialised memory is never handed out: ``empty`` returns zeros (``torch.empty``),
    called as ``zeros`` is; ``memory_format=channels_last`` (4-D) / ``channels_last_3d`` (5-D)
    lays them out channels innermost, as torch."""
    shape = _size_kw("empty", args, size)
    fmt = kwargs.get("memory_format")
    if fmt is not None:
        from ._memory_format import order_of

        order = order_of(fmt, len(shape), "empty")
        if order is not None:
            dense = np.zeros(tuple(shape[i] for i in order), dtype=_dt(dtype))
            return _finish(dense.transpose(np.argsort(order)), requires_grad)
    return _finish(np.zeros(shape, dtype=_dt(dtype)), requires_grad)


def _like(input, dtype, op="zeros_like"):
    if not hasattr(input, "_array"):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    return input._array.shape, (dtype.np if dtype is not None else input._array.dtype)


def _type_name(value) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    shape, dt = _like(input, dtype, "zeros_like")
    return _finish(np.zeros(shape, dtype=dt), requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    shape, dt = _like(input, dtype, "ones_like")
    return _finish(np.ones(shape, dtype=dt), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    shape, dt = _like(input, dtype, "full_like")
    return _finish(np.full(shape, _fill_value(fill_value, dt, shape)), requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step`` (``torch.arange``); int64 when all
    arguments are integers, else the default float dtype."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if dtype is not None:
        _not_bool(_dt(dtype), "arange")
        if dtype.is_complex:
            raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                      f"'{scalar_type(dtype)}'")
    if vals[2] == 0 or vals[2] != vals[2]:
        raise RuntimeError("step must be nonzero")
    for v in vals[:2]:
        if isinstance(v, float) and not np.isfinite(v):
            raise RuntimeError(
                f"unsupported range: {_num(vals[0])} -> {_num(vals[1])}\nglassgrad: arange's "
                "start and end must be finite numbers."
            )
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError(
            "upper bound and lower bound inconsistent with step sign\nglassgrad: arange(start="
            f"{vals[0]}, end={vals[1]}, step={vals[2]}) never reaches end; flip the step's sign."
        )
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in vals)
        dtype = dtypes.int64 if is_int else dtypes.get_default_dtype()
    dt = _dt(dtype)
    if dt == np.int64:  # PyTorch reads int64 arguments as integers (truncated) first
        vals = [int(_convert.checked(v, dt)) for v in vals]
        if vals[2] == 0:
            raise ValueError("step must be nonzero\nglassgrad: the step truncates to 0 in an "
                             "int64 arange.")
    n = max(int(np.ceil((vals[1] - vals[0]) / vals[2])), 0)
    if dt.kind in "iu":  # start and step truncated and wrapped to the dtype, then counted
        first, step = (int(_convert.wrapped(int(v), np.dtype(np.int64))) for v in vals[::2])
        return _finish((first + np.arange(n, dtype=np.int64) * step).astype(dt), requires_grad)
    arr = (vals[0] + np.arange(n) * vals[2]).astype(dt)
    return _finish(arr, requires_grad)


def _not_bool(np_dtype, op: str) -> None:
    if np_dtype == np.bool_:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for 'Bool'")


def _ends(start, end, steps, np_dtype, op: str):
    """linspace/logspace's ends, checked against the dtype as PyTorch checks them (linspace only
    its start for one step)."""
    if steps > 1:
        _not_bool(np_dtype, op)
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    if not steps or op == "linspace" and steps == 1:
        return (_convert.checked(start, np_dtype, "fill1") if steps else 0), 0, start, end
    return _convert.checked(start, np_dtype), _convert.checked(end, np_dtype), start, end


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (``torch.linspace``);
    RuntimeError for negative ``steps``."""
    steps = _steps(steps, "linspace")
    dt = _dt(dtype)
    first, last, start, end = _ends(start, end, steps, dt, "linspace")
    if steps < 2:
        return _finish(np.full(steps, first, dtype=dt), requires_grad)
    # PyTorch's kernel: from the converted ends, a step (float64 for integers, else the dtype's
    # own, in float32 for 16-bit), then the first half from start and the rest from end
    acc = np.float64 if dt.kind in "iu" or dt == np.float64 else np.float32
    first, last = acc(first), acc(last)
    step = (last - first) / acc(steps - 1)
    if dt.kind not in "iu":
        step = acc(dt.type(step))
    i = np.arange(steps, dtype=acc)
    vals = np.where(i < steps // 2, first + step * i, last - step * (acc(steps - 1) - i))
    return _finish(vals.astype(dt), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, requires_grad=False) -> Tensor:
    """``steps`` values ``base ** linspace(start, end)`` (``torch.logspace``); RuntimeError for
    negative ``steps``."""
    steps = _steps(steps, "logspace")
    dt = _dt(dtype)
    _, _, start, end = _ends(start, end, steps, dt, "logspace")
    return _finish(np.logspace(start, end, steps, base=base).astype(dt), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The (n, m) identity matrix (``torch.eye``); RuntimeError for a negative size."""
    n = _int_arg(n, "eye", "n", 1)
    m = n if m is None else _int_arg(m, "eye", "m", 2)
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}\nglassgrad: "
                               f"eye(n={n}, m={m}) needs sizes >= 0.")
    return _finish(np.eye(n, m, dtype=_dt(dtype)), requires_grad)


# the random factories live beside: one module per concept (STYLE rule 8)
from ._factories_random import (  # noqa: E402,F401
    _float_dt,
    _complex_samples,
    rand,
    randn,
    randint,
    randperm,
    normal,
    _strided_like,
    rand_like,
    randn_like,
    randint_like,
    bernoulli,
    multinomial,
    poisson,
)
