"""Window functions (``torch.hann_window``, ``hamming_window``, ``blackman_window``,
``bartlett_window``, ``kaiser_window``): factories, computed in float64 and rounded once to the
requested floating dtype.

``periodic=True`` (the default, for spectral analysis) is the symmetric window of
``window_length + 1`` points without its last one, as in torch; a length of 1 gives ``[1.]``.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from ._factories import _finish


def _window(name, window_length, periodic, dtype, requires_grad, values):
    d = dtype or dtypes.get_default_dtype()
    if not d.is_floating_point:
        from .ops._names import c_type

        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={c_type(d)}, "
            "device=cpu, layout=Strided (default), requires_grad=false (default), "
            "pinned_memory=false, memory_format=(nullopt))\nglassgrad: pass "
            "dtype=glassgrad.float32 or float64.")
    n = int(window_length)
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    if n <= 1:
        return _finish(np.ones(n, dtype=d.np), requires_grad)
    points = n + 1 if periodic else n
    # n/(N-1) over the symmetric window's points, then the periodic one drops its last point
    phase = np.arange(points, dtype=np.float64) / (points - 1)
    return _finish(values(phase)[:n].astype(d.np), requires_grad)


def _cosines(*weights):
    """``sum_k (-1)^k a_k cos(2 pi k t)``: the generalised cosine windows."""
    return lambda t: sum((-1) ** k * a * np.cos(2 * np.pi * k * t) for k, a in enumerate(weights))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """``0.5 - 0.5 cos(2 pi n / N)`` (``torch.hann_window``); RuntimeError for a negative
    length or a non-floating dtype."""
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   _cosines(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """``alpha - beta cos(2 pi n / N)`` (``torch.hamming_window``)."""
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   _cosines(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)`` (``torch.blackman_window``)."""
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   _cosines(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The triangle ``1 - |2 n / N - 1|`` (``torch.bartlett_window``)."""
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda t: 1 - np.abs(2 * t - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """``I0(beta sqrt(1 - (2 n / N - 1)^2)) / I0(beta)`` (``torch.kaiser_window``)."""
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad,
                   lambda t: np.i0(beta * np.sqrt(np.clip(1 - (2 * t - 1) ** 2, 0, None)))
                   / np.i0(beta))
