"""torch's float32 Box-Muller kernel for AVX2 CPUs (``normal_fill_16_AVX2``), step by step.

ATen registers no AVX-512 kernel for ``normal_`` (its dispatcher falls back to the AVX2 one), so
on any CPU with AVX2 and FMA a float32 ``randn`` of 16 or more contiguous elements goes through
avx_mathfun's ``log256_ps`` and ``sincos256_ps`` (Cephes polynomials in float32), as compiled by
GCC: each ``a * b + c`` of the source is one fused multiply-add. This module replays those
operations on NumPy float32 arrays. Without AVX2 (or with ``ATEN_CPU_CAPABILITY=default``) torch
takes the scalar libm kernel instead (``_sampling._box_muller_16``).
"""

from __future__ import annotations

import functools
import os

import numpy as np

F = np.float32


def _fma(a, b, c):
    from ._sampling import _fma as fma

    return fma(a, b, c, np.float32)


@functools.lru_cache(maxsize=None)
def cpu_capability() -> str:
    """The kernel build torch's dispatcher picks on this CPU for the random kernels: 'avx2'
    when the CPU has AVX2 and FMA (ATen's AVX512 build routes ``normal_`` to the AVX2 kernel and
    fuses multiply-adds like it), else 'default'. ATen reads the CPU flags through cpuinfo and
    lets ``ATEN_CPU_CAPABILITY`` lower the choice; so does this function."""
    forced = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if forced == "default":
        return "default"
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:  # pragma: no cover - not Linux
        flags = []
    return "avx2" if "avx2" in flags and "fma" in flags else "default"


def _bits(x):
    return x.view(np.int32)


def log256_ps(x):
    """avx_mathfun's ``log256_ps`` for positive float32 ``x`` (NaN for x <= 0)."""
    invalid = x <= 0
    x = np.maximum(x, np.int32(0x00800000).view(F))
    e = ((_bits(x) >> 23) - 0x7F).astype(F) + F(1)
    x = ((_bits(x) & ~np.int32(0x7F800000)) | _bits(F(0.5))).view(F)
    mask = x < F(0.707106781186547524)
    tmp = np.where(mask, x, F(0))
    x = x - F(1)
    e = e - np.where(mask, F(1), F(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, F(7.0376836292e-2))
    for p in (-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
              -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1):
        y = _fma(y, x, F(p))
    # NOTE: GCC fuses ``y * z + e * q1`` as fma(y, z, e * q1) (measured against torch)
    y = _fma(y * x, z, e * F(-2.12194440e-4))
    y = _fma(z, F(-0.5), y)
    x = x + y
    x = _fma(e, F(0.693359375), x)
    return np.where(invalid, F(np.nan), x)


def sincos256_ps(x):
    """avx_mathfun's ``sincos256_ps``: (sin, cos) of float32 ``x``."""
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * F(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~np.int32(1)
    y = j.astype(F)
    swap_sin = (j & 4) != 0
    poly = (j & 2) == 0
    x = _fma(y, F(-0.78515625), x)
    x = _fma(y, F(-2.4187564849853515625e-4), x)
    x = _fma(y, F(-3.77489497744594108e-8), x)
    sign_cos = ((j - 2) & 4) == 0
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    c = _fma(F(2.443315711809948e-005), z, F(-1.388731625493765e-003))
    c = _fma(c, z, F(4.166664568298827e-002))
    c = _fma(c * z, z, -(z * F(0.5)))  # NOTE: fused as fma(c, z, -z / 2), like the log's
    c = c + F(1)
    s = _fma(F(-1.9515295891e-4), z, F(8.3321608736e-3))
    s = _fma(s, z, F(-1.6666654611e-1))
    s = s * z
    s = _fma(s, x, x)
    sin = np.where(poly, s, c)
    cos = np.where(poly, c, s)
    return np.where(sign_sin, -sin, sin), np.where(sign_cos, -cos, cos)


def box_muller_16_avx2(blocks, mean, std):
    """``normal_fill_16_AVX2`` on rows of 16 float32 uniforms."""
    u1 = F(1) - blocks[:, :8]
    u2 = blocks[:, 8:]
    radius = np.sqrt(F(-2) * log256_ps(u1))
    theta = F(2.0 * np.pi) * u2
    sin, cos = sincos256_ps(theta)
    out = np.empty_like(blocks)
    out[:, :8] = _fma(radius * cos, F(std), F(mean))
    out[:, 8:] = _fma(radius * sin, F(std), F(mean))
    return out
