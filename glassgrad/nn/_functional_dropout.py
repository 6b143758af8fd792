"""Dropout functions of ``glassgrad.nn.functional`` (``torch.nn.functional.dropout``,
``dropout1d/2d/3d``): torch's CPU masks after the same seed. Composed: no derivative code."""

from __future__ import annotations


from .. import dtypes
from .._factories import _rng
from .._factory_args import _dropout_dtype
from .._tensor_methods import _composite_inplace
from ..tensor import Tensor
from .._user_warning import warn_user

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d"]


def _check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _mask_dropout(input, p, mask_shape):
    """torch's CPU dropout: ``noise = empty(mask_shape).bernoulli_(1 - p).div_(1 - p)`` in
    input's dtype, then ``input * noise``, so the mask and the scaled values are torch's after
    the same seed (bernoulli_'s default CPU kernel, a float64 uniform per element)."""
    dt = _dropout_dtype(input._array.dtype, p)
    if p == 1.0:  # NOTE: torch's input.mul(zeros({}, input.options())): an int input stays int
        return input * (0.0 if dt.kind == "f" or dt == dtypes.bfloat16.np else 0)
    noise = _rng(None).bernoulli(mask_shape, dt, 1.0 - p)
    from ._memory_layout import like_strides  # NOTE: torch's product keeps input's dim order

    return like_strides(input * Tensor._make(noise / dt.type(1.0 - p)), input)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` when
    ``training``; identity otherwise. Masks are torch's after the same seed; ``inplace``
    writes the result into ``input`` and returns it (``torch.nn.functional.dropout``)."""
    return _feature_dropout(input, p, training, 0, inplace)


def _feature_dropout(input, p, training, batched_ndim, inplace=False):
    """Dropout with one mask value per channel (``batched_ndim`` 0: per element)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if inplace:
        return _dropout_(input, p, training, batched_ndim)
    shape = input._array.shape
    if not batched_ndim:
        return _mask_dropout(input, p, shape)
    keep = 2 if input.ndim >= batched_ndim else 1
    return _mask_dropout(input, p, shape[:keep] + (1,) * (input.ndim - keep))


_dropout_ = _composite_inplace(_feature_dropout, "dropout_")


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` (``torch.nn.functional.dropout1d``);
    RuntimeError for another rank."""
    _check_p(p)  # torch checks p first
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, "
            "a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, 3, inplace)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, H, W)`` (``torch.nn.functional.dropout2d``); as torch, a
    2-D or 5-D input warns and drops along its first two dims (a 2-D one so per element), a 3-D
    one warns and is (N, C, L)."""
    if input.ndim not in (3, 4):
        warn_user(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=3)
    elif input.ndim == 3:
        warn_user(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=3)
    return _feature_dropout(input, p, training, min(input.ndim, 4), inplace)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    (``torch.nn.functional.dropout3d``); another rank warns, as torch, and is taken as unbatched
    (one mask value per index of its first dim)."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warn_user(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=3)
    # NOTE: torch unsqueezes all but a 5-D input, so only a 5-D one keeps a batch dim
    return _feature_dropout(input, p, training, 5 if input.ndim == 5 else input.ndim + 1,
                            inplace)
