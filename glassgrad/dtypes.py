"""dtype objects, the default dtype and PyTorch's type-promotion rules (``torch.dtype``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np


class dtype:
    """A tensor element type, like ``torch.dtype``: compare with ``==``, read ``is_floating_point``.

    ``itemsize`` is in bytes. ``np`` is the NumPy dtype that stores it (bfloat16 via ml_dtypes).
    """

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_kind")

    def __init__(self, name: str, np_dtype, kind: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self._kind = kind  # 0 bool, 1 integer, 2 floating, 3 complex: PyTorch's categories
        self.is_floating_point = kind == 2
        self.is_complex = kind == 3
        self.is_signed = name not in ("bool", "uint8")
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"glassgrad.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> dtype:
        """The real dtype of a complex one's parts (complex64 -> float32); itself otherwise."""
        return _TO_REAL.get(self.name, self)

    def to_complex(self) -> dtype:
        """The complex dtype with this dtype's parts (float64 -> complex128); torch raises for
        integers and bool, and so does glassgrad."""
        if self._kind == 3:
            return self
        if self._kind != 2:
            raise RuntimeError(f"Unsupported dtype {self.name} for to_complex")
        return complex128 if self.name == "float64" else complex64


float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
float16 = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2)
int64 = dtype("int64", np.int64, 1)
int32 = dtype("int32", np.int32, 1)
int16 = dtype("int16", np.int16, 1)
int8 = dtype("int8", np.int8, 1)
uint8 = dtype("uint8", np.uint8, 1)
bool = dtype("bool", np.bool_, 0)  # noqa: A001 - torch.bool
# NOTE: no complex32 (chalf): NumPy has no complex of two float16s, so glassgrad leaves it out
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
_TO_REAL = {"complex64": float32, "complex128": float64}

float = float32  # noqa: A001 - torch.float
double = float64
half = float16
long = int64
int = int32  # noqa: A001 - torch.int
short = int16
cfloat = complex64
cdouble = complex128

ALL = (float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8, bool, complex64,
       complex128)
_NAMES = {d.name: d for d in ALL}
_FROM_NP = {d.np: d for d in ALL}
_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
    "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
}


def _by_name(name: str) -> dtype:
    return _NAMES[name]


def type_name(d: dtype) -> str:
    """PyTorch's legacy type name (``torch.FloatTensor``) used in its error messages."""
    return "torch." + _TYPE_NAMES[d.name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The glassgrad dtype for a NumPy dtype; TypeError for one PyTorch has no tensor type for."""
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except KeyError:
        kind = np.dtype(np_dtype).kind
        if kind == "U" or kind == "O" or kind == "S":
            raise TypeError(
                f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types "
                "are: float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, and bool."
            ) from None
        if kind == "u":
            return int64
        if kind == "c":  # complex256 (long double parts): torch has no such type either
            raise TypeError(f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only "
                            "supported types are: complex128, complex64, float64, float32, "
                            "float16, bfloat16, int64, int32, int16, int8, uint8, and bool."
                            ) from None
        raise


class _DefaultDtype:
    __slots__ = ("value",)

    def __init__(self):
        self.value = float32


_default = _DefaultDtype()


def set_default_dtype(d: dtype) -> None:
    """Set the floating dtype of new tensors (``torch.set_default_dtype``); float32 or float64."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default.value = d


def get_default_dtype() -> dtype:
    """The floating dtype of new tensors (``torch.get_default_dtype``), float32 unless changed."""
    return _default.value


_PROMOTE_CACHE: dict = {}


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's ``torch.promote_types``: bool < integers < floating; float16 + bfloat16 -> float32."""
    key = (a, b)
    hit = _PROMOTE_CACHE.get(key)
    if hit is not None:
        return hit
    if a is b:
        out = a
    elif a._kind == 3 or b._kind == 3:
        out = _complex_promote(a, b)
    elif a._kind != b._kind:
        out = a if a._kind > b._kind else b
    elif a._kind == 2:
        if {a.name, b.name} == {"float16", "bfloat16"}:
            out = float32
        else:
            out = a if a.itemsize >= b.itemsize else b
    else:
        out = _FROM_NP[np.promote_types(a.np, b.np)]
    _PROMOTE_CACHE[key] = out
    return out


def _complex_promote(a: dtype, b: dtype) -> dtype:
    """A complex operand wins the category, and the wider float part wins the width:
    float64 + complex64 is complex128, float16 + complex64 complex64 (torch)."""
    parts = (a.to_real(), b.to_real())
    wide = any(p is float64 for p in parts)
    return complex128 if wide else complex64


def default_complex_dtype() -> dtype:
    """The complex dtype matching the default float (complex64 for float32, torch's rule)."""
    return complex128 if _default.value is float64 else complex64


def result_type(*operands) -> dtype:
    """PyTorch's ``torch.result_type`` over Tensors and Python scalars.

    Dimensioned tensors outrank 0-d tensors, which outrank Python scalars, unless a lower-ranked
    operand is of a higher category (bool < integer < floating): ``int_tensor * 0.5`` is float32,
    ``float32_tensor * float64_0d_tensor`` stays float32.
    """
    dim_r = zero_r = wrapped_r = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is not None and hasattr(x, "_array"):
            if x._array.ndim:
                dim_r = d if dim_r is None else promote_types(dim_r, d)
            else:
                zero_r = d if zero_r is None else promote_types(zero_r, d)
            continue
        d = scalar_dtype(x)
        wrapped_r = d if wrapped_r is None else promote_types(wrapped_r, d)
    return _combine(dim_r, _combine(zero_r, wrapped_r))


def scalar_dtype(x) -> dtype:
    """The dtype a Python or NumPy scalar takes when wrapped: float -> default, int -> int64."""
    if isinstance(x, builtins_bool) or isinstance(x, np.bool_):
        return bool
    if isinstance(x, builtins_int) or isinstance(x, np.integer):
        return int64
    if isinstance(x, builtins_float) or isinstance(x, np.floating):
        return _default.value
    if isinstance(x, builtins_complex) or isinstance(x, np.complexfloating):
        return default_complex_dtype()
    raise TypeError(f"glassgrad: expected a Tensor or a number, got {type(x).__name__}")


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._kind >= lower._kind:
        return higher
    if lower._kind == 3 and higher._kind == 2:
        # a complex scalar/0-d tensor next to a float tensor keeps the tensor's width
        return higher.to_complex()
    if lower._kind >= 2:
        # a float scalar/0-d tensor next to an integer tensor gives the default float (or its own)
        return lower
    return promote_types(higher, lower)


import builtins as _builtins  # noqa: E402

builtins_bool = _builtins.bool
builtins_int = _builtins.int
builtins_float = _builtins.float
builtins_complex = _builtins.complex
