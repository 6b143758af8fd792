"""Bad input to shape, indexing, reduction and product ops: glassgrad raises PyTorch's exception
type, its message contains PyTorch's key phrase (the first line of torch's message, or the given
part of it), and where marked it goes on with a "glassgrad:" explanation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad


def _r(m, *shape, dtype=None):
    t = m.from_numpy(np.arange(float(np.prod(shape))).reshape(shape))
    return t.to(dtype) if dtype is not None else t.float()


def _long(m, values):
    return m.tensor(values, dtype=m.int64)


# (id, fn(lib), key phrase or None for torch's whole first line, expect a glassgrad explanation)
CASES = [
    ("cat sizes", lambda m: m.cat([_r(m, 2, 3), _r(m, 2, 4)]), None, True),
    ("cat ndim", lambda m: m.cat([_r(m, 2, 3), _r(m, 2)]), None, True),
    ("cat 0-d", lambda m: m.cat([_r(m), _r(m)]), None, True),
    ("cat empty list", lambda m: m.cat([]), None, False),
    ("cat dim range", lambda m: m.cat([_r(m, 2, 3)], 2), None, False),
    ("stack sizes", lambda m: m.stack([_r(m, 2, 3), _r(m, 3, 2)]), None, True),
    ("matmul 2-D", lambda m: m.matmul(_r(m, 2, 3), _r(m, 4, 5)), None, True),
    ("matmul 1-D @ 2-D", lambda m: _r(m, 3) @ _r(m, 4, 5), None, True),
    ("matmul 2-D @ 1-D", lambda m: _r(m, 3, 4) @ _r(m, 5), None, True),
    ("matmul 1-D @ 1-D", lambda m: _r(m, 3) @ _r(m, 4), None, True),
    ("matmul batched", lambda m: _r(m, 2, 2, 3) @ _r(m, 2, 4, 5), None, True),
    ("matmul batch broadcast", lambda m: _r(m, 2, 2, 3) @ _r(m, 3, 3, 5), None, True),
    ("matmul 0-d", lambda m: m.matmul(_r(m), _r(m, 3)), None, True),
    ("matmul dtypes", lambda m: _r(m, 2, 3) @ _r(m, 3, 2, dtype=m.float64), None, True),
    ("mm not a matrix", lambda m: m.mm(_r(m, 2, 3, 1), _r(m, 4, 5)), None, True),
    ("mm sizes", lambda m: m.mm(_r(m, 2, 3), _r(m, 4, 5)), None, True),
    ("bmm 2-D", lambda m: m.bmm(_r(m, 3, 4), _r(m, 2, 4, 5)), None, True),
    ("bmm sizes", lambda m: m.bmm(_r(m, 2, 3, 4), _r(m, 3, 4, 5)), None, True),
    ("dot sizes", lambda m: m.dot(_r(m, 3), _r(m, 4)), None, True),
    ("dot dtypes", lambda m: m.dot(_r(m, 3), _r(m, 3, dtype=m.float64)), None, True),
    ("einsum sizes", lambda m: m.einsum("ij,jk->ik", _r(m, 2, 3), _r(m, 4, 5)), None, True),
    ("einsum operands", lambda m: m.einsum("ij,jk->ik", _r(m, 2, 3)), None, False),
    ("einsum dims", lambda m: m.einsum("ij,jk", _r(m, 2, 3, 1), _r(m, 3, 4)), None, False),
    ("reshape", lambda m: _r(m, 2, 3).reshape(4, 2), None, True),
    ("reshape infer", lambda m: _r(m, 2, 3).reshape(4, -1), None, True),
    ("reshape two -1", lambda m: _r(m, 2, 3).reshape(-1, -1), None, False),
    ("view non-contiguous", lambda m: _r(m, 3, 4).t().view(12), None, True),
    ("expand size", lambda m: _r(m, 2, 3).expand(4, 3), None, True),
    ("expand too few sizes", lambda m: _r(m, 3, 1).expand(2), None, False),
    ("expand -1 leading", lambda m: _r(m, 3, 1).expand(-1, 3, 4), None, False),
    ("permute length", lambda m: _r(m, 2, 3).permute(0), None, False),
    ("permute repeated", lambda m: _r(m, 2, 3).permute(0, 0), None, False),
    ("flatten order", lambda m: m.flatten(_r(m, 2, 3, 4), 2, 1), None, False),
    ("movedim lengths", lambda m: m.movedim(_r(m, 2, 3, 4), (0, 1), (2,)), None, False),
    ("narrow range", lambda m: m.narrow(_r(m, 5), 0, 4, 2), None, False),
    ("split sizes", lambda m: m.split(_r(m, 5), [2, 2]), None, False),
    ("repeat dims", lambda m: _r(m, 2, 3).repeat(2), None, True),
    ("roll lengths", lambda m: m.roll(_r(m, 3, 4), 1, (0, 1)), None, False),
    ("tril 1-D", lambda m: m.tril(_r(m, 3)), None, True),
    ("diagonal dims", lambda m: m.diagonal(_r(m, 3, 3), 0, 1, 1), None, False),
    (
        "sum dim range",
        lambda m: _r(m, 2, 3).sum(2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        False,
    ),
    ("unsqueeze dim range", lambda m: _r(m, 2).unsqueeze(3), "Dimension out of range", False),
    ("mean of int", lambda m: _long(m, [1, 2]).mean(), None, True),
    ("var of int", lambda m: m.var(_long(m, [1, 2])), None, True),
    ("norm of int", lambda m: m.norm(_long(m, [1, 2])), None, True),
    ("max of empty", lambda m: m.max(_r(m, 0, 3)), None, True),
    ("amax empty dim", lambda m: m.amax(_r(m, 0, 3), 0), None, True),
    ("argmax of empty", lambda m: m.argmax(_r(m, 0, 3)), None, False),
    ("index float tensor", lambda m: _r(m, 3)[m.tensor([0.0, 1.0])], None, True),
    ("index out of range", lambda m: _r(m, 3)[5], None, True),
    ("index tensor out of range", lambda m: _r(m, 3)[_long(m, [5])], None, True),
    ("too many indices", lambda m: _r(m, 3)[0, 1], None, True),
    ("mask shape", lambda m: _r(m, 3)[m.tensor([True, False])], None, True),
    ("index broadcast", lambda m: _r(m, 3, 3)[_long(m, [0, 1]), _long(m, [0, 1, 2])], None, True),
    ("negative step", lambda m: _r(m, 3)[::-1], None, True),
    ("setitem broadcast", lambda m: _r(m, 3, 3).__setitem__(0, _r(m, 2)), None, True),
    (
        "setitem leaf",
        lambda m: _r(m, 3).requires_grad_().__setitem__(0, 1.0),
        "leaf Variable that requires grad is being used in an in-place operation.",
        True,
    ),
    ("gather index dtype", lambda m: m.gather(_r(m, 3, 3), 0, m.zeros(3, 3)), None, True),
    ("gather index dims", lambda m: m.gather(_r(m, 3, 3), 0, _long(m, [0])), None, True),
    (
        "gather out of range",
        lambda m: m.gather(_r(m, 3, 3), 0, _long(m, [[-1, 0, 0]])),
        None,
        False,
    ),
    ("index_select dtype", lambda m: m.index_select(_r(m, 3, 3), 0, m.tensor([0.0])), None, True),
    ("index_select 2-D", lambda m: m.index_select(_r(m, 3, 3), 0, _long(m, [[0]])), None, False),
    (
        "index_add dtypes",
        lambda m: m.index_add(_r(m, 3, 3), 0, _long(m, [0]), _r(m, 1, 3, dtype=m.float64)),
        None,
        False,
    ),
    (
        "index_add count",
        lambda m: m.index_add(_r(m, 3, 3), 0, _long(m, [0]), _r(m, 2, 3)),
        None,
        False,
    ),
    (
        "masked_fill mask dtype",
        lambda m: _r(m, 3).masked_fill(_long(m, [1, 0, 1]), 0.0),
        None,
        True,
    ),
    (
        "masked_select mask dtype",
        lambda m: m.masked_select(_r(m, 3), m.tensor([1, 0, 1], dtype=m.uint8)),
        None,
        True,
    ),
    ("select out of range", lambda m: _r(m, 3, 4).select(0, 5), None, False),
    ("take out of range", lambda m: m.take(_r(m, 3), _long(m, [5])), None, False),
    ("cross size", lambda m: m.cross(_r(m, 3, 2), _r(m, 3, 2), dim=-1), None, False),
    ("topk k", lambda m: m.topk(_r(m, 3), 4), None, True),
]


def _raise(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return info.value


@pytest.mark.parametrize("fn,key,explained", [pytest.param(f, k, e, id=i) for i, f, k, e in CASES])
def test_error_matches_torch(fn, key, explained):
    theirs = _raise(fn, torch)
    ours = _raise(fn, glassgrad)
    assert type(ours) is type(theirs), f"glassgrad raised {ours!r}, torch {theirs!r}"
    phrase = key or str(theirs).splitlines()[0]
    assert phrase in str(theirs), "the key phrase must be torch's own"
    assert phrase in str(ours), f"torch's phrase {phrase!r} missing from {str(ours)!r}"
    if explained:
        assert "glassgrad" in str(ours), f"no glassgrad explanation in {str(ours)!r}"
