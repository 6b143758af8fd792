"""``torch.nn.functional.pad`` in every mode (constant, reflect, replicate, circular), composed
from primitives (no derivative code), with torch's output layout and node names."""

from __future__ import annotations

import numpy as np

from .._factories import full
from ..amp.autocast import autocast_arg
from ..amp.autocast import state as _autocast
from ..autograd.node_names import named_as
from ..ops.shape import cat, narrow
from ..tensor import Tensor

def pad(input, pad, mode: str = "constant", value=None):
    """Pad the last ``len(pad) // 2`` dims: ``pad = (last_before, last_after, prev_before, ...)``;
    modes 'constant' (negative pads crop), 'reflect', 'replicate', 'circular'
    (``torch.nn.functional.pad``)."""
    if _autocast.on and mode != "constant":
        input = autocast_arg(f"{mode}_pad{len(pad) // 2}d", input)
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    if mode != "constant" and value not in (None, 0, 0.0):
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(pad) // 2
    if mode != "constant" and (not 1 <= k <= 3 or input.ndim not in (k + 1, k + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode in ("reflect", "replicate") and input.ndim in (k + 1, k + 2) and 0 in (
            input.shape[1:] if input.ndim == k + 2 else input.shape):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    out = input
    for k in range(len(pad) // 2):
        dim = input.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        if before == 0 and after == 0:
            continue
        if mode == "constant":
            out = _constant_pad(out, dim, before, after, 0.0 if value is None else value)
        elif mode == "circular":
            out = _circular_pad(out, dim, before, after)
        elif mode in ("reflect", "replicate"):
            size = out.shape[dim] + before + after
            if size < 0 or (size == 0 and len(pad) == 2):  # (PyTorch's 1-d kernels want 1)
                if len(pad) > 2:
                    shape = list(out.shape)
                    shape[dim] = size
                    raise RuntimeError(f"Trying to create tensor with negative dimension {size}: "
                                       f"{shape}\nglassgrad: {mode} pads ({before}, {after}) of "
                                       f"dim {dim} of size {out.shape[dim]}.")
                name = "WHD"[k]
                raise RuntimeError(f"input ({name}: {out.shape[dim]}) is too small. Calculated "
                                   f"output {name}: {size}")
            out = out.index_select(dim, Tensor._make(_pad_index(out.shape[dim], before, after,
                                                                mode, dim)))
        else:
            raise NotImplementedError(
                f"Unrecognised padding mode {mode} (glassgrad: use constant, reflect, replicate "
                "or circular)"
            )
    if out is input or np.may_share_memory(out._array, input._array):
        out = out.clone()  # torch's pad never returns a view of its input
    if mode == "circular":  # NOTE: torch's circular pad writes a contiguous output
        return _pad_named(out.contiguous(), input, mode, k)
    from ._memory_layout import like_input

    return _pad_named(like_input(out, input), input, mode, k)


def _pad_named(out, input, mode, k):
    # torch's node per mode; circular pad is a copy into slices there (CopySlices), as here
    if mode == "constant":
        return named_as(out, "ConstantPadNdBackward0", input)
    if mode in ("reflect", "replicate"):
        kind = "ReflectionPad" if mode == "reflect" else "ReplicationPad"
        return named_as(out, f"{kind}{k + 1}DBackward0", input)
    return out


def _constant_pad(x, dim, before, after, value):
    if x.shape[dim] + min(before, 0) + min(after, 0) < 0:
        raise RuntimeError(f"narrow(): length must be non-negative.\nglassgrad: the negative pads "
                           f"({before}, {after}) crop more than dim {dim}'s {x.shape[dim]}.")
    if before < 0:
        x = narrow(x, dim, -before, x.shape[dim] + before)
        before = 0
    if after < 0:
        x = narrow(x, dim, 0, x.shape[dim] + after)
        after = 0
    parts = [_fill_block(x, dim, before, value)] if before else []
    parts.append(x)
    if after:
        parts.append(_fill_block(x, dim, after, value))
    return cat(parts, dim) if len(parts) > 1 else x


def _circular_pad(x, dim, before, after):
    """PyTorch's order: negative pads crop first, then the positive ones wrap the cropped dim
    (each pad at most the original size, as PyTorch checks)."""
    n = x.shape[dim]
    if before > n or after > n:
        raise RuntimeError(
            "Padding value causes wrapping around more than once. (glassgrad: dim "
            f"{dim} has size {n}, pads ({before}, {after}))"
        )
    if n + before + after < 0:
        raise RuntimeError(
            "Negative padding value is resulting in an empty dimension\nglassgrad: dim "
            f"{dim} has size {n}, pads ({before}, {after})."
        )
    if before < 0 or after < 0:
        x = narrow(x, dim, max(-before, 0), n + min(before, 0) + min(after, 0))
        before, after = max(before, 0), max(after, 0)
    kept = x.shape[dim]
    if (before or after) and not kept:
        raise RuntimeError(
            f"Padding value causes wrapping around more than once. (glassgrad: dim {dim} is "
            f"empty after the negative pads; nothing to wrap into pads ({before}, {after}))"
        )
    if not before and not after:
        return x
    index = np.mod(np.arange(-before, kept + after), kept)
    return x.index_select(dim, Tensor._make(index))


def _fill_block(x, dim, size, value):
    shape = list(x.shape)
    shape[dim] = size
    return full(shape, value, dtype=x.dtype)


def _pad_index(n, before, after, mode, dim):
    pos = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(pos, 0, n - 1)
    if before >= n or after >= n:
        raise RuntimeError(
            f"Argument #4: Padding size should be less than the corresponding input dimension, "
            f"but got: padding ({before}, {after}) at dimension {dim} of input of size {n}"
        )
    period = 2 * (n - 1) if n > 1 else 1
    pos = np.mod(pos, period)
    return np.where(pos >= n, period - pos, pos)
