"""``embedding_bag`` (``torch.nn.functional.embedding_bag``, ``torch.embedding_bag``) and
``torch.embedding_renorm_`` (issue 16, lane embed).

A bag's result is composed from existing differentiable ops: the rows are an ``embedding`` lookup
(so ``scale_grad_by_freq`` and ``padding_idx`` shape their gradient there), ``sum``/``mean`` add
them into their bag with ``index_add``, ``max`` picks each column's first largest row (ATen's
strict ``>``) by indexing, so the gradient of a column reaches that row only. Gradients of any
order, to the weight and to ``per_sample_weights``, come from those ops.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..ops.gather import index_add
from ..ops.elementwise import where
from ..tensor import Tensor
from ._functional_layers import _renorm_rows, embedding

__all__ = ["embedding_bag"]

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _type_name(t) -> str:
    return dtypes.type_name(t.dtype) if isinstance(t, Tensor) else type(t).__name__


def _check_indices(indices, offsets, weight) -> None:
    for name, t in (("indices", indices), ("offsets", offsets)):
        if not isinstance(t, Tensor) or t._array.dtype.kind not in "iu":
            raise RuntimeError(
                f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
                f"types: Long, Int; but got {_type_name(t)} instead (while checking arguments "
                "for embedding_bag)")
    if not isinstance(weight, Tensor) or not weight.is_floating_point():
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
            f"Half, BFloat16, Float, Double; but got {_type_name(weight)} instead (while "
            "checking arguments for embedding_bag)")


def _bags(idx: np.ndarray, off: np.ndarray, include_last_offset: bool) -> tuple:
    """(number of bags, the bag of each index); ATen's errors for bad offsets."""
    n = idx.shape[0]
    if off.shape[0] and off[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {off[0]}")
    if off.shape[0] and off[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {off[-1]}")
    bags = max(off.shape[0] - 1, 0) if include_last_offset else off.shape[0]
    starts = off[:bags].astype(np.int64)
    # NOTE: the last bag runs to the input's end even with include_last_offset, as ATen's
    # kernel (pytorch issue 89677's test): offsets[-1] only counts the bags
    ends = np.append(off[1:bags], n)
    ends = ends.astype(np.int64)
    if np.any(ends < starts):
        raise RuntimeError(
            "offsets must be non-decreasing\nglassgrad: embedding_bag got offsets "
            f"{off.tolist()}; each bag is input[offsets[i]:offsets[i + 1]]")
    bag_of = np.repeat(np.arange(bags, dtype=np.int64), ends - starts)
    return bags, bag_of, n if bags else 0


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """ATen's ``embedding_bag`` on 1-D ``indices``: ``(output (B, D), offset2bag, bag_size,
    max_indices)``, the three int tensors as ATen's CPU kernel fills them."""
    _check_indices(indices, offsets, weight)
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            f"argument #1 'per_sample_weights'; but type {dtypes.type_name(weight.dtype)} does "
            f"not equal {dtypes.type_name(per_sample_weights.dtype)} (while checking arguments "
            "for embedding_bag)")
    idx, off = indices._array.reshape(-1), offsets._array.reshape(-1)
    int_dtype = idx.dtype
    if padding_idx is not None and weight.dim() == 0:  # ATen asks a 0-d weight for its size(0)
        raise IndexError("Dimension specified as 0 but tensor has no dimensions\nglassgrad: "
                         "embedding_bag takes a (num_embeddings, embedding_dim) weight")
    if weight.dim() != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                           f"{weight.dim()}")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    bad = np.flatnonzero((idx < 0) | (idx >= num))
    if bad.size and (padding_idx is not None or mode == 2):  # ATen's two kernels' words
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           f"idx to be {idx[bad[0]]}")
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in "
                           f"the valid range [0, {num})")
    bags, bag_of, used = _bags(idx, off, include_last_offset)
    keep = np.arange(used) if padding_idx is None else np.flatnonzero(idx[:used] != padding_idx)
    kept_bags = bag_of[keep]
    counts = np.bincount(kept_bags, minlength=bags).astype(int_dtype)
    if mode == 2:
        output, max_indices = _bag_max(weight, idx[keep], kept_bags, bags, counts)
    else:
        rows = embedding(Tensor._make(idx[keep]), weight,
                         scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.reshape(-1)[Tensor._make(keep)].unsqueeze(1)
        output = index_add(rows.new_zeros((bags, dim)), 0, Tensor._make(kept_bags), rows)
        if mode == 1:
            output = output / Tensor._make(np.maximum(counts, 1).astype(
                np.dtype(weight._array.dtype))[:, None])
        max_indices = counts if mode == 1 else np.zeros(bags, int_dtype)
    # NOTE: ATen's sum without padding_idx of a non-double table takes a path that leaves
    # offset2bag empty (and every sum leaves bag_size zero); these are its numbers, which no
    # gradient depends on
    fast_sum = mode == 0 and padding_idx is None and weight.dtype != dtypes.float64
    offset2bag = np.zeros(0, int_dtype) if fast_sum else np.append(
        bag_of, np.full(idx.shape[0] - used, max(bags - 1, 0))).astype(int_dtype)
    bag_size = np.zeros(bags, int_dtype) if mode == 0 else counts
    return (output, Tensor._make(offset2bag), Tensor._make(bag_size),
            Tensor._make(np.asarray(max_indices, int_dtype)))


def _bag_max(weight, idx, bag_of, bags: int, counts):
    """Each bag's column-wise maximum and the row that holds it, as ATen's loop finds it: the
    bag's first row, replaced by each later one that is strictly greater (``>``). So a NaN first
    row wins and a later NaN never does (``x > nan`` and ``nan > x`` are both false)."""
    values = weight._array[idx]  # (n, D): which rows win is decided on the numbers
    n, dim = values.shape
    nan = np.isnan(values)
    clean = np.where(nan, -np.inf, values)  # a later NaN loses to anything, even a first -inf
    best = np.full((bags, dim), -np.inf, values.dtype)
    np.maximum.at(best, bag_of, clean)
    position = np.where(clean == best[bag_of], np.arange(n)[:, None], n)
    first = np.full((bags, dim), n)
    np.minimum.at(first, bag_of, position)
    start = np.full(bags, n)
    np.minimum.at(start, bag_of, np.arange(n))
    nan_first = np.append(nan, np.zeros((1, dim), bool), axis=0)[start]
    first = np.where(nan_first, start[:, None], first)
    empty = counts == 0
    rows = np.where(empty[:, None], 0, np.append(idx, 0)[first])
    picked = weight[Tensor._make(rows), Tensor._make(np.arange(dim)[None, :])]
    if empty.any():
        picked = where(Tensor._make(~empty[:, None]), picked, 0.0)
    return picked, rows


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows, ``(B, embedding_dim)``
    (``torch.nn.functional.embedding_bag``).

    ``input`` is ``(B, N)`` (B bags of N indices; ``offsets`` must be None) or 1-D with
    ``offsets (B,)`` giving each bag's start (``(B + 1,)`` with ``include_last_offset``); an empty
    bag gives zeros. Entries equal to ``padding_idx`` are left out of their bag (and of a mean's
    count); ``per_sample_weights`` (input's shape, ``mode='sum'`` only) scale each row;
    ``max_norm`` renormalises the used rows of ``weight`` in place first. Raises ValueError for
    bad shapes or modes, NotImplementedError for per-sample weights outside ``sum``, RuntimeError
    for out-of-range indices or bad offsets (ATen's text).

    Example::

        >>> w = glassgrad.arange(6.0).reshape(3, 2)
        >>> F.embedding_bag(glassgrad.tensor([0, 2, 1]), w, glassgrad.tensor([0, 1]), mode="sum")
        tensor([[0., 1.], [6., 8.]])
    """
    if isinstance(weight, Tensor) and weight.dtype == dtypes.int64 and input.is_floating_point():
        from .._user_warning import warn_user

        warn_user("Argument order of nn.functional.embedding_bag was changed. Usage "
                  "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                  "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}")
        offsets = Tensor._make(np.arange(0, input.numel(), input.shape[1],
                                         dtype=input._array.dtype))
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type, _checked=True)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    return _embedding_bag(weight, input, offsets, scale_grad_by_freq, _MODES[mode], sparse,
                          per_sample_weights, include_last_offset, padding_idx)[0]


def embedding_renorm_(weight, indices, max_norm: float, norm_type: float, *, _checked=False):
    """Rescale in place each row of ``weight`` named in ``indices`` whose ``norm_type``-norm
    exceeds ``max_norm`` to norm ``max_norm`` (``torch.embedding_renorm_``); returns ``weight``.
    RuntimeError on a tensor that requires grad while grad mode is on (``F.embedding`` calls it
    under no_grad), as PyTorch's in-place rules and its missing derivative do."""
    if not _checked and weight.requires_grad and is_grad_enabled():
        if weight.grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError(
            "the derivative for 'embedding_renorm' is not implemented.\nglassgrad: call it "
            "under glassgrad.no_grad(), as F.embedding(max_norm=...) does")
    with no_grad():
        _renorm_rows(weight, np.unique(indices._array), max_norm, norm_type)
    return weight
