"""Which dtypes ``interpolate`` accepts in each mode, and torch's error for the others.

torch 2.13's CPU kernels are dispatched on floating types only, plus uint8 for nearest,
nearest-exact and 4-D bilinear/bicubic (with or without antialias). Any other dtype raises
NotImplementedError ``"<kernel>" not implemented for '<ScalarType>'`` naming the kernel torch
dispatches to; tests match the key phrase "not implemented for".
"""

from __future__ import annotations

from ..ops._names import scalar_type


def _kernel(mode: str, nd: int, out_size, antialias: bool) -> str:
    # NOTE: for 4-D input torch picks its channels-last kernel when the output is small
    # (out_h + out_w <= 128, _use_vectorized_kernel_cond_2d) and names that one
    small_2d = nd == 2 and sum(out_size) <= 128
    if mode == "area":
        return "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d"
    if antialias:
        return "compute_index_ranges_weights"
    if mode == "bicubic":
        return "compute_indices_weights_cubic"
    if mode in ("nearest", "nearest-exact"):
        return "upsample_nearest2d_channels_last" if small_2d else "compute_indices_weights_nearest"
    return "upsample_bilinear2d_channels_last" if small_2d else "compute_indices_weights_linear"


def check_dtype(x, mode: str, nd: int, out_size, antialias: bool) -> None:
    """Raise torch's NotImplementedError when ``interpolate`` has no kernel for ``x``'s dtype."""
    kind = x._array.dtype.kind
    if kind == "f":
        return
    if x._array.dtype.name == "uint8" and (
            mode in ("nearest", "nearest-exact") or (nd == 2 and mode in ("bilinear", "bicubic"))):
        return
    raise NotImplementedError(
        f'"{_kernel(mode, nd, out_size, antialias)}" not implemented for '
        f"'{scalar_type(x._array.dtype)}' (glassgrad: interpolate(mode={mode!r}) of "
        f"{x._array.dtype.name} input, as torch; convert the input to a floating dtype first)")
