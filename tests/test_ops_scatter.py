"""Scatter and put (issue 15, lane ops): torch's errors, warnings and refusals."""

import warnings

import pytest
import torch

import glassgrad
from tests.ops_errors import same_error


@pytest.mark.parametrize("fn,phrase", [
    (lambda lib: lib.diagonal_scatter(lib.zeros(3, 4), lib.ones(2)),
     "expected src to have a size equal to the slice of self. src size = [2], slice size = [3]"),
    (lambda lib: lib.slice_scatter(lib.zeros(3, 4), lib.ones(3, 3), 1, 0, 2),
     "expected src to have a size equal to the slice of self"),
    (lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([0]), lib.ones(1), "foo"),
     "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
    (lambda lib: lib.index_reduce(lib.zeros(3, 4), 0, lib.tensor([0]), lib.ones(1, 4), "sum"),
     "Expected reduce to be one of prod, mean, amax or amin but got sum."),
    (lambda lib: lib.index_reduce(lib.zeros(3, 4), 0, lib.tensor([0, 1]), lib.ones(1, 4),
                                  "prod"), "Number of indices (2) should be equal to"),
    (lambda lib: lib.put(lib.zeros(3, 4), lib.tensor([12]), lib.ones(1)),
     "out of range: tried to access index 12 on a tensor of 12 elements."),
    (lambda lib: lib.put(lib.zeros(3, 4), lib.tensor([1, 2]), lib.ones(3)),
     "Expected source and index to have the same number of elements"),
    (lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([3]), lib.ones(1), "sum"),
     "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda lib: lib.zeros(2, requires_grad=True).scatter_reduce_(
        0, lib.tensor([0]), lib.ones(1), "sum"), "a leaf Variable that requires grad"),
])
def test_errors(fn, phrase):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(fn, phrase)


def test_index_reduce_beta_warning_once():
    from glassgrad import _ops_scatter

    _ops_scatter._BETA_WARNED.clear()
    for lib in (glassgrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.index_reduce(lib.ones(3), 0, lib.tensor([0, 0]), lib.ones(2), "amax")
        assert lib is torch or any("index_reduce() is in beta" in str(x.message) for x in w)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        glassgrad.index_reduce(glassgrad.ones(3), 0, glassgrad.tensor([0]), glassgrad.ones(1),
                               "amin")
    assert not w


def test_prod_double_backward_refused_with_repeated_zeros():
    def run(lib):
        src = lib.tensor([0.0, 0.0, 2.0], requires_grad=True)
        out = lib.scatter_reduce(lib.ones(2), 0, lib.tensor([0, 0, 1]), src, "prod")
        (g,) = lib.autograd.grad(out.sum(), src, create_graph=True)
        assert g.tolist() == [0.0, 0.0, 1.0]
        g.sum().backward()

    same_error(run, "Double backward is unsupported for src when >1 zeros")


def test_int_mean_rounds_down():
    for lib in (glassgrad, torch):
        out = lib.scatter_reduce(lib.tensor([1, 2, 3]), 0, lib.tensor([0, 0, 1]),
                                 lib.tensor([4, 5, 6]), "mean", include_self=False)
        assert out.tolist() == [4, 6, 3]
