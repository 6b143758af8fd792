"""Loss functions of ``glassgrad.nn.functional`` (``torch.nn.functional.mse_loss`` ...).

Composed from primitives, so every loss has first and second derivatives. ``reduction`` is
'mean' (default), 'sum' or 'none'; the legacy ``size_average``/``reduce`` flags map onto it.
"""

from __future__ import annotations


import numpy as np

from .. import dtypes
from ..amp.autocast import autocast_args
from ..autograd.node_names import named_as
from ..amp.autocast import state as _autocast
from ..functional import log_softmax
from ..ops._util import half, is_tensor
from ..ops.activation import Softplus
from ..ops.elementwise import log, where
from ..ops.fused import NllLoss
from ..ops.fused_loss import BinaryCrossEntropyWithLogits, MseLoss
from ..ops.loss import BinaryCrossEntropy, BinaryCrossEntropyWithLogitsPosWeight
from ..tensor import Tensor
from .._user_warning import warn_user


def _legacy_reduction(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduction(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        warn_user(
            "size_average and reduce args will be deprecated, please use reduction='"
            f"{_legacy_reduction(size_average, reduce)}' instead.", UserWarning, stacklevel=3)
        return _legacy_reduction(size_average, reduce)
    return reduction


def _reduce(loss, reduction: str):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _fusable(input, target, reduction: str) -> bool:
    """The fused losses' conditions: plain float arrays of one shape and dtype, a known reduction."""
    x, t = input._array, target._array
    return (type(x) is np.ndarray and type(t) is np.ndarray and x.dtype.kind == "f"
            and x.dtype == t.dtype and x.shape == t.shape and x.size > 0
            and reduction in ("mean", "sum", "none"))


def _check_sizes(input, target, name: str) -> None:
    if target.shape != input.shape:
        warn_user(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """``(input - target)^2`` reduced (``torch.nn.functional.mse_loss``); any shape."""
    if _autocast.on:
        input, target, weight = autocast_args("mse_loss", input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    _check_sizes(input, target, "mse_loss")
    if weight is None and _fusable(input, target, reduction):  # one op (ops/fused_loss.py)
        return MseLoss.apply(input, target, reduction=reduction)
    diff = input - target
    loss = diff * diff
    return _reduce(loss, reduction) if weight is None else _weighted(loss, weight, input,
                                                                     reduction, True)


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """``|input - target|`` reduced (``torch.nn.functional.l1_loss``)."""
    if _autocast.on:
        input, target, weight = autocast_args("l1_loss", input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    _check_sizes(input, target, "l1_loss")
    loss = (input - target).abs()
    return _reduce(loss, reduction) if weight is None else _weighted(loss, weight, input,
                                                                     reduction, True)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta`` else ``|d| - 0.5 beta``
    (``torch.nn.functional.smooth_l1_loss``); ``beta=0`` is L1."""
    if _autocast.on:
        input, target = autocast_args("smooth_l1_loss", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _check_sizes(input, target, "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = input - target
    ad = diff.abs()
    if beta == 0:
        return _reduce(ad, reduction)
    loss = where(ad < beta, diff * diff * (0.5 / beta), ad - 0.5 * beta)
    return named_as(_reduce(loss, reduction), "SmoothL1LossBackward0", input, target)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """``0.5 d^2`` where ``|d| < delta`` else ``delta (|d| - 0.5 delta)``
    (``torch.nn.functional.huber_loss``)."""
    if _autocast.on:
        input, target, weight = autocast_args("huber_loss", input, target, weight)
    _check_sizes(input, target, "huber_loss")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = input - target
    ad = diff.abs()
    loss = where(ad < delta, diff * diff * 0.5, (ad - 0.5 * delta) * delta)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, False)
    return named_as(_reduce(loss, reduction), "HuberLossBackward0", input, target)


def _weighted(loss, weight, input, reduction, by_weight):
    """PyTorch 2.13's elementwise ``weight`` of mse/l1/huber: of the input's size, and 'mean'
    divides by ``weight.sum()`` (``by_weight``: mse, l1) or by the element count (huber)."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.\nglassgrad: weight is "
                         f"{list(weight.shape)}, input {list(input.shape)}.")
    weighted = loss * weight
    if reduction == "mean" and by_weight:
        return weighted.sum() / weight.sum()
    return _reduce(weighted, reduction)


def _class_shape(weight, ndim: int):
    return weight.reshape((1, -1) + (1,) * (ndim - 2)) if ndim >= 2 else weight


def _check_batch(input, target) -> None:
    n = target.shape[0] if target.ndim else 0
    if input.ndim >= 2 and input.shape[0] != n:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({n}).\n"
            f"glassgrad: input {list(input.shape)} is (N, C, ...), so the target needs N = "
            f"{input.shape[0]} rows; got a target of shape {list(target.shape)}."
        )


def _check_target(input, target, op: str = "nll_loss") -> None:
    """PyTorch's order: batch size, a 1-D target for (N, C) input, the target's size, then its
    dtype (int64 or uint8 class indices)."""
    _check_batch(input, target)
    if input.ndim <= 2 and target.ndim > 1:
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported\n"
            f"glassgrad: {op} of input {list(input.shape)} takes class indices of shape "
            f"{list(input.shape[:1])}, got a target of shape {list(target.shape)}."
        )
    expected = (input.shape[0],) + tuple(input.shape[2:]) if input.ndim >= 2 else ()
    if input.ndim > 2 and tuple(target.shape) != expected:
        raise RuntimeError(
            f"Expected target size {list(expected)}, got {list(target.shape)}\n"
            f"glassgrad: input {list(input.shape)} is (N, C, d1, ...); target must be (N, d1, ...)."
        )
    if target._array.dtype not in (np.int64, np.uint8):
        got = dtypes.type_name(target.dtype)[6:-6]
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {got}\n"
            f"glassgrad: {op} takes class-index targets as an int64 tensor (target.long())"
            + (f"; class probabilities must have the input's shape {list(input.shape)}."
               if target.is_floating_point() else ".")
        )


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    """``-input[n, target[n]] * weight[target[n]]`` for log-probabilities ``(N, C, *)`` or
    ``(C,)`` and integer targets ``(N, *)`` or ``()``; 'mean' divides by the summed weights of
    the non-ignored targets (``torch.nn.functional.nll_loss``)."""
    if _autocast.on:
        input, target, weight = autocast_args("nll_loss", input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if not is_tensor(input):
        raise TypeError(f"nll_loss(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if not input.is_floating_point():
        raise NotImplementedError(
            f'"nll_loss_out_frame" not implemented for \'{dtypes.type_name(input.dtype)[6:-6]}\'')
    _check_target(input, target)
    if input.ndim == 1 and target.ndim == 1:  # one sample: a (1,) target is its index
        if target.shape[0] != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: "
                f"{target.shape[0]}\nglassgrad: nll_loss of one sample {list(input.shape)} takes "
                "one class index; batch the input as (N, C) for N targets.")
        target = target.reshape(())
    t = target._array
    c = input.shape[1] if input.ndim >= 2 else input.shape[0]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != c):
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}\nglassgrad: nll_loss of input "
            f"{list(input.shape)} takes a class weight of shape [{c}].")
    ignored = t == ignore_index
    safe = np.where(ignored, 0, t)
    if safe.size and (safe.min() < 0 or safe.max() >= c):
        bad = safe[(safe < 0) | (safe >= c)].flat[0]
        raise IndexError(f"Target {bad} is out of bounds.")
    keep = ~ignored
    arr = input._array
    if (input.ndim == 2 and type(arr) is np.ndarray
            and (arr.dtype.kind == "f" or half(arr.dtype))
            and reduction in ("mean", "sum", "none")
            and (weight is None or (weight._array.dtype == arr.dtype and not weight._requires_grad))):
        # one fused op (ops/fused.py) for the common (N, C) case; same values as below
        w = (weight._array[safe] * keep) if weight is not None else keep.astype(arr.dtype)
        acc = np.float32 if half(arr.dtype) else arr.dtype  # NOTE [16-bit accumulation]
        total = np.asarray(w.sum(dtype=acc), dtype=acc) if reduction == "mean" else None
        return NllLoss.apply(input, index=safe, weight=w, total=total, reduction=reduction,
                             classes=c, ignored=ignored if ignored.any() else None)
    class_dim = 1 if input.ndim >= 2 else 0
    idx = Tensor._make(np.expand_dims(safe, class_dim))
    picked = -input.gather(class_dim, idx).squeeze(class_dim)
    keep = ~ignored
    if weight is not None:
        w = weight[Tensor._make(safe)] * Tensor._make(keep.astype(weight._array.dtype))
    else:
        w = Tensor._make(keep.astype(input._array.dtype))
    # NOTE: selected, not only weighted by 0: an ignored target gets no gradient even when the
    # mean divides by a zero total (PyTorch's 0, not 0 * inf = nan)
    loss = where(Tensor._make(keep), picked * w, 0.0) if ignored.any() else picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """``nll_loss(log_softmax(input, 1), target)`` for class indices, or ``-sum(target *
    log_softmax(input))`` for class probabilities (a float target of input's shape); with
    ``weight``, ``ignore_index`` and ``label_smoothing`` as PyTorch
    (``torch.nn.functional.cross_entropy``). Input ``(N, C, *)`` or ``(C,)``."""
    if _autocast.on:
        input, target, weight = autocast_args("cross_entropy", input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    if input.ndim == 0:  # NOTE: PyTorch looks up the class dim 1 first
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)"
                         "\nglassgrad: cross_entropy takes logits (N, C, *) or (C,).")
    class_dim = 1 if input.ndim >= 2 else 0
    c = input.shape[class_dim]
    logp = log_softmax(input, class_dim)
    if target.is_floating_point() and target.shape == input.shape:  # class probabilities
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * _class_shape(weight, input.ndim)
        loss = -prod.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c) if input.numel() else loss.sum() * np.nan
        return _reduce(loss, reduction)
    _check_target(input, target, "cross_entropy")
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0:
        return nll
    ignored = Tensor._make(target._array == ignore_index)
    if weight is not None:
        smooth = -(logp * _class_shape(weight, input.ndim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = where(ignored, 0.0, smooth)
    if reduction == "mean":
        t = target._array
        if weight is not None:
            smooth = smooth.sum() / weight[Tensor._make(t[t != ignore_index])].sum()
        else:
            smooth = smooth.sum() / float((t != ignore_index).sum())
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """``-(t log x + (1 - t) log(1 - x))`` with each log clamped to >= -100, as PyTorch
    (``torch.nn.functional.binary_cross_entropy``). ``input`` in [0, 1], same shape as target."""
    if _autocast.on:
        input, target, weight = autocast_args("binary_cross_entropy", input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    x = input._array
    if x.size and (np.any(x < 0) or np.any(x > 1) or np.isnan(x).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    t = target._array
    if t.size and not ((t >= 0) & (t <= 1)).all():  # NOTE: a NaN target fails this too
        raise RuntimeError("all elements of target should be between 0 and 1")
    if target.dtype != input.dtype:
        target = target.to(input.dtype)
    loss = BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return named_as(_reduce(loss, reduction), "BinaryCrossEntropyBackward0", input, target)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """``sigmoid`` + BCE in the stable form ``(1 - t) x + (1 + (pw - 1) t) softplus(-x)``, finite
    for any ``|x|`` (``torch.nn.functional.binary_cross_entropy_with_logits``)."""
    if _autocast.on:
        input, target, weight, pos_weight = autocast_args(
            "binary_cross_entropy_with_logits", input, target, weight, pos_weight)
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    _check_bce_target(input, target)
    if (weight is None and pos_weight is None and not target._requires_grad
            and _fusable(input, target, reduction)):  # one op (ops/fused_loss.py)
        return BinaryCrossEntropyWithLogits.apply(input, target, reduction=reduction)
    if pos_weight is not None:  # one op with torch's gradient formulas (ops/loss.py)
        loss = BinaryCrossEntropyWithLogitsPosWeight.apply(input, target, pos_weight)
    else:
        loss = (1.0 - target) * input + Softplus.apply(-input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _check_bce_target(input, target) -> None:
    """torch's ``(1 - target).mul_(input)`` refuses an integer or bool target of a float input."""
    kind = target._array.dtype.kind if is_tensor(target) else "f"
    if not (is_tensor(input) and input.is_floating_point()) or kind not in "iub":
        return
    from ..ops._names import scalar_type

    hint = (f"\nglassgrad: binary_cross_entropy_with_logits takes a floating target like the "
            f"{input.dtype} input; got {target.dtype} (convert it with .to(input.dtype))")
    if kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead." + hint)
    raise RuntimeError(f"result type {scalar_type(input.dtype)} can't be cast to the desired "
                       f"output type {scalar_type(target.dtype)}" + hint)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False):
    """``target * (log(target) - input)`` with ``input`` log-probabilities (``0 log 0 = 0``), or
    ``exp(target) (target - input)`` with ``log_target`` (``torch.nn.functional.kl_div``);
    'batchmean' divides the sum by the batch size."""
    if _autocast.on:
        input, target = autocast_args("kl_div", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warn_user(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.", UserWarning, stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        from ..ops.special_ops import xlogy

        # NOTE: torch's xlogy(target, target): 0 at target == 0, nan for a negative target
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None, reduction: str = "mean"):
    """Poisson negative log likelihood (``torch.nn.functional.poisson_nll_loss``)."""
    if _autocast.on:
        input, target = autocast_args("poisson_nll_loss", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        t = target
        # NOTE: torch's masked_fill(target <= 1, 0) of the term on the raw target: a NaN target
        # keeps it, and a masked one still sends 0 * (log t + 1 / 2t) back (nan at t = 0 or -inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = t * log(t) - t + 0.5 * log(t * (2 * np.pi))
        loss = loss + where(t <= 1, 0.0, stirling)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """``log(1 + exp(-y x))`` (``torch.nn.functional.soft_margin_loss``)."""
    if _autocast.on:
        input, target = autocast_args("soft_margin_loss", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce(Softplus.apply(-target * input), reduction)


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    """``max(0, -y (x1 - x2) + margin)`` (``torch.nn.functional.margin_ranking_loss``)."""
    if _autocast.on:
        input1, input2, target = autocast_args("margin_ranking_loss", input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1)}, input2: {_size(input2)}, target: {_size(target)} ")
    return _margin_ranking(input1, input2, target, margin, reduction)


def _margin_ranking(input1, input2, target, margin, reduction):
    """The loss itself; torch's top-level ``margin_ranking_loss`` has no dimension check."""
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0.0), reduction)


def _size(t) -> str:
    return f"torch.Size({list(t.shape)})"  # NOTE: torch's wording, searchable as torch prints it


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1``."""
    if _autocast.on:
        input, target = autocast_args("hinge_embedding_loss", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    # NOTE: PyTorch's selections (target != 1, target != -1) against constant zeros: an inf/NaN
    # grad stays out of the unselected part (input * 0 would send it through as nan)
    zero = 0.0
    if input._array.dtype.kind in "iu":  # NOTE: torch's `margin - self` fills self's dtype first
        margin, zero = int(margin), 0
    margin_part = where(target != 1, (margin - input).clamp_min(zero), zero)
    self_part = where(target != -1, input, zero)
    return _reduce(margin_part + self_part, reduction)


__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
]
