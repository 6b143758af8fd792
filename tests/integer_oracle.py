"""Run one case on torch and on glassgrad and compare the outcome: the values and dtype of the
result, or the exception type and torch's first message line (which glassgrad's message must
contain). Used by the integer/bool semantics tables."""

from __future__ import annotations

import warnings

import numpy as np
import torch

import glassgrad


def outcome(fn, lib):
    """``("value", array, dtype name)`` or ``("raise", type, first message line)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
    except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
        return ("raise", type(exc), str(exc))
    if isinstance(r, (lib.Tensor,)):
        arr = r.detach().float().numpy() if r.dtype == lib.bfloat16 else r.detach().numpy()
        return ("value", np.array(arr), str(r.dtype).split(".")[-1])
    return ("value", np.asarray(r), type(r).__name__)


def assert_same_outcome(fn, key=None):
    """``fn(torch)`` and ``fn(glassgrad)`` agree; ``key`` overrides the phrase to match."""
    theirs, ours = outcome(fn, torch), outcome(fn, glassgrad)
    if theirs[0] == "raise" or ours[0] == "raise":
        assert ours[0] == theirs[0] == "raise", f"torch: {theirs}\nglassgrad: {ours}"
        assert ours[1] is theirs[1], f"torch: {theirs}\nglassgrad: {ours}"
        phrase = key if key is not None else theirs[2].split("\n")[0]
        assert phrase in ours[2], f"torch: {theirs[2]!r}\nglassgrad: {ours[2]!r}"
        return
    assert ours[2] == theirs[2], f"dtype: torch {theirs[2]}, glassgrad {ours[2]}"
    assert ours[1].shape == theirs[1].shape, f"torch: {theirs[1]}\nglassgrad: {ours[1]}"
    np.testing.assert_array_equal(ours[1], theirs[1])
