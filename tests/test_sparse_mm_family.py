"""torch's sparse-result products (sspaddmm, saddmm, smm, hspmm, hsmm, dsmm) and the sparse
accessors of dense tensors, on torch and glassgrad: entries in torch's order, values, flags and
errors (issue 15, lane surface)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def _operands(lib, dtype=None):
    i = lib.tensor([[0, 1, 1, 3], [2, 0, 2, 1]])
    s = lib.sparse_coo_tensor(i, lib.tensor([3.0, 4.0, 5.0, -1.0]), (4, 3))
    d = lib.arange(6.0).reshape(3, 2) - 2
    inp = lib.sparse_coo_tensor(lib.tensor([[0, 2], [1, 0]]), lib.tensor([10.0, 1.0]), (4, 2))
    return s, d, inp


def _sparse(r):
    return (r._indices().tolist(), np.round(r._values().numpy(), 12).tolist(), r.is_coalesced(),
            r.sparse_dim(), r.dense_dim(), tuple(r.shape), str(r.layout).split(".")[-1],
            r.coalesce().to_dense().tolist())


CASES = {
    "sspaddmm": lambda lib: _sparse(lib.sspaddmm(*_swap(_operands(lib)), beta=2, alpha=3)),
    "sspaddmm method": lambda lib: _sparse(_operands(lib)[2].sspaddmm(*_operands(lib)[:2])),
    "saddmm": lambda lib: _sparse(lib.saddmm(*_swap(_operands(lib)))),
    "smm": lambda lib: _sparse(lib.smm(*_operands(lib)[:2])),
    "smm method": lambda lib: _sparse(_operands(lib)[0].smm(_operands(lib)[1])),
    "hspmm": lambda lib: _sparse(lib.hspmm(*_operands(lib)[:2])),
    "hsmm": lambda lib: _sparse(lib.hsmm(*_operands(lib)[:2])),
    "dsmm": lambda lib: lib.dsmm(*_operands(lib)[:2]).tolist(),
    "hspmm empty rows": lambda lib: _sparse(lib.hspmm(
        lib.sparse_coo_tensor(lib.tensor([[1, 1], [2, 0]]), lib.tensor([1.0, 2.0]), (3, 3)),
        lib.ones(3, 2))),
    "one entry": lambda lib: [_sparse(f(lib.sparse_coo_tensor(lib.tensor([[1], [2]]),
                                                              lib.tensor([1.0]), (3, 3)),
                                        lib.ones(3, k))) for f in (lib.smm, lib.hspmm)
                              for k in (1, 2)],
    "no entries": lambda lib: [_sparse(f(lib.sparse_coo_tensor(
        lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (3, 3)), lib.ones(3, 2)))
        for f in (lib.smm, lib.hspmm)],
    "dense accessors": lambda lib: lib.ones(2, 3).dense_dim(),
    "dense indices": lambda lib: lib.ones(2).indices(),
    "dense values": lambda lib: lib.ones(2).values(),
    "dense coalesce": lambda lib: lib.ones(2).coalesce(),
    "dense is_coalesced": lambda lib: lib.ones(2).is_coalesced(),
    "smm dense": lambda lib: lib.smm(lib.ones(2, 3), lib.ones(3, 2)),
    "hspmm sizes": lambda lib: lib.hspmm(_operands(lib)[0], lib.ones(2, 2)),
    "smm sizes": lambda lib: lib.smm(_operands(lib)[0], lib.ones(2, 2)),
    "hspmm dtypes": lambda lib: lib.hspmm(_operands(lib)[0], lib.ones(3, 2, dtype=lib.float64)),
    "hspmm dense": lambda lib: lib.hspmm(lib.ones(2, 3), lib.ones(3, 2)),
    "sspaddmm input size": lambda lib: lib.sspaddmm(_operands(lib)[0], _operands(lib)[0],
                                                    _operands(lib)[1]),
}


def _swap(ops):
    s, d, inp = ops
    return inp, s, d


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    out = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(("ok", CASES[name](lib)))
            except Exception as exc:  # noqa: BLE001 - the error itself is compared
                out.append((type(exc).__name__, str(exc).split("\n")[0]))
    theirs, ours = out
    assert ours[0] == theirs[0], out
    if ours[0] == "ok":
        assert ours[1] == theirs[1]
    else:
        assert theirs[1].startswith(ours[1]) or ours[1].startswith(theirs[1]), out


def test_dsmm_is_differentiable_as_mm():
    grads = []
    for lib in LIBS:
        s, d, _ = _operands(lib)
        d.requires_grad_()
        lib.dsmm(s, d).sum().backward()
        grads.append(d.grad.tolist())
    assert grads[0] == grads[1]
