"""``torch.cond`` run eagerly (issue 15, lane tnn): torch traces it under ``torch.compile``;
glassgrad has no tracer, so the predicate is read and one branch called, gradients flowing
through it as through any Python code."""

from __future__ import annotations

from .tensor import Tensor


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (``torch.cond``).
    ``pred``: a bool, a number or a one-element Tensor; RuntimeError otherwise (torch's
    wording). ``operands``: a tuple or list (a Tensor is unpacked along dim 0, as torch does)."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(
                f"Expected pred to be bool or single-element tensor, but got {pred}."
            )
        taken = bool(pred.item())
    elif isinstance(pred, (bool, int, float)):
        taken = bool(pred)
    else:
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return (true_fn if taken else false_fn)(*operands)
