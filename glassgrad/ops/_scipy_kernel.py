"""scipy.special kernels on glassgrad's arrays, and the input checks of the ops that use them.

SciPy is the well-kept library for special functions (Cephes, Boost and AMOS underneath, the same
families PyTorch's own kernels come from), so glassgrad does not keep approximations of its own
beyond erf/erfc/erfinv. PyTorch's CPU kernels compute float16/bfloat16 in float32 and round once;
``run`` does the same.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ._names import SCALAR_TYPE, cast_error
from ._util import cast, half, is_tensor, promote, resize_out
from .piecewise import _fp_quiet

_COMPLEX_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


class _LazySpecial:
    """``scipy.special``, imported at a kernel's first call: its import costs about half a
    second, which every ``import glassgrad`` would otherwise pay for functions most programs
    never call. ``sc.gammaln`` is a function that looks the ufunc up when it runs."""

    __slots__ = ()

    def __getattr__(self, name):
        def kernel(*args, **kwargs):
            import scipy.special

            return getattr(scipy.special, name)(*args, **kwargs)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel


sc = _LazySpecial()


def run(fn, *arrays):
    """``fn(*arrays)`` (a scipy.special ufunc) in the first array's floating dtype, quietly (a
    pole is inf and a domain error nan, as in PyTorch). An integer first array (an in-place op on
    an integer tensor) keeps scipy's float64 result, so the write refuses it with torch's error."""
    dt = arrays[0].dtype
    if half(dt):
        arrays = [a.astype(np.float32) if a.dtype == dt else a for a in arrays]
    with _fp_quiet():
        out = np.asarray(fn(*arrays))
    return out.astype(dt, copy=False) if dt.kind in "fV" else out


def dtype_name(dt) -> str:
    """A NumPy dtype as PyTorch's ScalarType name (``Float``, ``Long``, ``ComplexFloat``)."""
    return SCALAR_TYPE.get(dt.name) or _COMPLEX_NAMES.get(dt.name, dt.name)


def not_implemented(kernel: str, dt, op: str) -> NotImplementedError:
    """PyTorch's error for a dtype its kernel has no loop for."""
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{dtype_name(dt)}'\nglassgrad: {op} takes a real "
        "floating tensor of a supported dtype; convert it first (e.g. .double()).")


def float_input(x, op: str, kernel: str, half_ok: bool = True):
    """``x`` for a one-input special function: integer and bool promote to the default float
    dtype (as PyTorch); complex (and 16-bit floats where ``half_ok`` is False) are refused with
    PyTorch's NotImplementedError naming ``kernel``."""
    if not is_tensor(x):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    dt = x._array.dtype
    if dt.kind in "biu":
        return cast(x, dtypes.get_default_dtype().np)
    if dt.kind == "c" or (not half_ok and half(dt)):
        raise not_implemented(kernel, dt, op)
    return x


def float_pair(a, b, op: str, kernel: str, half_ok: bool = True, ints: bool = True):
    """Two operands (Tensor or number) promoted to PyTorch's result dtype, integers to the
    default float dtype when ``ints`` (else refused as PyTorch's kernel does)."""
    a, b = promote(a, b, op, float_only=ints)
    dt = a._array.dtype
    if dt.kind in "biuc" or (not half_ok and half(dt)):
        raise not_implemented(kernel, dt, op)
    return a, b


def with_out(result, out, op: str):
    """``result``, or written into ``out`` (``fn(..., out=out)``): PyTorch refuses ``out=``
    under autograd and resizes an ``out`` of another shape (warning when it had elements); a
    result ``out``'s dtype cannot hold is torch's cast error (from ``Tensor._write``)."""
    if out is None:
        return result
    if result._requires_grad or out._requires_grad:
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad.")
    if result.dtype._kind > out.dtype._kind:  # (the result's own dtype named, not the default)
        raise cast_error(result.dtype, out.dtype, op)
    resize_out(out, result._array.shape)
    out._write(result._array, op)
    return out


def tensors(input, other, op: str, names=("input", "other")) -> None:
    """PyTorch's TypeError for an op whose two operands must both be Tensors (no number form)."""
    for k, (name, value) in enumerate(zip(names, (input, other))):
        if not is_tensor(value):
            raise TypeError(f"{op}(): argument '{name}' (position {k + 1}) must be Tensor, not "
                            f"{type(value).__name__}")
