"""Run one function on torch and on glassgrad after the same seed and compare what it returns
(the nn.utils tests: parametrize, prune, fusion, init)."""

from __future__ import annotations

import warnings

import pytest
import torch

import glassgrad
from tests.oracle import assert_close

LIBS = (torch, glassgrad)


def _both(fn):
    """``fn(lib)`` for torch and glassgrad after the same seed."""
    out = []
    for lib in LIBS:
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            out.append(fn(lib))
    return out


def _same(t_out, g_out, atol=1e-10):
    if isinstance(t_out, (list, tuple)):
        assert len(t_out) == len(g_out)
        for a, b in zip(t_out, g_out):
            _same(a, b, atol)
    elif isinstance(t_out, torch.Tensor):
        assert_close(g_out, t_out, atol=atol, rtol=1e-6)
    elif isinstance(t_out, torch.dtype):
        assert str(g_out) == str(t_out).replace("torch.", "glassgrad.")
    else:
        assert g_out == t_out


def _error(fn):
    """The exception type and first line of ``fn(lib)`` in each library."""
    out = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib)
        out.append((type(info.value).__name__,
                    str(info.value).splitlines()[0].replace("torch.", "glassgrad.")))
    return out
