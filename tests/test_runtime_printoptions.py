"""repr(tensor) under torch.set_printoptions, compared with torch's repr character for character
(glassgrad's dtype names read 'glassgrad.float64' where torch's read 'torch.float64')."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import glassgrad

_rng = np.random.default_rng(0)
ARRAYS = {
    "ints_as_floats": np.array([1.0, 2000.0, -3.0]),
    "integral_small": np.array([[1.0, 2.0], [3.0, -4.0]]),
    "fixed": np.array([0.5, -1.25, 3.125]),
    "tiny": np.array([1e-5, 0.5]),
    "huge": np.array([1e9, 1.0]),
    "nonfinite": np.array([np.inf, -np.inf, np.nan, 1.5]),
    "only_nonfinite": np.array([np.inf, np.nan]),
    "zeros": np.zeros(3),
    "scalar": np.array(2.5),
    "wide_row": _rng.standard_normal(40),
    "matrix": _rng.standard_normal((4, 5)),
    "big_matrix": _rng.standard_normal((40, 50)),
    "cube": _rng.standard_normal((3, 4, 5)),
    "big_cube": _rng.standard_normal((12, 12, 12)),
    "long_vector": np.arange(2000.0),
    "empty": np.zeros((0,)),
    "empty_2d": np.zeros((0, 3)),
    "int64": np.arange(-5, 25).reshape(5, 6),
    "int32": np.arange(1500, dtype=np.int32),
    "bool": np.array([True, False, True]),
    "uint8_empty": np.zeros((2, 0), dtype=np.uint8),
}
DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16", "bfloat16": "bfloat16"}


def _make(lib, arr, dtype=None, requires_grad=False):
    t = lib.tensor(arr)
    if dtype is not None:
        t = t.to(getattr(lib, dtype))
    return t.requires_grad_() if requires_grad else t


def _unwrapped(text: str) -> str:
    """The repr with suffixes joined by ", ": 'dtype=glassgrad.float64' is four characters longer
    than torch's name, so the two may break the line before a suffix at different places
    (test_suffixes_wrap_at_linewidth checks the rule where the names do not differ)."""
    return re.sub(r",\n *(dtype=|size=|grad_fn=|requires_grad=)", r", \1", text)


def _same_repr(make, wrap_exact: bool = False):
    ours = repr(make(glassgrad)).replace("glassgrad.", "torch.")
    theirs = repr(make(torch))
    if not wrap_exact:
        ours, theirs = _unwrapped(ours), _unwrapped(theirs)
    assert ours == theirs, f"\nglassgrad:\n{ours}\ntorch:\n{theirs}"


@pytest.fixture
def restore_printoptions():
    yield
    for lib in (torch, glassgrad):
        lib.set_printoptions(profile="default")


OPTIONS = [
    {}, {"precision": 2}, {"precision": 8}, {"sci_mode": True}, {"sci_mode": False},
    {"threshold": 10}, {"edgeitems": 1, "threshold": 5}, {"edgeitems": 0, "threshold": 5},
    {"linewidth": 40}, {"linewidth": 200}, {"profile": "short"}, {"profile": "full"},
    {"profile": "short", "precision": 6},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in
                                                                      o.items()) or "default")
@pytest.mark.parametrize("name", list(ARRAYS))
def test_repr_matches_torch(restore_printoptions, options, name):
    for lib in (torch, glassgrad):
        lib.set_printoptions(**options)
    arr = ARRAYS[name]
    dtype = "float32" if arr.dtype == np.float64 else None
    _same_repr(lambda lib: _make(lib, arr, dtype))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("name", ["fixed", "matrix", "nonfinite", "empty", "wide_row"])
def test_repr_dtypes_and_grad_suffixes(dtype, name):
    _same_repr(lambda lib: _make(lib, ARRAYS[name], dtype, requires_grad=True))
    _same_repr(lambda lib: _make(lib, ARRAYS[name], dtype, requires_grad=True) * 2)


@pytest.mark.parametrize("n", [7, 8, 9, 14])
def test_suffixes_wrap_at_linewidth(n):
    _same_repr(lambda lib: lib.tensor(ARRAYS["wide_row"][:n], dtype=lib.float32,
                                      requires_grad=True) * 2, wrap_exact=True)
    _same_repr(lambda lib: lib.tensor(ARRAYS["wide_row"][:n], requires_grad=True),
               wrap_exact=True)


def test_sci_mode_resets_on_each_call(restore_printoptions):
    for lib in (torch, glassgrad):
        lib.set_printoptions(sci_mode=True)
        lib.set_printoptions(precision=3)
    _same_repr(lambda lib: lib.tensor([0.5, 1.5]))
