"""Run one function on torch and on glassgrad and compare what came back (autograd tests).

``same(fn)`` compares results (Tensors by value, recursively through tuples, lists and dicts);
``same_error(fn, exc, phrase)`` checks that both libraries raise ``exc`` with ``phrase`` in the
message, so every phrase a test asserts is also proven to be PyTorch's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close

LIBS = (torch, glassgrad)


def _compare(a, b, atol, rtol, path="result"):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, glassgrad.Tensor), f"{path}: torch gave a Tensor, glassgrad {b!r}"
        assert_close(b, a, atol=atol, rtol=rtol, what=path)
    elif isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), f"{path}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _compare(x, y, atol, rtol, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), f"{path}: keys {a.keys()} vs {b.keys()}"
        for k in a:
            _compare(a[k], b[k], atol, rtol, f"{path}[{k!r}]")
    elif isinstance(a, float):
        np.testing.assert_allclose(b, a, atol=atol, rtol=rtol, err_msg=path)
    else:
        assert a == b, f"{path}: torch {a!r} vs glassgrad {b!r}"


def same(fn, atol: float = 1e-6, rtol: float = 1e-5):
    """Run ``fn(torch)`` and ``fn(glassgrad)``; assert equal results; return glassgrad's."""
    theirs = fn(torch)
    ours = fn(glassgrad)
    _compare(theirs, ours, atol, rtol)
    return ours


def same_error(fn, exc: type, phrase: str):
    """Both libraries raise ``exc`` whose message contains ``phrase``; returns glassgrad's text."""
    messages = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(exc) as info:
                fn(lib)
        assert phrase in str(info.value), f"{lib.__name__}: {phrase!r} not in {info.value}"
        messages.append(str(info.value))
    return messages[1]


def same_warning(fn, category: type, phrase: str):
    """Both libraries warn with ``category`` and ``phrase``; returns both results."""
    results = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(fn(lib))
        hits = [w for w in caught if issubclass(w.category, category) and phrase in str(w.message)]
        assert hits, (
            f"{lib.__name__}: no {category.__name__} with {phrase!r}: "
            f"{[str(w.message) for w in caught]}"
        )
    _compare(results[0], results[1], 1e-6, 1e-5)
    return results[1]
