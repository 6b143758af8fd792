"""``glassgrad.fft``'s helpers: sample frequencies and spectrum shifts (``torch.fft.fftfreq``,
``rfftfreq``, ``fftshift``, ``ifftshift``); composed, no derivative code of their own."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._factories import _finish
from ..ops._util import wrap_dims
from ..ops.rearrange import roll


def _freq(values, dtype, requires_grad, out):
    d = dtype or dtypes.get_default_dtype()
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError("fftfreq requires a floating point or complex dtype\nglassgrad: "
                           f"got {d}.")
    result = _finish(values.astype(d.np), requires_grad)
    if out is None:
        return result
    if out._array.shape != result._array.shape:
        out._array = np.empty(result._array.shape, dtype=out._array.dtype)
    out._write(result._array, "fftfreq")
    return out


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point ``fft`` with spacing ``d``: ``[0, 1, ...,
    -1] / (d * n)`` (``torch.fft.fftfreq``), in the default float dtype unless ``dtype``."""
    return _freq(np.fft.fftfreq(int(n), d), dtype, requires_grad, out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative frequencies of an ``n``-point ``rfft`` (``torch.fft.rfftfreq``)."""
    return _freq(np.fft.rfftfreq(int(n), d), dtype, requires_grad, out)


def _shift(input, dim, sign: int):
    from ..ops._util import is_tensor

    op = "fft_fftshift" if sign > 0 else "fft_ifftshift"
    if not is_tensor(input):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None and input.ndim == 0:
        raise RuntimeError(f"`shifts` required\nglassgrad: {op[4:]} of a 0-d tensor has no dim "
                           "to shift.")
    dims = wrap_dims(dim, input.ndim, "fftshift")
    if not dims:
        return input.clone()
    shifts = [sign * (input.shape[d] // 2) for d in dims]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Move the zero-frequency bin to the centre of each of ``dim`` (all by default): a roll by
    ``n // 2`` (``torch.fft.fftshift``)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift``: a roll by ``-(n // 2)`` (``torch.fft.ifftshift``)."""
    return _shift(input, dim, -1)
