"""How PyTorch turns a Python number into an element of a dtype.

NOTE [Number conversion]: two rules, and NumPy follows neither.

- Storing a number (``tensor([v], dtype=d)``, ``full``, ``fill_``, ``x[i] = v``, ``masked_fill``,
  ``clamp`` bounds, a linspace end) is checked (c10's ``checked_convert``): a float that is NaN,
  infinite or out of range for an integer dtype, a finite float beyond a floating dtype's range,
  or an int outside an integer dtype's range raises "value cannot be converted to type int8_t
  without overflow". Unsigned dtypes also take negative ints down to ``-max`` (two's complement:
  ``full((1,), -1, dtype=uint8)`` is 255); bool takes anything; ints into floating dtypes are
  never refused. NumPy instead wraps silently (``astype``) or raises its own OverflowError.
- An operand of arithmetic (``uint8_tensor * -1``, ``int8_tensor + 200``) is not checked: the int
  becomes an int64 (or uint64) and then the op's dtype, wrapping (two's complement), so
  ``uint8 * -1`` is 255. Only ints beyond 64 bits raise (OverflowError, as Python's own).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .. import dtypes

# the C++ type names of PyTorch's message for fill/full/clamp, and the dtype names for tensor()
_C_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t",
}
_INT64_MIN, _UINT64_END = -(2**63), 2**64
_F32 = np.dtype(np.float32)
_FLOAT_MAX = {d: float(ml_dtypes.finfo(d).max) for d in (np.dtype(np.float16), dtypes.bfloat16.np,
                                                          _F32)}
_FLOAT_MAX[np.dtype(np.float64)] = math.inf  # a Python float always fits


def _python_int_range(value: int) -> None:
    if not _INT64_MIN <= value < _UINT64_END:  # Python's own messages (PyTorch's too)
        raise OverflowError("int too big to convert" if value > 0
                            else "can't convert negative int to unsigned")


def overflows(value, np_dtype, op: str = "fill") -> bool:
    """Whether PyTorch refuses to store the number ``value`` in ``np_dtype`` (the NOTE above;
    ``op`` as in ``checked``)."""
    kind = np_dtype.kind
    if kind == "b" or isinstance(value, (bool, np.bool_)):
        return False
    if kind in "iu":
        info = np.iinfo(np_dtype)
        if isinstance(value, (int, np.integer)):
            low = -int(info.max) if kind == "u" else int(info.min)
            return not low <= int(value) <= int(info.max)
        value = float(value)
        return not (math.isfinite(value) and info.min <= value <= info.max)
    value = float(value)
    if op == "setitem":  # PyTorch's setitem checks floats into float32 only
        return np_dtype == _F32 and math.isfinite(value) and abs(value) > _FLOAT_MAX[_F32]
    if op == "fill1":  # one element: PyTorch goes through float32 (inf fits a 16-bit type)
        if isinstance(value, int) or np_dtype.itemsize == 2 and abs(value) > _FLOAT_MAX[_F32]:
            return False
    return math.isfinite(value) and abs(value) > _FLOAT_MAX[np_dtype]


def overflow_error(np_dtype, c_names: bool = True) -> RuntimeError:
    """PyTorch's RuntimeError for a number that does not fit ``np_dtype``."""
    name = dtypes._FROM_NP[np.dtype(np_dtype)].name
    shown = _C_NAMES[name] if c_names else name
    return RuntimeError(
        f"value cannot be converted to type {shown} without overflow\nglassgrad: the number does "
        f"not fit a {name} element (NaN, inf or out of range); convert it first, or use a wider "
        "dtype."
    )


def checked(value, np_dtype, op: str = "fill"):
    """``value`` as a NumPy scalar of ``np_dtype`` under PyTorch's storing rule (NOTE [Number
    conversion]). ``op``: 'fill' (full, fill_, linspace ends...), 'fill1' (the same into one
    element: PyTorch's fast path converts floats through float32 and leaves ints unchecked),
    'setitem' (a ValueError for ints beyond int64; floats unchecked)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "c":
        return np.asarray(value, dtype=np_dtype)[()]
    if isinstance(value, (complex, np.complexfloating)):  # torch stores the real part of a
        if value.imag:  # complex number into a real dtype only when it has no imaginary part
            raise overflow_error(np_dtype)
        value = value.real
    if isinstance(value, int) and not isinstance(value, bool):
        if op == "setitem" and not _INT64_MIN <= value < 2**63:
            raise ValueError("Overflow when unpacking long long")
        _python_int_range(value)
        if value >= 2**63 and np_dtype.kind in "iu":  # a uint64 number: no signed dtype holds it
            raise overflow_error(np_dtype)
    if overflows(value, np_dtype, op):
        raise overflow_error(np_dtype)
    return wrapped(value, np_dtype)


def wrapped(value, np_dtype):
    """``value`` as a NumPy scalar of ``np_dtype``, a Python int wrapping in two's complement
    (PyTorch's rule for an arithmetic operand: NOTE [Number conversion])."""
    if isinstance(value, int) and not isinstance(value, bool) and np_dtype.kind in "iu":
        _python_int_range(value)
        bits = 8 * np_dtype.itemsize
        value &= (1 << bits) - 1
        if np_dtype.kind == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
    elif isinstance(value, int) and not isinstance(value, bool):
        _python_int_range(value)
    return np.asarray(value, dtype=np_dtype)[()]
