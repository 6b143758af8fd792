"""Rearrangements between channels and space: ``pixel_shuffle``, ``pixel_unshuffle``,
``channel_shuffle`` (``torch.nn.functional``). Each is one reshape, one permute and one reshape:
no derivative code, so the gradient is the inverse rearrangement (PyTorch names its nodes
``PixelShuffleBackward0`` ...; glassgrad's graph shows the reshapes and the permute)."""

from __future__ import annotations

from ..autograd.node_names import named_as

__all__ = ["channel_shuffle", "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]


def _check_int(op: str, name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{op}(): argument '{name}' (position 2) must be int, not "
                        f"{type(value).__name__}")


def _check_factor(op: str, name: str, factor) -> None:
    _check_int(op, name, factor)
    if factor <= 0:
        raise RuntimeError(f"{op} expects a positive {name}, but got {factor}")


def _check_rank(op: str, input) -> None:
    if input.dim() < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")


def _layout(result, input):
    from ._memory_layout import like_input  # NOTE: torch's kernel keeps channels-last

    return like_input(result, input) if input.ndim == 4 else result


def pixel_shuffle(input, upscale_factor: int):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)`` with ``r = upscale_factor``
    (``torch.nn.functional.pixel_shuffle``). Raises RuntimeError for fewer than 3 dims, a
    channel count not divisible by ``r^2`` or ``r <= 0``.

    Example::

        >>> pixel_shuffle(glassgrad.randn(1, 8, 3, 3), 2).shape  # (1, 2, 6, 6)
    """
    _check_rank("pixel_shuffle", input)
    _check_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    out = _layout(x.reshape(*lead, c // (r * r), h * r, w * r), input)
    return named_as(out, "PixelShuffleBackward0", input)


def pixel_unshuffle(input, downscale_factor: int):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``, the inverse of ``pixel_shuffle``
    (``torch.nn.functional.pixel_unshuffle``). Raises RuntimeError for fewer than 3 dims, a
    height or width not divisible by ``r`` or ``r <= 0``."""
    _check_rank("pixel_unshuffle", input)
    _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    r = downscale_factor
    *lead, c, h, w = input.shape
    for side, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by "
                               f"downscale_factor, but input.size({dim})={size} is not "
                               f"divisible by {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    out = _layout(x.reshape(*lead, c * r * r, h // r, w // r), input)
    return named_as(out, "PixelUnshuffleBackward0", input)


def channel_shuffle(input, groups: int):
    """Interleave the channels of ``(N, C, *)`` (at least 3 dims) from ``groups`` groups:
    channel ``g * (C // groups) + k`` moves to ``k * groups + g``
    (``torch.nn.functional.channel_shuffle``). Raises RuntimeError for fewer than 3 dims,
    ``groups <= 0`` or ``C`` not divisible by ``groups``."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    _check_int("channel_shuffle", "groups", groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle
