"""Multi-class margin, multi-label and Gaussian losses of ``glassgrad.nn.functional``
(``torch.nn.functional.multi_margin_loss``, ``multilabel_margin_loss``,
``multilabel_soft_margin_loss``, ``gaussian_nll_loss``, ``triplet_margin_with_distance_loss``).

Composites of glassgrad ops with PyTorch's formulas, so first and second derivatives follow; the
integer targets are read once in NumPy to build constant masks.
"""

from __future__ import annotations

import math

import numpy as np

from .._arg_check import _type_name
from ..autograd.node_names import named_as
from ..ops._names import c_type, scalar_type
from ..ops._util import is_tensor
from ..ops.elementwise import clamp_min, minimum, where
from ..tensor import Tensor
from ._functional_activation import logsigmoid
from ._functional_layers import pairwise_distance
from ._functional_loss import _reduce, _reduction
from ._functional_loss_pairs import _check_triplet_dims

__all__ = [
    "gaussian_nll_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "triplet_margin_with_distance_loss",
]


def _check_reduction(reduction: str, phrase: str = " is not a valid value for reduction") -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction}{phrase}")


def _vector_or_matrix(input, op: str) -> None:
    """torch's check of the margin losses' input: (C,) or (N, C) with C > 0 (N may be 0)."""
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}\nglassgrad: {op} takes scores (C,) or (N, C).")


def _scalar(t) -> str:
    return scalar_type(t.dtype)


def _long_target(target, op: str) -> np.ndarray:
    t = target._array
    if t.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {_scalar(target)}\nglassgrad: {op} takes "
                           "class indices as an int64 tensor (target.long()).")
    return t


def _hinge(z):
    # NOTE: torch's margin kernels add z only where z > 0, so a NaN score adds nothing
    return where(z > 0, z, 0.0)


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean"):
    """``sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C`` per sample, for scores ``(N, C)``
    or ``(C,)`` and int64 class indices ``(N,)`` or ``()`` (``torch.nn.functional.
    multi_margin_loss``). ValueError for ``p`` other than 1 or 2 or a weight that is not 1-D;
    RuntimeError for bad shapes, a non-int64 target or a target out of range."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_reduction(reduction)
    _vector_or_matrix(input, "multi_margin_loss")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    n, c = x.shape
    if target.numel() != n or target.ndim > 1:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
            f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. "
            f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar(input)} but found {_scalar(weight)}\nglassgrad: "
            f"multi_margin_loss takes a weight of the input's dtype {input.dtype}.")
    t = _long_target(target, "multi_margin_loss").reshape(n)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError(f"target out of range\nglassgrad: multi_margin_loss has {c} classes; "
                           f"the target holds {t.min()}..{t.max()}.")
    picked = x.gather(1, Tensor._make(t.reshape(n, 1)))
    hinge = _hinge(margin - picked + x)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[Tensor._make(t)].reshape(n, 1)
    others = Tensor._make(np.arange(c)[None, :] != t[:, None])
    loss = where(others, hinge, 0.0).sum(1) / c
    if input.ndim == 1:
        loss = loss.reshape(())
    return named_as(_reduce(loss, reduction), "MultiMarginLossBackward0", input)


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction: str = "mean"):
    """``sum_{j, i} max(0, 1 - (x[y_j] - x[i])) / C`` over the target classes ``y_j`` (the
    entries of each target row before its first -1) and the other classes ``i``, for scores
    ``(N, C)`` or ``(C,)`` and an int64 target of the same shape
    (``torch.nn.functional.multilabel_margin_loss``). RuntimeError for bad shapes, dtypes or a
    target out of range."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _vector_or_matrix(input, "multilabel_margin_loss")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    n, c = x.shape
    t = _long_target(target, "multilabel_margin_loss").reshape(n, c)
    # a row's targets end at its first -1
    valid = np.cumprod(t != -1, axis=1).astype(bool)
    if ((t < -1) | (t >= c)).any():
        raise RuntimeError(f"argument #2 'target' is out of range\nglassgrad: "
                           f"multilabel_margin_loss has {c} classes (targets 0..{c - 1}, -1 ends "
                           "a row).")
    safe = np.where(valid, t, 0)
    is_target = np.zeros((n, c), dtype=bool)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, c))
    is_target[rows[valid], safe[valid]] = True
    picked = x.gather(1, Tensor._make(safe))  # (N, C): x[y_j]
    hinge = _hinge(1.0 - picked.reshape(n, c, 1) + x.reshape(n, 1, c))
    pairs = Tensor._make(valid[:, :, None] & ~is_target[:, None, :])
    loss = where(pairs, hinge, 0.0).sum((1, 2)) / c
    if input.ndim == 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """``-mean_c(t log sigmoid(x) + (1 - t) log sigmoid(-x))`` over the last dim, optionally
    weighted per class (``torch.nn.functional.multilabel_soft_margin_loss``); input and target
    ``(N, C)`` or ``(C,)``."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    _check_reduction(reduction, " is not valid")
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean"):
    """``0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps))`` (+ ``0.5 log(2 pi)``
    with ``full``), ``torch.nn.functional.gaussian_nll_loss``. ``var``: a float, or a tensor of
    input's shape, of input's shape less the last dim, or with one dim of size 1. The clamp is
    as torch's (done without recording), so ``var``'s gradient passes through it unchanged.
    ValueError for a negative var, a var of the wrong size or a bad reduction."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.detach() * 0.0 + var
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    elif not var.is_floating_point():
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {c_type(var.dtype)}\n"
            f"glassgrad: gaussian_nll_loss clamps var at eps={eps} in place, so var must be a "
            f"floating tensor; got {var.dtype} (convert it with var.float()).")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    _check_reduction(reduction, " is not valid")
    held = var.detach()
    # NOTE: torch clamps under no_grad, in place: the value is clamped, the gradient passes as 1
    var = where(held < eps, var - held + eps, var)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with any ``distance_function(x, y)`` (default
    ``pairwise_distance``); ``swap`` uses ``min(d(a, n), d(p, n))``
    (``torch.nn.functional.triplet_margin_with_distance_loss``). ValueError for a bad reduction
    or ``margin <= 0``; RuntimeError when the inputs' dims differ."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    if distance_function is None:
        _check_tensors(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return _reduce(clamp_min(margin + d_pos - d_neg, 0), reduction)


def _check_tensors(anchor, positive, negative) -> None:
    """The TypeError torch's default ``pairwise_distance`` raises for a non-Tensor argument."""
    for position, name, value in ((1, "x1", anchor), (2, "x2", positive), (2, "x2", negative)):
        if not is_tensor(value):
            raise TypeError(f"pairwise_distance(): argument '{name}' (position {position}) must "
                            f"be Tensor, not {_type_name(value)}")

