"""An operand is saved only for the gradients that will be computed (issue 18.3; NOTE [Saved when
needed] in glassgrad/ops/primitive.py): ``y = x @ w_frozen; x.add_(1); y.sum().backward()`` works
as in torch, and what torch refuses is still refused."""

import numpy as np
import pytest
import torch

import glassgrad
from tests.adversarial_util import _same


def _arr(shape):
    return np.random.default_rng(sum(shape)).random(shape) + 0.5


OPS = {
    "mul": (lambda lib, a, b: a * b, (3, 4), (3, 4)),
    "mul_broadcast": (lambda lib, a, b: a * b, (3, 4), (4,)),
    "div": (lambda lib, a, b: a / b, (3, 4), (3, 4)),
    "matmul": (lambda lib, a, b: a @ b, (3, 4), (4, 2)),
    "matmul_vector": (lambda lib, a, b: a @ b, (3, 4), (4,)),
    "matmul_3d": (lambda lib, a, b: a @ b, (2, 3, 4), (4, 2)),
    "mm": (lambda lib, a, b: lib.mm(a, b), (3, 4), (4, 2)),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), (2, 3, 4), (2, 4, 2)),
    "mv": (lambda lib, a, b: lib.mv(a, b), (3, 4), (4,)),
    "dot": (lambda lib, a, b: lib.dot(a, b), (4,), (4,)),
    "outer": (lambda lib, a, b: lib.outer(a, b), (3,), (4,)),
    "linear": (lambda lib, a, b: lib.nn.functional.linear(a, b), (3, 4), (2, 4)),
    "linear_3d": (lambda lib, a, b: lib.nn.functional.linear(a, b), (2, 3, 4), (2, 4)),
    "einsum": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), (3, 4), (4, 2)),
    "einsum_batched": (lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), (2, 3, 4), (2, 4, 2)),
    "tensordot": (lambda lib, a, b: lib.tensordot(a, b, dims=1), (3, 4), (4, 2)),
    "addcmul": (lambda lib, a, b: lib.addcmul(lib.ones(3, 4), a, b, value=0.5), (3, 4), (3, 4)),
    "addcdiv": (lambda lib, a, b: lib.addcdiv(lib.ones(3, 4), a, b), (3, 4), (3, 4)),
    "addmm": (lambda lib, a, b: lib.addmm(lib.ones(3, 2), a, b), (3, 4), (4, 2)),
    "baddbmm": (lambda lib, a, b: lib.baddbmm(lib.ones(2, 3, 2), a, b), (2, 3, 4), (2, 4, 2)),
    "lerp_weight": (lambda lib, a, b: lib.lerp(a, lib.ones(3, 4), b), (3, 4), (3, 4)),
    "remainder": (lambda lib, a, b: lib.remainder(a, b), (3, 4), (3, 4)),
    "fmod": (lambda lib, a, b: lib.fmod(a, b), (3, 4), (3, 4)),
    "conv2d": (lambda lib, a, b: lib.nn.functional.conv2d(a, b), (1, 2, 5, 5), (3, 2, 3, 3)),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), (3, 4), (3, 4)),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), (3, 4), (3, 4)),
}


def _run(lib, op, grad_of, modify):
    """``op`` with only operand ``grad_of`` requiring grad, operand ``modify`` written in place
    after the forward; the gradient, or the in-place error's key phrase."""
    f, sa, sb = OPS[op]
    a = lib.tensor(_arr(sa), dtype=lib.float32, requires_grad=grad_of == "a")
    b = lib.tensor(_arr(sb), dtype=lib.float32, requires_grad=grad_of == "b")
    a_used = a * 1 if grad_of == "a" else a.clone()
    b_used = b * 1 if grad_of == "b" else b.clone()
    y = f(lib, a_used, b_used)
    with lib.no_grad():
        (a_used if modify == "a" else b_used).add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e)
        return "refused"
    return (a if grad_of == "a" else b).grad


@pytest.mark.parametrize("modify", ["a", "b"])
@pytest.mark.parametrize("grad_of", ["a", "b"])
@pytest.mark.parametrize("op", list(OPS))
def test_inplace_on_an_operand_after_the_op_matches_torch(op, grad_of, modify):
    ours, theirs = _run(glassgrad, op, grad_of, modify), _run(torch, op, grad_of, modify)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        _same(ours, theirs, op, rtol=1e-5, atol=1e-6)


def _saved_shapes(y):
    rows = glassgrad.autograd.graph.to_dict(y)["nodes"]
    return [s["shape"] for s in next(r for r in rows if r["name"] == "MmBackward0")["saved"]]


def test_the_issue_repro_and_the_ledger():
    """``x @ w_frozen`` saves w alone: the ledger counts one buffer, the in-place write to x is
    fine, and the weight gradient of a trainable w still needs (and saves) x."""
    def run(lib):
        x0 = lib.tensor(_arr((3, 4)), requires_grad=True)
        x = x0 * 1
        w = lib.tensor(_arr((4, 2)))
        y = x @ w
        x.add_(1)
        y.sum().backward()
        return x0.grad

    _same(run(glassgrad), run(torch))
    x = glassgrad.ones(8, 4, requires_grad=True) * 1
    frozen = x @ glassgrad.ones(4, 2)
    trained = x @ glassgrad.ones(4, 2, requires_grad=True)
    assert _saved_shapes(frozen) == [[4, 2]]
    assert _saved_shapes(trained) == [[8, 4], [4, 2]]
    assert frozen.grad_fn._saved_self is None and trained.grad_fn._saved_self is not None
