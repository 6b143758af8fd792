"""``torch.nn.functional.ctc_loss`` and ``torch.ctc_loss``: argument handling and reduction
around the CTC primitive (ops/ctc.py)."""

from __future__ import annotations

import numpy as np

from ..ops._names import scalar_type
from ..ops._util import is_tensor
from ..ops.ctc import CtcLoss
from ..tensor import Tensor

__all__ = ["ctc_loss"]

_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"


def _lengths(value, name: str) -> np.ndarray:
    if is_tensor(value):
        arr = value._array
        if arr.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral\nglassgrad: ctc_loss takes {name} as an "
                               f"integer tensor or a tuple of ints; got {value.dtype}.")
        return arr.astype(np.int64).reshape(-1)
    return np.asarray(value, dtype=np.int64).reshape(-1)


def _check_kinds(input_lengths, target_lengths, blank, reduction, zero_infinity) -> None:
    """torch's two overloads: both lengths tensors, or both sequences of ints."""
    tensors = is_tensor(input_lengths), is_tensor(target_lengths)
    sequences = [isinstance(v, (list, tuple)) for v in (input_lengths, target_lengths)]
    if not (all(tensors) or all(sequences)):
        kinds = f"{_kind(input_lengths)}, {_kind(target_lengths)}"
        raise TypeError(
            f"ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, "
            f"{kinds}, {_kind(blank)}, {_kind(reduction)}, {_kind(zero_infinity)}), but expected "
            "one of:\n * (Tensor log_probs, Tensor targets, tuple of "
            "ints input_lengths, tuple of ints target_lengths, int blank = 0, int reduction = "
            "at::Reduction::Mean, bool zero_infinity = False)\n * (Tensor log_probs, Tensor "
            "targets, Tensor input_lengths, Tensor target_lengths, int blank = 0, int reduction = "
            "at::Reduction::Mean, bool zero_infinity = False)")


def _kind(value) -> str:
    return "Tensor" if is_tensor(value) else type(value).__name__


def _padded(targets, target_lengths, batch) -> np.ndarray:
    """Targets as (N, S) int64, from padded (N, S), concatenated (sum L,) or unbatched (S,)."""
    t = targets._array.astype(np.int64)
    longest = int(target_lengths.max()) if target_lengths.size else 0
    if t.ndim == 2 or (batch is None and t.ndim == 1):
        t = t.reshape(1, -1) if t.ndim == 1 else t
        if t.shape[1] < longest:
            raise RuntimeError(
                f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                f"{t.shape[1]} for argument #2 'targets'{_CHECKING}")
        return t[:, :max(longest, 0)]
    total = int(target_lengths.sum())
    if t.shape[0] != total:
        raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size "
                           f"{t.shape[0]} for argument #2 'targets'{_CHECKING}")
    out = np.zeros((len(target_lengths), longest), dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(target_lengths)[:-1]))
    for k, (start, length) in enumerate(zip(starts, target_lengths)):
        out[k, :length] = t[start:start + length]
    return out


def _nll(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, reduction):
    """Per-sample losses (N,) (or () for an unbatched (T, C) input) and the target lengths."""
    _check_kinds(input_lengths, target_lengths, blank, reduction, zero_infinity)
    if not log_probs.is_floating_point():
        raise NotImplementedError(
            f'"ctc_loss_cpu" not implemented for \'{scalar_type(log_probs.dtype)}\'')
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got "
                           f"{list(log_probs.shape)}")
    t_max, batch, classes = lp.shape
    ilen, tlen = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths,
                                                                   "target_lengths")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range\nglassgrad: ctc_loss has "
                           f"{classes} classes; blank={blank}.")
    if ilen.size != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tlen.size != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for name, values, top in (("input_lengths", ilen, t_max), ("target_lengths", tlen, None)):
        if values.size and values.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                               f"{values.min()}{_CHECKING}")
        if top is not None and values.size and values.max() > top:
            raise RuntimeError(f"Expected {name} to have value at most {top}, but got value "
                               f"{values.max()}{_CHECKING}")
    padded = _padded(targets, tlen, None if unbatched else batch)
    used = padded[np.arange(padded.shape[1])[None, :] < tlen[:, None]]
    if used.size and (used.min() < 0 or used.max() >= classes):
        bad = used[(used < 0) | (used >= classes)][0]
        # NOTE: torch's CPU kernel reads past the class dim here and returns garbage
        raise IndexError(f"Target {bad} is out of bounds.\nglassgrad: ctc_loss has {classes} "
                         f"classes (log_probs {list(log_probs.shape)}); targets must be in "
                         f"[0, {classes}).")
    nll = CtcLoss.apply(lp, targets=padded, input_lengths=ilen, target_lengths=tlen,
                        blank=int(blank), zero_infinity=bool(zero_infinity))
    return (nll.reshape(()) if unbatched else nll), tlen


def _reduce_ctc(nll, tlen, reduction):
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    if reduction == "mean":  # each loss over its target length (at least 1), then the batch mean
        divisor = Tensor._make(np.maximum(tlen, 1).astype(nll._array.dtype).reshape(nll.shape))
        return (nll / divisor).mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False):
    """CTC loss (``torch.nn.functional.ctc_loss``): ``log_probs`` ``(T, N, C)`` or ``(T, C)``
    (log_softmax outputs), ``targets`` padded ``(N, S)`` or concatenated ``(sum L,)`` (or
    ``(S,)`` unbatched), ``input_lengths``/``target_lengths`` both tensors or both tuples of ints.
    'mean' divides each loss by its target length, then averages over the batch;
    ``zero_infinity`` zeroes impossible alignments' losses and gradients. The gradient is
    torch's (with respect to the logits behind log_softmax); it has no second derivative."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    # NOTE: F.ctc_loss hands torch.ctc_loss an int reduction, which its TypeError shows
    nll, tlen = _nll(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity,
                     ("none", "mean", "sum").index(reduction))
    return _reduce_ctc(nll, tlen, reduction)


def ctc_loss_top(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
                 reduction: int = 0, zero_infinity: bool = False):
    """``torch.ctc_loss``: an int ``reduction`` (0 none, 1 mean, 2 sum)."""
    # NOTE: torch 2.13's binding returns the unreduced losses when reduction is left out,
    # although its signature reads Mean; glassgrad matches what it does
    nll, tlen = _nll(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity,
                     reduction)
    return _reduce_ctc(nll, tlen, {1: "mean", 2: "sum"}.get(reduction, "none"))


ctc_loss_top.__name__ = "ctc_loss"
