"""Parameter plumbing shared by the families: broadcast to one batch shape, check a value."""

from __future__ import annotations

from numbers import Number

from glassgrad.tensor import Size

from .utils import broadcast_all


def broadcast_params(*values):
    """``(tensors, batch_shape)``: the parameters broadcast together, and their batch shape
    (``Size()`` when every one was a Python number, as torch gives)."""
    tensors = broadcast_all(*values)
    if all(isinstance(v, Number) for v in values):
        return tensors, Size()
    return tensors, tensors[0].shape


def probs_or_logits(dist, probs, logits, is_binary=True, *tensors):
    """Set ``dist.probs`` or ``dist.logits`` (exactly one given; the other is a lazy property)
    and ``dist._param``; ``tensors`` are broadcast with it (Binomial's ``total_count``).
    Returns ``(broadcast tensors, whether the parameter was a Python number)``. ValueError
    when both or neither are given, with torch's message."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    is_scalar = isinstance(value, Number)
    if is_binary:
        *others, value = broadcast_all(*tensors, value)
    else:
        others = []
    dist.__dict__[name] = value
    dist._param = value
    return others, is_scalar
