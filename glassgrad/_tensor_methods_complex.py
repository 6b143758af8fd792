"""The complex-number Tensor methods and attributes (``x.real``, ``x.conj()``, ``x.cfloat()``),
delegating to ops/complex_ops.py; attached here so tensor.py stays small."""

from __future__ import annotations

from . import _stft, dtypes
from .ops import complex_ops as cx
from .ops import elementwise as ew
from .tensor import Tensor


def _part_setter(part):
    def setter(self, value):
        part(self).copy_(value)

    return setter


# torch's x.real / x.imag are attributes (views), and assigning to them writes the part
Tensor.real = property(cx.real, _part_setter(cx.real), doc="The real part, a view (torch's).")
Tensor.imag = property(cx.imag, _part_setter(cx.imag),
                       doc="The imaginary part, a view; RuntimeError for a real tensor.")

for _name in ("angle conj conj_physical is_complex is_conj is_neg resolve_conj resolve_neg "
              "sgn").split():
    setattr(Tensor, _name, getattr(cx, _name))


def _sgn_(self):
    """In place ``sgn`` (``torch.Tensor.sgn_``)."""
    return cx.Sgn.apply_inplace(self)


Tensor.stft = _stft.stft
Tensor.istft = _stft.istft
def _real_number(kind, plain):
    def convert(self):
        if self._array.dtype.kind == "c":
            return cx.item_as_real(self, kind)
        return plain(self)

    return convert


def _abs_(self, plain=Tensor.abs_):
    if self._array.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.\nglassgrad: "
                           "abs() of a complex tensor is real; use x = x.abs().")
    return plain(self)


Tensor.__float__ = _real_number(float, Tensor.__float__)
Tensor.__int__ = _real_number(int, Tensor.__int__)
Tensor.__complex__ = lambda self: complex(self.item())
Tensor.abs_ = _abs_
Tensor.sgn_ = _sgn_
Tensor.conj_physical_ = cx.conj_physical_
Tensor.cfloat = lambda self, memory_format=None: ew.to_dtype(self, dtypes.complex64)
Tensor.cdouble = lambda self, memory_format=None: ew.to_dtype(self, dtypes.complex128)
Tensor.cfloat.__doc__ = "A complex64 copy (``torch.Tensor.cfloat``); self when complex64."
Tensor.cdouble.__doc__ = "A complex128 copy (``torch.Tensor.cdouble``); self when complex128."
