"""The short-time Fourier transform and its inverse (``torch.stft``, ``torch.istft``), composed
of differentiable ops (padding, an indexed gather of the frames, the fft kernels, ``index_add``
for the overlap-add), so both have first and higher derivatives without code of their own.
"""

from __future__ import annotations


import numpy as np

from . import fft as _fft
from .ops import complex_ops as _cx
from .dtypes import type_name as _type_name
from .ops._names import scalar_type
from .ops.gather import index_add
from .tensor import Tensor
from ._user_warning import warn_user


def _describe(op, x, n_fft, hop, win_length, window, tail) -> str:
    """torch's prefix of an stft/istft error: the call as it was understood (istft names the
    input's type as ``CPUComplexFloatType``)."""
    w = "None" if window is None else f"{_type_name(window.dtype)}{{{list(window.shape)}}}"
    shown = f"CPU{scalar_type(x.dtype)}Type" if op == "istft" else _type_name(x.dtype)
    return (f"{op}({shown}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win_length}, window={w}, {tail})")


def _flag(value) -> str:
    return "None" if value is None else str(int(value))


def _padded_window(window, n_fft, win_length, like, what):
    """The window as ``n_fft`` values: ones when None, centred with zeros when shorter."""
    if window is None:
        warn_user(f"A window was not provided. A rectangular window will be applied.{what}"
                  "To suppress this warning and use a rectangular window, explicitly set "
                  "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=3)
        window = Tensor._make(np.ones(win_length, dtype=like))
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    from .nn.functional import pad

    return pad(window, (left, n_fft - win_length - left))


def _check_sizes(desc, n_fft, hop, win_length, window, length_in):
    if not 0 < n_fft <= length_in:
        raise RuntimeError(f"{desc} : expected 0 < n_fft < {length_in}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{desc} : expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{desc} : expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{desc} : expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Fourier transforms of windowed frames of a 1-D ``(L,)`` or batched ``(B, L)`` signal
    (``torch.stft``): complex ``(..., n_fft // 2 + 1, frames)`` (``onesided``, the default for
    real input), ``center`` pads ``n_fft // 2`` each side with ``pad_mode``; ``normalized``
    scales by ``n_fft ** -0.5``. Real input requires ``return_complex`` (torch 2.13's error);
    ``False`` returns ``view_as_real`` of the result, with torch's deprecation warning."""
    x = input
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win_length = n_fft if win_length is None else int(win_length)
    if not isinstance(x, Tensor) or not (window is None or isinstance(window, Tensor)):
        raise TypeError("stft() received an invalid combination of arguments - got "
                        f"({type(x).__name__}, ..., window={type(window).__name__})\nglassgrad: "
                        "input and window must be Tensors.")
    if return_complex is None:
        if not x.is_complex() and not (window is not None and window.is_complex()):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        from .nn.functional import pad

        # torch's layer: viewed as 3-D at least (3-D or more as it is), padded, viewed back
        dims = x.ndim
        xb = pad(x.reshape((1,) * (3 - dims) + tuple(x.shape)), (n_fft // 2, n_fft // 2),
                 mode=pad_mode)
        x = xb.reshape(tuple(xb.shape[-dims:]))
    elif align_to_window and win_length < n_fft:
        from .nn.functional import pad

        left = (n_fft - win_length) // 2
        x = pad(x, (left, n_fft - win_length - left))
    desc = _describe("stft", x, n_fft, hop, win_length, window,
                     f"normalized={int(normalized)}, onesided={_flag(onesided)}, "
                     f"return_complex={int(return_complex)}, align_to_window={align_to_window}")
    if x.ndim not in (1, 2):
        raise RuntimeError(f"{desc} : expected a 1D or 2D tensor")
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"{desc} : expected a tensor of floating point or complex values")
    _check_sizes(desc, n_fft, hop, win_length, window, x.shape[-1])
    frames = 1 + (x.shape[-1] - n_fft) // hop
    index = (np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :])
    pieces = x[..., index] * _padded_window(window, n_fft, win_length, x._array.dtype, "")
    complex_in = pieces.is_complex()
    onesided = not complex_in if onesided is None else onesided
    if onesided and complex_in:
        raise RuntimeError(f"{desc} : Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = _fft.rfft(pieces, norm=norm) if onesided else _fft.fft(pieces, norm=norm)
    spec = spec.transpose(-1, -2)
    if return_complex:
        return spec
    warn_user("stft with return_complex=False is deprecated. In a future pytorch release, "
              "stft will return complex tensors for all inputs, and return_complex=False "
              "will raise an error.", UserWarning, stacklevel=2)
    return _cx.view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of ``stft`` by windowed overlap-add (``torch.istft``): complex
    ``(..., freq, frames)`` in, a real ``(..., length)`` signal out (complex when
    ``return_complex``). RuntimeError (torch's) for real input or a window whose overlap-add
    vanishes somewhere."""
    x = input
    if not x.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win_length = n_fft if win_length is None else int(win_length)
    desc = _describe("istft", x, n_fft, hop, win_length, window,
                     f"center={int(center)}, normalized={int(normalized)}, "
                     f"onesided={_flag(onesided)}, length={length}, "
                     f"return_complex={int(return_complex)}")
    if x.ndim not in (2, 3):
        raise RuntimeError(f"{desc}: expected a tensor with 2 or 3 dimensions of complex dtype, "
                           f"but got {x.ndim}")
    _check_sizes(desc, n_fft, hop, win_length, window, n_fft)
    n_frames = x.shape[-1]
    onesided = x.shape[-2] != n_fft if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spec = x.transpose(-1, -2)
    if onesided:
        if return_complex:
            raise RuntimeError(f"{desc}: cannot have onesided output if window or input is "
                               "complex")
        pieces = _fft.irfft(spec, n=n_fft, norm=norm)
    else:
        pieces = _fft.ifft(spec, n=n_fft, norm=norm)
        if not return_complex:
            pieces = pieces.real
    w = _padded_window(window, n_fft, win_length, _cx._real_of(x._array.dtype),
                       "Please provide the same window used by stft to make the inversion "
                       "lossless.")
    pieces = pieces * w
    total = n_fft + hop * (n_frames - 1)
    index = (np.arange(n_frames)[:, None] * hop + np.arange(n_fft)[None, :]).reshape(-1)
    lead = pieces.shape[:-2]
    flat = pieces.reshape(lead + (n_frames * n_fft,))
    at = Tensor._make(index)
    y = index_add(Tensor._make(np.zeros(lead + (total,), dtype=pieces._array.dtype)), -1, at, flat)
    # (the window's own overlap-add, as a tensor: a window that requires grad gets its gradient)
    envelope = index_add(Tensor._make(np.zeros(total, dtype=w._array.dtype)), 0, at,
                         (w * w).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + int(length)
    end = min(end, total)
    y = y[..., start:end]
    envelope = envelope[start:end]
    lowest = np.abs(envelope._array).min() if envelope._array.size else 1.0
    if lowest < 1e-11:
        raise RuntimeError(f"{desc} window overlap add min: {lowest:g}")
    y = y / envelope
    if length is not None and y.shape[-1] < int(length):
        from .nn.functional import pad

        y = pad(y, (0, int(length) - y.shape[-1]))
    return y
