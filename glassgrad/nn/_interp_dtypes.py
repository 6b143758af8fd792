"""``interpolate``'s checks on the input dtype and on the sizes, with torch's errors.

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
    half = x.dtype.is_floating_point and x.dtype.itemsize == 2
    if x.dtype.is_floating_point and not (antialias and half):  # torch's AA: float/double only
        return  # (bfloat16's NumPy kind is 'V': hence the dtype's flag, not the array's kind)
    if x._array.dtype.name == "uint8" and (
            mode in ("nearest", "nearest-exact") or (nd == 2 and mode in ("bilinear", "bicubic"))):
        return
    raise NotImplementedError(
        f'"{_kernel(mode, nd, out_size, antialias)}" not implemented for '
        f"'{scalar_type(x._array.dtype)}' (glassgrad: interpolate(mode={mode!r}) of "
        f"{x._array.dtype.name} input, as torch; convert the input to a floating dtype first)")


_INT64_MAX = (1 << 63) - 1


def check_sizes(mode: str, in_size, out_size) -> None:
    """torch's RuntimeErrors for an output size beyond int64 (a huge scale_factor) and, in every
    mode but area, for an input or output size below 1."""
    if any(not -_INT64_MAX - 1 <= o <= _INT64_MAX for o in out_size):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if mode == "area" or (min(in_size) > 0 and min(out_size) > 0):
        return
    names = ("D", "H", "W")[3 - len(in_size):]
    given = ", ".join(f"{n}: {s}" for n, s in zip(names, in_size))
    wanted = ", ".join(f"{n}: {s}" for n, s in zip(names, out_size))
    joiner = " and output" if len(in_size) == 1 else " output"  # NOTE: torch's 1-D wording
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({given})"
                       f"{joiner} ({wanted})")


def _is_integer(value) -> bool:
    from ..tensor import Tensor

    if isinstance(value, Tensor):
        return not value.dtype.is_floating_point and value.dtype.name != "bool" and \
            value.numel() == 1
    return isinstance(value, int)


def check_size(size, in_size, mode: str):
    """``size`` as ``interpolate`` takes it (an int, or one int per spatial dim), with torch's
    ValueError/TypeErrors for a wrong count or non-integer entries; a tuple of ints."""
    nd = len(in_size)
    if isinstance(size, (list, tuple)):
        if len(size) != nd:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got input "
                f"with spatial dimensions of {list(in_size)} and output size of {size}. Please "
                "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, "
                "o2, ...,oK) format.")
        if not all(_is_integer(s) for s in size):
            kinds = [str(type(s)) for s in size]
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            f"Tuple[int, int, int], but got size with types [{', '.join(kinds)}]")
        sizes = tuple(size)
    else:
        sizes = (size,) * nd
    if not all(_is_integer(s) and not isinstance(s, bool) for s in sizes):
        kernel = {"nearest": "upsample_nearest", "linear": "upsample_linear",
                  "bilinear": "upsample_bilinear", "bicubic": "upsample_bicubic",
                  "trilinear": "upsample_trilinear", "area": "adaptive_avg_pool",
                  "nearest-exact": "_upsample_nearest_exact"}.get(mode, "interpolate")
        raise TypeError(f"{kernel}{nd}d() received an invalid combination of arguments - got "
                        f"(Tensor, {type(size).__name__ if isinstance(size, tuple) else 'list'}, "
                        "NoneType), but expected a tuple of ints output_size\nglassgrad: "
                        f"interpolate's size must be ints, got {size!r}.")
    return tuple(int(s) for s in sizes)
