"""``torch.nn.functional.linear_cross_entropy`` (new in torch 2.13) and its options,
``torch.nn.LinearCrossEntropyOptions``: ``cross_entropy(linear(input, linear_weight), target)``,
optionally computed over chunks of the batch rows.

glassgrad's chunked path runs linear + per-row cross entropy one chunk at a time and reduces the
rows at the end, with ordinary autograd: the same values (to rounding) and gradients as the
reference path, and, unlike torch's fused op, second derivatives and ``retain_graph`` always work.
It does not save memory in glassgrad (each chunk's softmax stays in the graph).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import dtypes
from ..ops.joins import cat
from ..tensor import Tensor
from ._functional_layers import linear
from ._functional_loss import cross_entropy
from .._user_warning import warn_user

__all__ = ["linear_cross_entropy"]

_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """Chunking options of ``linear_cross_entropy`` (``torch.nn.LinearCrossEntropyOptions``):
    ``batch_chunk_size`` rows per chunk, or ``chunking_method`` 'auto' / 'aspect_ratio[:N]'
    (chunk logits about the input's size, divided by N); ``acc_policy`` and ``acc_dtype`` are
    checked as torch's and have no effect on NumPy (every policy accumulates in the input's
    dtype); ``allow_retain_graph`` is accepted (glassgrad's graph can always be retained).
    ValueError for invalid values, as torch."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (
                dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                "automatically.")

    def chunk_size(self, num_batches: int, in_features: int, num_classes: int) -> int:
        """Rows per chunk: ``batch_chunk_size``, else the aspect-ratio rule (auto: ratio 2)."""
        if self.chunking_method is None or (self.batch_chunk_size is not None
                                            and self.chunking_method == "auto"):
            return self.batch_chunk_size or num_batches or 1
        method = "aspect_ratio:2" if self.chunking_method == "auto" else self.chunking_method
        factor = int(method.partition(":")[2] or 1)
        rows = -(-num_batches // -(-num_classes // max(in_features, 1)))
        rows = 1 << max(rows - 1, 0).bit_length()
        return max(rows // factor, 1)


def _check(input, linear_weight, linear_bias):
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and input.ndim == 1:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {input.shape[-1]}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    return classes, out_features


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``
    (``torch.nn.functional.linear_cross_entropy``): input ``(N, in)`` or ``(in,)``,
    linear_weight ``(C, in)`` or ``(C, d1, ..., in)`` (K-dimensional loss, batched input only),
    target class indices or probabilities of the logits' shape; ``ignore_index`` None means -100
    and is refused with probabilities. ``options`` (a ``LinearCrossEntropyOptions``) chunks the
    batch; configurations torch's chunked op does not take warn and use the reference path.
    RuntimeError for inconsistent shapes."""
    classes, out_features = _check(input, linear_weight, linear_bias)
    logits_shape = (*input.shape[:-1], classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    is_long = target._array.dtype == np.int64
    chunked = options is not None and not out_features and reduction in (
        "mean", "sum", "none") and label_smoothing == 0.0 and is_long
    if options is not None and not chunked:
        warn_user(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == "
            f"(). Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={out_features}, tracing=False, "
            "linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if chunked:
        return _chunked(input, linear_weight, target, linear_bias, weight, reduction,
                        ignore_index, options)
    rows = math.prod(out_features, start=classes)
    if out_features:
        linear_weight = linear_weight.reshape(rows, input.shape[-1])
        linear_bias = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
             options):
    if not input.is_floating_point():  # torch resolves its accumulation dtype from the input's
        raise ValueError(
            "acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
            f"torch.float64}}, got torch.{str(input.dtype).rpartition('.')[2]}. Pass "
            "acc_dtype=None to let the op pick automatically.\nglassgrad: the chunked "
            "linear_cross_entropy takes a floating input.")
    batched = input.ndim == 2
    x = input if batched else input.unsqueeze(0)
    t = target if batched else target.reshape(1)
    n = x.shape[0]
    size = options.chunk_size(n, x.shape[1], linear_weight.shape[0])
    losses = [cross_entropy(linear(x[start:start + size], linear_weight, linear_bias),
                            t[start:start + size], weight=weight, reduction="none",
                            ignore_index=ignore_index) for start in range(0, n, size) or [0]]
    loss = cat(losses) if len(losses) > 1 else losses[0]
    if reduction == "none":
        return loss if batched else loss.reshape(())
    if reduction == "sum":
        return loss.sum()
    kept = Tensor._make((t._array != ignore_index).astype(loss._array.dtype))
    if weight is not None:
        kept = kept * weight[Tensor._make(np.where(t._array == ignore_index, 0, t._array))]
    return loss.sum() / kept.sum()
