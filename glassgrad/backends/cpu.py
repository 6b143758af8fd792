"""``glassgrad.backends.cpu``: the CPU's vector capability (``torch.backends.cpu``)."""

from __future__ import annotations

import platform


def get_cpu_capability() -> str:
    """The widest vector extension the CPU offers, in torch's words: "AVX512" (F, BW, VL and DQ,
    what ATen's AVX-512 kernels need), "AVX2" (with FMA), else "DEFAULT" on x86; on other machines
    "DEFAULT" (torch may say "SVE256", "VSX" or "Z VECTOR" there)
    (``torch.backends.cpu.get_cpu_capability``). Read from NumPy's CPU feature detection."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # NumPy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as features
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return "DEFAULT"
    if all(features.get(f) for f in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return "AVX512"
    if features.get("AVX2") and features.get("FMA3"):
        return "AVX2"
    return "DEFAULT"
