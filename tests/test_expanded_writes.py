"""Writes into expanded tensors follow PyTorch's internal-overlap rule (issue 18.3; NOTE [Expanded
writes] in glassgrad/ops/_overlap.py): refused only when the written region repeats an element."""

import warnings

import pytest
import torch

import glassgrad
from tests.adversarial_util import _same


def _row(lib):  # one shared row seen twice
    return lib.ones(1, 3).clone().expand(2, 3)


def _col(lib):  # one shared column seen four times
    return lib.ones(3, 1).clone().expand(3, 4)


CASES = {
    "row0": lambda lib, g: g.__setitem__(0, 0.0),
    "row0_tensor": lambda lib, g: g.__setitem__(0, lib.arange(g.shape[1]) * 1.0),
    "col0": lambda lib, g: g.__setitem__((slice(None), 0), 0.0),
    "element": lambda lib, g: g.__setitem__((0, 1), 5.0),
    "all": lambda lib, g: g.__setitem__(slice(None), 0.0),
    "ellipsis": lambda lib, g: g.__setitem__(Ellipsis, 0.0),
    "rows0_1": lambda lib, g: g.__setitem__(slice(0, 1), 4.0),
    "advanced_list": lambda lib, g: g.__setitem__([0, 1], 2.0),
    "bool_mask": lambda lib, g: g.__setitem__(lib.arange(g.shape[0]) == 0, 3.0),
    "bool_mask_2d": lambda lib, g: g.__setitem__(g > 0, 3.0),
    "advanced_tensor_value": lambda lib, g: g.__setitem__([0], lib.zeros(g.shape[1])),
    "fill_": lambda lib, g: g.fill_(2.0),
    "zero_": lambda lib, g: g.zero_(),
    "fill_tensor": lambda lib, g: g.fill_(lib.tensor(3.0)),
    "add_": lambda lib, g: g.add_(1.0),
    "mul_": lambda lib, g: g.mul_(2.0),
    "copy_all": lambda lib, g: g.copy_(lib.zeros(1)),
    "relu_": lambda lib, g: g.relu_(),
    "row_add_": lambda lib, g: g[0].add_(1.0),
    "row_mul_": lambda lib, g: g[1].mul_(3.0),
    "row_copy_": lambda lib, g: g[0].copy_(lib.arange(g.shape[1]) + 7.0),
    "row_masked_fill_": lambda lib, g: g[0].masked_fill_(lib.arange(g.shape[1]) != 1, 0.0),
    "masked_fill_": lambda lib, g: g.masked_fill_(lib.arange(g.shape[1]) != 1, 0.0),
    "masked_fill_tensor": lambda lib, g: g.masked_fill_(lib.tensor(True), lib.tensor(2.0)),
    "index_fill_": lambda lib, g: g.index_fill_(1, lib.tensor([0]), 0.0),
    "index_put_": lambda lib, g: g.index_put_((lib.tensor([0]),), lib.tensor(5.0)),
}


def _run(lib, make, case):
    g = make(lib)
    base = g._base
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            CASES[case](lib, g)
        except RuntimeError as e:
            return "raised", str(e).split("\n")[0], None, []
    deprecated = [str(w.message).split(" (Triggered")[0] for w in caught
                  if "deprecated" in str(w.message)]
    return "wrote", "", base.clone(), deprecated


@pytest.mark.parametrize("make", [_row, _col], ids=["row", "col"])
@pytest.mark.parametrize("case", list(CASES))
def test_write_into_expanded_matches_torch(make, case):
    ours, theirs = _run(glassgrad, make, case), _run(torch, make, case)
    assert ours[0] == theirs[0], (ours, theirs)
    assert ours[1] == theirs[1]
    if theirs[2] is not None:
        _same(ours[2], theirs[2], case)
    assert ours[3] == theirs[3]


def test_write_into_one_element_of_an_expanded_scalar():
    def run(lib):
        g = lib.ones(1).clone().expand(4)
        g[1] = 0.0
        g[2:3] = 5.0
        with pytest.raises(RuntimeError, match="refers to a single memory location"):
            g[1:3] = 0.0
        return g.clone()

    _same(run(glassgrad), run(torch))
