"""Discrete Fourier transform primitives (the kernels behind ``glassgrad.fft``).

NumPy's pocketfft does the arithmetic; torch's dtypes are restored on the result (float32 in,
complex64 out). Three primitives, each with its adjoint as backward, written in glassgrad ops
so double backward works:

- ``FftC2C``: complex to complex over ``dims``; its adjoint is the transform of the other sign
  with the same scale (``norm`` "backward" <-> "forward", "ortho" stays).
- ``FftR2C``: real to the one-sided half spectrum (``rfftn``); its adjoint zero-fills the
  missing half, runs the adjoint c2c and keeps the real part.
- ``FftC2R``: half spectrum to real (``irfftn``); its adjoint is ``rfftn`` of the gradient with
  the entries that stand for two conjugate bins doubled (the DC and Nyquist bins once), as
  torch's ``fft_c2r_backward``.

``Resize`` trims or zero-pads dims to the sizes ``n=``/``s=`` ask for; it is its own adjoint
(the other way round), so the transforms above see sizes that already match.
"""

from __future__ import annotations

import numpy as np

from . import primitive
from .primitive import Primitive

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _complex_dtype(np_dtype):
    return np.complex128 if np_dtype in (np.float64, np.complex128) else np.complex64


def _real_dtype(np_dtype):
    return np.float64 if np_dtype in (np.float64, np.complex128) else np.float32


class Resize(Primitive):
    """``x`` with each of ``dims`` cut or zero-padded (at the end) from ``src`` to ``sizes``."""

    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(xp, x, *, dims, sizes, src):
        cut = [slice(None)] * x.ndim
        pad = [(0, 0)] * x.ndim
        for d, n in zip(dims, sizes):
            cut[d] = slice(0, n)
            pad[d] = (0, max(n - x.shape[d], 0))
        return xp.pad(x[tuple(cut)], pad)

    @staticmethod
    def backward(grad, *, dims, sizes, src):
        return (resize(grad, dims, src),)


def resize(x, dims, sizes):
    """``x`` cut or zero-padded along ``dims`` to ``sizes`` (itself when they already match)."""
    shape = x._array.shape
    if all(shape[d] == n for d, n in zip(dims, sizes)):
        return x
    return Resize.apply(x, dims=tuple(dims), sizes=tuple(sizes),
                         src=tuple(shape[d] for d in dims))


class FftC2C(Primitive):
    node_name = "FftC2CBackward0"

    @staticmethod
    def forward(xp, x, *, dims, norm, forward):
        fn = np.fft.fftn if forward else np.fft.ifftn
        return fn(x, axes=dims, norm=norm).astype(x.dtype, copy=False)

    @staticmethod
    def backward(grad, *, dims, norm, forward):
        return (FftC2C.apply(grad, dims=dims, norm=_SWAP[norm], forward=not forward),)


class FftR2C(Primitive):
    """One-sided ``rfftn`` over ``dims`` (the last one halved) of a real ``x``."""

    node_name = "FftR2CBackward0"

    @staticmethod
    def forward(xp, x, *, dims, norm, n_last):
        return np.fft.rfftn(x, axes=dims, norm=norm).astype(_complex_dtype(x.dtype), copy=False)

    @staticmethod
    def backward(grad, *, dims, norm, n_last):
        from .complex_ops import real

        full = resize(grad, (dims[-1],), (n_last,))
        return (real(FftC2C.apply(full, dims=dims, norm=_SWAP[norm], forward=False)),)


class FftC2R(Primitive):
    """``irfftn`` over ``dims`` of a half spectrum whose last dim already is ``n_last // 2 + 1``:
    a real output with ``n_last`` entries in the last dim."""

    node_name = "FftC2RBackward0"

    @staticmethod
    def forward(xp, x, *, dims, norm, n_last):
        shape = [x.shape[d] for d in dims[:-1]] + [n_last]
        out = np.fft.irfftn(x, s=shape, axes=dims, norm=norm)
        return out.astype(_real_dtype(x.dtype), copy=False)

    @staticmethod
    def backward(grad, *, dims, norm, n_last):
        half = FftR2C.apply(grad, dims=dims, norm=_SWAP[norm], n_last=n_last)
        twice = n_last - half._array.shape[dims[-1]]  # bins that stand for a conjugate pair
        if twice <= 0:
            return (half,)
        weight = np.ones(half._array.shape[dims[-1]], dtype=_real_dtype(half._array.dtype))
        weight[1:1 + twice] = 2
        shape = [1] * half._array.ndim
        shape[dims[-1]] = weight.size
        return (half * primitive._make(weight.reshape(shape)),)
