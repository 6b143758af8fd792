"""Order statistics (issue 15, lane ops): torch's errors and edge cases the op table's samples
cannot express (empty inputs, dtype checks)."""

import math

import pytest
import torch

import glassgrad
from tests.ops_errors import same_error


@pytest.mark.parametrize("fn,phrase", [
    (lambda lib: lib.median(lib.ones(0, 3), 0), "Expected reduction dim 0 to have non-zero size"),
    (lambda lib: lib.mode(lib.ones(0, 3), 0), "Expected reduction dim 0 to have non-zero size"),
    (lambda lib: lib.nanmedian(lib.ones(2, 0), 1), "Expected reduction dim 1"),
    (lambda lib: lib.quantile(lib.ones(3), 1.5), "q must be in the range [0, 1] but got 1.5"),
    (lambda lib: lib.quantile(lib.ones(3), lib.tensor([[0.5]])), "q must be a scalar or 1D"),
    (lambda lib: lib.quantile(lib.ones(3, dtype=lib.int64), 0.5), "must be either float or"),
    (lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="foo"), "interpolation must be"),
    (lambda lib: lib.nanquantile(lib.ones(0), 0.5), "input tensor must be non-empty"),
    (lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5], dtype=lib.float64)),
     "q tensor must be same dtype as the input tensor"),
    (lambda lib: lib.nanmean(lib.tensor([1, 2])), "expected input to have floating point"),
    (lambda lib: lib.median(lib.ones(2, 3), 2), "Dimension out of range"),
])
def test_errors(fn, phrase):
    same_error(fn, phrase)


def test_median_of_empty_is_nan():
    for lib in (glassgrad, torch):
        assert math.isnan(lib.median(lib.tensor([])).item())
        assert math.isnan(lib.nanmedian(lib.tensor([float("nan")] * 3)).item())


def test_result_field_names_and_dtypes():
    for name in ("median", "nanmedian", "mode", "cummax", "cummin"):
        ours = getattr(glassgrad, name)(glassgrad.tensor([[3.0, 1.0, 2.0]]), 1)
        theirs = getattr(torch, name)(torch.tensor([[3.0, 1.0, 2.0]]), 1)
        assert ours.values.tolist() == theirs.values.tolist()
        assert ours.indices.tolist() == theirs.indices.tolist()
        assert str(ours.indices.dtype).split(".")[-1] == "int64"


def test_median_int_keeps_dtype():
    for lib in (glassgrad, torch):
        out = lib.median(lib.tensor([3, 1, 2, 7]))
        assert out.item() == 2 and out.dtype == lib.int64


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_overall_median_shares_gradient_among_ties_and_nans(name):
    for values in ([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [float("nan")] * 3):
        grads = []
        for lib in (glassgrad, torch):
            x = lib.tensor(values, requires_grad=True)
            getattr(lib, name)(x).backward()
            grads.append(x.grad.tolist())
        assert grads[0] == pytest.approx(grads[1])
