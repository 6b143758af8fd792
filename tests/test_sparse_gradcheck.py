"""``gradcheck`` with sparse inputs, on torch and on glassgrad: the same verdict (pass, or a
Jacobian mismatch) for masked and unmasked checks of products, conversions and softmax, COO and
CSR, mixed with dense inputs; torch's ValueError for a sparse output."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad

warnings.filterwarnings("ignore", message="Sparse (invariant checks|CSR tensor support)")


def _inputs(lib, layout="coo", uncoalesced=False):
    idx = [[0, 1, 1, 2] + ([1] if uncoalesced else []), [2, 0, 2, 1] + ([0] if uncoalesced else [])]
    v = lib.tensor(np.linspace(0.5, 2.0, len(idx[0])), dtype=lib.float64)
    a = lib.sparse_coo_tensor(lib.tensor(idx), v, (3, 3))
    if layout == "csr":
        a = a.to_sparse_csr()
    d = lib.tensor(np.arange(6.0).reshape(3, 2) / 5, dtype=lib.float64, requires_grad=True)
    return a.requires_grad_(), d


CASES = {
    "sparse.mm": lambda lib: (lambda a, d: lib.sparse.mm(a, d)),
    "torch.mm": lambda lib: (lambda a, d: lib.mm(a, d)),
    "a @ d": lambda lib: (lambda a, d: a @ d),
    "to_dense": lambda lib: (lambda a, d: a.to_dense() * 2),
    "softmax": lambda lib: (lambda a, d: lib.sparse.softmax(a, 1).to_dense()),
    "mv": lambda lib: (lambda a, d: lib.mv(a, d[:, 0])),
}


def _verdict(lib, case, masked, layout="coo", uncoalesced=False):
    a, d = _inputs(lib, layout, uncoalesced)
    return lib.autograd.gradcheck(CASES[case](lib), (a, d), masked=masked,
                                  raise_exception=False)


@pytest.mark.parametrize("masked", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_verdicts_match_torch(case, masked):
    theirs = _verdict(torch, case, masked)
    assert _verdict(glassgrad, case, masked) == theirs


@pytest.mark.parametrize("case,masked", [("sparse.mm", True), ("a @ d", False),
                                         ("to_dense", True), ("sparse.mm", False)])
def test_csr_and_uncoalesced_verdicts_match_torch(case, masked):
    assert _verdict(glassgrad, case, masked, "csr") == _verdict(torch, case, masked, "csr")
    assert _verdict(glassgrad, case, masked, uncoalesced=True) == _verdict(
        torch, case, masked, uncoalesced=True)


def test_some_verdicts_are_failures():
    # unmasked: the full dense numerical Jacobian against sparse.mm's pattern-only gradient;
    # masked: the numerical Jacobian on the pattern against torch.mm's full dense gradient
    for lib in (glassgrad, torch):
        assert _verdict(lib, "sparse.mm", False) is False
        assert _verdict(lib, "torch.mm", True) is False
        assert _verdict(lib, "sparse.mm", True) is True
        assert _verdict(lib, "torch.mm", False) is True


def test_sparse_output_refuses_as_torch():
    for lib in (glassgrad, torch):
        a, _ = _inputs(lib)
        with pytest.raises(ValueError, match="Sparse output is not supported at gradcheck yet"):
            lib.autograd.gradcheck(lambda x: x * 2, (a,), masked=True)


def test_gradgradcheck_with_sparse_inputs_refuses_by_name():
    a, d = _inputs(glassgrad)
    with pytest.raises(NotImplementedError, match="gradgradcheck with sparse inputs"):
        glassgrad.autograd.gradgradcheck(lambda a, d: glassgrad.sparse.mm(a, d), (a, d))


@pytest.mark.parametrize("masked", [True, False])
def test_hybrid_input_verdicts_match_torch(masked):
    verdicts = []
    for lib in (glassgrad, torch):
        v = lib.tensor(np.linspace(-1, 1, 6).reshape(3, 2), dtype=lib.float64)
        a = lib.sparse_coo_tensor(lib.tensor([[0, 2, 1], [1, 0, 1]]), v, (3, 2, 2))
        verdicts.append([lib.autograd.gradcheck(fn, (a.requires_grad_(),), masked=masked,
                                                raise_exception=False) for fn in (
            lambda x: x.to_dense() * 3, lambda x: lib.sparse.softmax(x, 2).to_dense(),
            lambda x: lib.sparse.sum(x, 1).to_dense())])
    assert verdicts[0] == verdicts[1]
    assert all(verdicts[1]) or not masked  # (torch fails all three unmasked: so does glassgrad)
