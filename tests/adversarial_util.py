"""Helpers of the adversarial checks (tests/test_adversarial_*.py): the same code on torch and
glassgrad, results compared leaf by leaf."""

from __future__ import annotations

import math

import numpy as np
import torch

import glassgrad

LIBS = (torch, glassgrad)


def _np(t):
    if t is None:
        return None
    return t.detach().to(t.dtype if t.dtype in (torch.float64, glassgrad.float64) else
                         (torch if isinstance(t, torch.Tensor) else glassgrad).float64).numpy()


def _both(fn):
    """fn(lib) on both libraries; the results, (glassgrad's, torch's)."""
    return fn(glassgrad), fn(torch)


def _same(ours, theirs, what="", rtol=1e-6, atol=1e-7):
    """Nested lists/tuples of tensors, numbers, strings and None compared leaf by leaf."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, glassgrad.Tensor), f"{what}: {ours!r} vs tensor"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape"
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], f"{what}: dtype"
        np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=atol, err_msg=what,
                                   equal_nan=True)
    elif isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), f"{what}: {ours!r}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _same(a, b, f"{what}[{i}]", rtol, atol)
    elif isinstance(theirs, float) and math.isnan(theirs):
        assert isinstance(ours, float) and math.isnan(ours), what
    else:
        assert ours == theirs, f"{what}: {ours!r} vs torch {theirs!r}"


def _flat(v):
    out = []
    for e in v if isinstance(v, (list, tuple)) else [v]:
        if isinstance(e, (list, tuple)):
            out.extend(_flat(e))
        elif e is None:
            out.append(np.nan)
        elif not isinstance(e, str) and not isinstance(e, bool):
            out.append(float(e))
        else:
            out.append(float(bool(e)) if isinstance(e, bool) else 0.0)
    return out
