"""An index or mask tensor written in place between forward and backward (NOTE [Index
snapshots] in glassgrad/ops/_util.py): torch raises "modified by an inplace operation";
glassgrad keeps the forward's index, so its gradient is torch's gradient of the forward as it
ran (checked against torch on the same program without the write), never one sent to the new
positions."""

from __future__ import annotations

import pytest
import torch

import glassgrad
from tests.adversarial_util import _same

F_T, F_G = torch.nn.functional, glassgrad.nn.functional


def _program(name):
    """(forward(lib, x, idx) -> output, x values, idx values, the in-place write on idx)."""
    long3, mask3 = [0, 0], [True, False, False]
    return {
        "gather": (lambda L, x, i: x.gather(0, i), [1.0, 2.0, 3.0], long3, (1, 2)),
        "getitem": (lambda L, x, i: x[i], [1.0, 2.0, 3.0], long3, (1, 2)),
        "mask": (lambda L, x, m: x[m], [1.0, 2.0, 3.0], mask3, (1, True)),
        "where": (lambda L, x, m: L.where(m, x, 0.0), [1.0, 2.0, 3.0], mask3, (1, True)),
        "masked_fill": (lambda L, x, m: x.masked_fill(m, 0.0), [1.0, 2.0, 3.0], mask3, (1, True)),
        "index_select": (lambda L, x, i: x.index_select(0, i), [1.0, 2.0, 3.0], long3, (1, 2)),
        "take": (lambda L, x, i: x.take(i), [1.0, 2.0, 3.0], [0, 1], (1, 2)),
        "embedding": (lambda L, x, i: L.nn.functional.embedding(i, x.reshape(3, 1)),
                      [1.0, 2.0, 3.0], long3, (1, 2)),
        "cross_entropy": (lambda L, x, t: L.nn.functional.cross_entropy(x.reshape(1, 3), t),
                          [0.5, 1.0, 2.0], [0], (0, 2)),
    }[name]


def _grad(lib, name, write):
    fn, xv, iv, (pos, value) = _program(name)
    x = lib.tensor(xv, requires_grad=True)
    idx = lib.tensor(iv)
    out = fn(lib, x, idx)
    if write:
        idx[pos] = value
    weights = lib.arange(1.0, 1.0 + out.numel()).reshape(out.shape)
    (out * weights).sum().backward()
    return x.grad


@pytest.mark.parametrize("name", ["gather", "getitem", "mask", "where", "masked_fill",
                                  "index_select", "take", "embedding", "cross_entropy"])
def test_index_written_after_forward_keeps_the_forwards_gradient(name):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _grad(torch, name, write=True)
    _same(_grad(glassgrad, name, write=True), _grad(torch, name, write=False), name)


def test_no_grad_keeps_no_copy():
    idx = glassgrad.tensor([0, 1])
    with glassgrad.no_grad():
        from glassgrad.ops._util import index_snapshot

        assert index_snapshot(idx._array) is idx._array
    assert index_snapshot(idx._array) is not idx._array
