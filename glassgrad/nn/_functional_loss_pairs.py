"""Losses on pairs and triplets of embeddings: ``cosine_embedding_loss`` and
``triplet_margin_loss`` (``torch.nn.functional``), composites of glassgrad ops with PyTorch's
formulas (so every derivative follows)."""

from __future__ import annotations

from ..ops.elementwise import clamp_min, minimum, where
from ._functional_layers import pairwise_distance
from ._functional_loss import _reduce, _reduction

__all__ = ["cosine_embedding_loss", "triplet_margin_loss"]

_EPS = 1e-12  # PyTorch's guard added to each squared magnitude


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean"):
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos - margin)`` where it is -1, zero
    elsewhere; cos over the last dim of (N, D) or (D,) inputs, each squared norm plus 1e-12
    (``torch.nn.functional.cosine_embedding_loss``). RuntimeError for 0-d or 3-D+ inputs."""
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if target.ndim == 1 else 1  # torch's pairing: a 1-D target for (N, D) inputs
    if input1.ndim != want or input2.ndim != want:
        raise RuntimeError(
            f"{target.ndim}D target tensor expects {want}D input tensors, but found inputs with "
            f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = input1.ndim - 1
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + _EPS
    mag2 = (input2 * input2).sum(dim) + _EPS
    cos = prod / (mag1 * mag2).sqrt()
    zeros = cos * 0.0
    loss = where(target == 1, 1 - cos, zeros) + where(target == -1, clamp_min(cos - margin, 0),
                                                     zeros)
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``pairwise_distance`` of norm
    ``p``; ``swap`` uses ``min(d(a, n), d(p, n))`` (``torch.nn.functional.triplet_margin_loss``).
    RuntimeError when the three inputs' dims differ."""
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = clamp_min(margin + d_pos - d_neg, 0)
    return _reduce(loss, _reduction(size_average, reduce, reduction))



def _check_triplet_dims(anchor, positive, negative) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )
