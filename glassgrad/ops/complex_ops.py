"""Complex-number primitives: ``real``/``imag`` views, ``conj``, ``angle``, ``sgn``, ``complex``,
``polar`` and ``view_as_real``/``view_as_complex`` (``torch.real`` etc.).

NOTE [Complex gradients]: PyTorch's convention, kept by every glassgrad op: for a real loss L of
``z = x + iy``, ``z.grad`` is ``dL/dx + i dL/dy`` (twice the conjugate Wirtinger derivative, so a
step against it descends). The chain rule through ``s = f(z)`` with incoming ``G`` is then
``grad_z = G * conj(ds/dz) + conj(G) * ds/dconj(z)``: a holomorphic op multiplies by the
conjugate of its derivative (``grad * y.conj()`` for ``x * y``: ``_util.cj``), and a real input
takes the real part of its complex gradient. On real dtypes every rule is the real one.

NOTE [Lazy conjugation]: ``torch.conj`` returns a lazy view with ``is_conj()`` True. NumPy has no
conjugate bit, so glassgrad's ``conj`` of a complex tensor is a materialised copy that remembers it
is "a conjugate" (``is_conj()`` True, ``resolve_conj`` gives a plain copy, ``conj_physical`` never
sets it). What differs from torch: writes to the base do not show through a ``conj()`` result,
nor the other way round.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import dtypes
from ._names import scalar_type as _scalar_name
from ._util import is_tensor, mark_view
from .primitive import Primitive

_CONJ: dict = {}  # id(tensor) -> weakref: the tensors conj() made (NOTE [Lazy conjugation])


def _complex_of(np_dtype):
    return np.complex128 if np_dtype == np.float64 else np.complex64


def _real_of(np_dtype):
    return np.float64 if np_dtype == np.complex128 else np.float32


def _to_complex(t, np_dtype):
    """A real gradient as a complex one of ``np_dtype`` (differentiable)."""
    from .elementwise import to_dtype

    return to_dtype(t, dtypes._FROM_NP[np.dtype(np_dtype)])


class Real(Primitive):
    node_name = "RealBackward0"

    @staticmethod
    def forward(xp, x, *, cdt):
        return xp.real(x)  # (a view; xp.real, not .real, serves vmap's batched arrays too)

    @staticmethod
    def backward(grad, *, cdt):
        return (_to_complex(grad, cdt),)


class Imag(Primitive):
    node_name = "ImagBackward0"

    @staticmethod
    def forward(xp, x, *, cdt):
        return xp.imag(x)

    @staticmethod
    def backward(grad, *, cdt):
        return (_to_complex(grad, cdt) * 1j,)


class Conj(Primitive):
    node_name = "ConjBackward0"

    @staticmethod
    def forward(xp, x):
        return xp.conj(x)

    @staticmethod
    def backward(grad):
        return (Conj.apply(grad),)


class ConjPhysical(Conj):
    node_name = "ConjPhysicalBackward0"


class Angle(Primitive):
    saves = ("x",)

    @staticmethod
    def forward(xp, x):
        out = xp.angle(x)
        if x.dtype.kind == "f":  # NOTE: NumPy's angle of a float is float64; torch keeps the dtype
            out = out.astype(x.dtype)
        return out

    @staticmethod
    def backward(grad, x):
        if x._array.dtype.kind != "c":
            return (grad * 0,)
        # d angle: (-y dx + x dy) / |z|^2, i.e. i z / |z|^2; 0 at z == 0 as in torch
        denom = x.abs().square()
        from .elementwise import where

        step = where(denom == 0, 0.0, _to_complex(grad, x._array.dtype) * x * 1j / denom)
        return (step,)


class Sgn(Primitive):
    saves = ("x", "result")

    @staticmethod
    def forward(xp, x):
        if x.dtype.kind != "c":  # torch's sign: 0 for NaN (NumPy's is NaN)
            out = xp.sign(x)
            return xp.where(out != out, xp.zeros((), out.dtype), out) if out.dtype.kind == "f" \
                else out
        size = xp.abs(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            return xp.where(size == 0, 0, x / xp.where(size == 0, 1, size)).astype(x.dtype)

    @staticmethod
    def backward(grad, x, result):
        if x._array.dtype.kind != "c":
            return (grad * 0,)
        from .elementwise import where

        size = x.abs()
        tangent = grad - real(grad * result.conj()) * result  # (NOTE [Complex gradients])
        return (where(size == 0, 0.0, tangent / where(size == 0, 1.0, size)),)


class Complex(Primitive):
    """``real + i imag`` from two real tensors of one dtype."""

    node_name = "ComplexBackward0"

    @staticmethod
    def forward(xp, x, y):
        # NOTE: the parts side by side, viewed as complex; x + 1j * y would turn an infinite
        # imaginary part into nan + inf j
        pair = xp.stack(xp.broadcast_arrays(x, y), -1)
        return pair.view(_complex_of(x.dtype))[..., 0]

    @staticmethod
    def backward(grad):
        return real(grad), imag(grad)


class Polar(Primitive):
    """``abs * (cos(angle) + i sin(angle))``; torch's polar_backward (through ``sgn(result)``, so
    a NaN or infinite modulus gives a NaN gradient as in torch)."""

    node_name = "PolarBackward0"
    saves = ("result",)

    @staticmethod
    def forward(xp, a, t):
        pair = xp.stack(xp.broadcast_arrays(a * xp.cos(t), a * xp.sin(t)), -1)
        return pair.view(_complex_of(pair.dtype))[..., 0]

    @staticmethod
    def backward(grad, result):
        g = grad.conj()
        return real(g * sgn(result)), real(g * (result * 1j))


class ViewAsReal(Primitive):
    @staticmethod
    def forward(xp, x):
        return x[..., None].view(_real_of(x.dtype))

    @staticmethod
    def backward(grad):
        return (ViewAsComplex.apply(grad.contiguous()),)


class ViewAsComplex(Primitive):
    @staticmethod
    def forward(xp, x):
        return x.view(_complex_of(x.dtype))[..., 0]

    @staticmethod
    def backward(grad):
        return (ViewAsReal.apply(grad.contiguous() if grad._array.ndim else grad),)


def _out(result, out):
    """``result``, or ``out`` holding it (``out=``)."""
    if out is None:
        return result
    out.copy_(result)
    return out


def _need_tensor(x, op: str):
    if not is_tensor(x):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def real(input):
    """The real part as a view that writes through (``torch.real``); a real tensor itself."""
    _need_tensor(input, "real")
    if input._array.dtype.kind != "c":
        return input
    out = Real.apply(input, cdt=input._array.dtype)
    return mark_view(out, input, real)


def imag(input):
    """The imaginary part as a view that writes through (``torch.imag``); RuntimeError (torch's)
    for a real tensor."""
    _need_tensor(input, "imag")
    if input._array.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.\n"
                           f"glassgrad: this tensor is {input.dtype}; it has no imaginary part.")
    out = Imag.apply(input, cdt=input._array.dtype)
    return mark_view(out, input, imag)


def conj(input):
    """The complex conjugate (``torch.conj``); a real tensor itself. A materialised copy that
    ``is_conj()`` (NOTE [Lazy conjugation])."""
    _need_tensor(input, "conj")
    if input._array.dtype.kind != "c":
        return input
    out = Conj.apply(input)
    if is_conj(input):  # the conjugate of a conjugate is plain again, as in torch
        return out
    key = id(out)
    _CONJ[key] = weakref.ref(out, lambda _, key=key: _CONJ.pop(key, None))
    return out


def is_conj(input) -> bool:
    """Whether ``input`` came from ``conj()`` of a complex tensor (``torch.is_conj``)."""
    ref = _CONJ.get(id(input))
    return ref is not None and ref() is input


def resolve_conj(input):
    """``input`` itself, or a plain copy when it ``is_conj()`` (``torch.resolve_conj``)."""
    return input.clone() if is_conj(input) else input


def resolve_neg(input):
    """``input`` itself: glassgrad never makes lazily negated tensors (``torch.resolve_neg``)."""
    return input


def is_neg(input) -> bool:
    """Always False: glassgrad has no negative bit (``torch.is_neg``)."""
    return False


def conj_physical(input, *, out=None):
    """The conjugate, computed now (``torch.conj_physical``); never ``is_conj()``. Real input
    is returned as it is."""
    _need_tensor(input, "conj_physical")
    return _out(input if input._array.dtype.kind != "c" else ConjPhysical.apply(input), out)


def conj_physical_(input):
    """In-place conjugate (``torch.conj_physical_``); a real tensor is returned unchanged."""
    _need_tensor(input, "conj_physical_")
    if input._array.dtype.kind != "c":
        return input
    return ConjPhysical.apply_inplace(input)


def angle(input, *, out=None):
    """The argument of each element, in (-pi, pi] (``torch.angle``); real input gives 0 or pi
    (an integer tensor the default float), with a zero gradient."""
    _need_tensor(input, "angle")
    x = input
    if x._array.dtype.kind in "biu":
        from ._util import cast

        x = cast(x, dtypes.get_default_dtype().np)
    result = Angle.apply(x)
    return _out(result, out)


def sgn(input, *, out=None):
    """``z / |z|`` (0 at 0) for complex input, ``sign`` for real (``torch.sgn``)."""
    _need_tensor(input, "sgn")
    result = Sgn.apply(input)
    return _out(result, out)


def complex(real, imag, *, out=None):  # noqa: A001 - torch.complex
    """A complex tensor from real and imaginary parts of one floating dtype (``torch.complex``);
    float32 parts give complex64, float64 complex128. RuntimeError (torch's) otherwise."""
    _need_tensor(real, "complex")
    _need_tensor(imag, "complex")
    a, b = real._array.dtype, imag._array.dtype
    if a.kind != "f" or b.kind != "f" or a.itemsize < 4 or b.itemsize < 4:
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{_scalar_name(real.dtype)} and {_scalar_name(imag.dtype)}\nglassgrad: complex() "
            "takes float32 or float64 parts (no complex32: float16 parts are not supported).")
    if a != b:
        raise RuntimeError(
            f"Expected object of scalar type {_scalar_name(real.dtype)} but got scalar type "
            f"{_scalar_name(imag.dtype)} for second argument\nglassgrad: convert both parts to "
            "one dtype first.")
    result = Complex.apply(real, imag)
    return _out(result, out)


def polar(abs, angle, *, out=None):  # noqa: A002 - torch's names
    """``abs * (cos(angle) + i sin(angle))`` (``torch.polar``), composed of differentiable ops."""
    _need_tensor(abs, "polar")
    _need_tensor(angle, "polar")
    if not (abs.dtype.is_floating_point and angle.dtype.is_floating_point):
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_scalar_name(abs.dtype)} and {_scalar_name(angle.dtype)}")
    if abs.dtype != angle.dtype:
        raise RuntimeError(f"Expected object of scalar type {_scalar_name(abs.dtype)} but got "
                           f"scalar type {_scalar_name(angle.dtype)} for second argument")
    result = Polar.apply(abs, angle)
    return _out(result, out)


def view_as_real(input):
    """A complex ``(...)`` tensor as a real ``(..., 2)`` view of its parts
    (``torch.view_as_real``); RuntimeError (torch's) for real input."""
    _need_tensor(input, "view_as_real")
    if input._array.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors\nglassgrad: "
                           f"this tensor is {input.dtype}.")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj(); however, be warned that the resulting tensor "
                           "will NOT alias the original.")
    return mark_view(ViewAsReal.apply(input), input, view_as_real)


def view_as_complex(input):
    """A real ``(..., 2)`` float32/float64 tensor as a complex ``(...)`` view
    (``torch.view_as_complex``); torch's RuntimeErrors for another last dim or stride."""
    _need_tensor(input, "view_as_complex")
    arr = input._array
    if arr.dtype not in (np.float32, np.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {_scalar_name(input.dtype)}\nglassgrad: float16 pairs are not "
            "supported either (NumPy has no complex32).")
    if not arr.ndim or arr.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2\nglassgrad: got shape "
                           f"{list(arr.shape)}.")
    if arr.size and arr.strides[-1] != arr.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1\nglassgrad: call "
                           ".contiguous() first.")
    if any(s % (2 * arr.itemsize) for s, n in zip(arr.strides[:-1], arr.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if arr.size and type(arr) is np.ndarray and arr.ctypes.data % (2 * arr.itemsize):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return mark_view(ViewAsComplex.apply(input), input, view_as_complex)


def view_as_real_copy(input, *, out=None):
    """``view_as_real(input)`` as a new tensor (``torch.view_as_real_copy``)."""
    result = view_as_real(input).clone()
    return _out(result, out)


def view_as_complex_copy(input, *, out=None):
    """``view_as_complex(input)`` as a new tensor (``torch.view_as_complex_copy``)."""
    result = view_as_complex(input).clone()
    return _out(result, out)


def is_complex(input) -> bool:
    """Whether ``input``'s dtype is complex64 or complex128 (``torch.is_complex``)."""
    _need_tensor(input, "is_complex")
    return input._array.dtype.kind == "c"


def warn_discard(x, dtype) -> None:
    """torch's UserWarning when ``x.to(real_dtype)`` drops a complex tensor's imaginary part."""
    from .._user_warning import warn_user

    warn_user("Casting complex values to real discards the imaginary part\nglassgrad: "
              f"{x.dtype} to {dtype}; take .real or .abs() to say which you mean.",
              UserWarning, stacklevel=4)


def refuse_complex(x, kernel: str) -> None:
    """torch's NotImplementedError for a kernel with no complex form (``"lt_cpu" not
    implemented for 'ComplexFloat'``), where glassgrad would otherwise give NumPy's order."""
    if is_tensor(x) and x._array.dtype.kind == "c":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_scalar_name(x.dtype)}'\nglassgrad: complex "
            "numbers have no order; compare .abs() or .real instead.")


def item_as_real(t, kind):
    """``float(t)`` / ``int(t)`` of a complex one-element tensor: torch refuses a nonzero
    imaginary part ("value cannot be converted"), and reads the real part otherwise."""
    value = t.item()
    if value.imag:
        shown = "double" if kind is float else "int64_t"
        raise RuntimeError(f"value cannot be converted to type {shown} without overflow\n"
                           "glassgrad: the element has a nonzero imaginary part; take .real or "
                           ".abs() first.")
    return kind(value.real)

