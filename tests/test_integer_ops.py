"""Integer and bool arithmetic, in-place ops, indices and type promotion against torch: an
in-place result must be castable to the tensor (``torch.can_cast``), a Python int wraps in two's
complement, a 0-d tensor promotes like a scalar, integer pow with negative exponents, and which
index ops count -1 from the end. Every case runs on torch and glassgrad."""

from __future__ import annotations

import operator

import pytest

from tests.integer_oracle import assert_same_outcome


def _i(m):
    return m.tensor([1, 2, 3])


def _u(m):
    return m.tensor([1, 2, 250], dtype=m.uint8)


def _b(m):
    return m.tensor([True, False, True])


def _iop(op):
    def run(a, b):
        a = op(a, b)
        return a

    return run


INPLACE = [
    ("repro int += 1.5", lambda m: _iop(operator.iadd)(_i(m), 1.5)),
    ("repro clamp_ max 2.5", lambda m: _i(m).clamp_(max=2.5)),
    ("repro scatter_add_ float src", lambda m: _i(m).scatter_add_(
        0, m.tensor([0]), m.tensor([1.5]))),
    ("repro bool *= 2", lambda m: _iop(operator.imul)(_b(m), 2)),
    ("repro uint8 pow_ int8 -3", lambda m: m.tensor([3, 2, 1], dtype=m.uint8).pow_(
        m.tensor([-3], dtype=m.int8))),
    ("int += float tensor", lambda m: _iop(operator.iadd)(_i(m), m.tensor([1.5, 1, 1]))),
    ("int += float 0-d", lambda m: _iop(operator.iadd)(_i(m), m.tensor(1.5))),
    ("int -= 1.5", lambda m: _iop(operator.isub)(_i(m), 1.5)),
    ("int *= 1.5", lambda m: _iop(operator.imul)(_i(m), 1.5)),
    ("int /= 2", lambda m: _iop(operator.itruediv)(_i(m), 2)),
    ("int //= 1.5", lambda m: _iop(operator.ifloordiv)(_i(m), 1.5)),
    ("int %= 1.5", lambda m: _iop(operator.imod)(_i(m), 1.5)),
    ("int **= 0.5", lambda m: _iop(operator.ipow)(_i(m), 0.5)),
    ("int **= -1", lambda m: _iop(operator.ipow)(_i(m), -1)),
    ("int pow_ tensor -1", lambda m: _i(m).pow_(m.tensor([-1, 2, 0]))),
    ("int add_ alpha 1.5", lambda m: _i(m).add_(_i(m), alpha=1.5)),
    ("int div_ floor", lambda m: _i(m).div_(2, rounding_mode="floor")),
    ("clamp_ min 1.5", lambda m: _i(m).clamp_(min=1.5)),
    ("clamp_min_ 1.5", lambda m: _i(m).clamp_min_(1.5)),
    ("clamp_ tensor max", lambda m: _i(m).clamp_(max=m.tensor([2.5]))),
    ("clamp_ min 1", lambda m: _i(m).clamp_(min=1)),
    ("scatter_ float src", lambda m: _i(m).scatter_(0, m.tensor([0]), m.tensor([1.5]))),
    ("scatter_ float value", lambda m: _i(m).scatter_(0, m.tensor([0]), 1.5)),
    ("scatter float64 0-d", lambda m: m.zeros(3).scatter(0, m.tensor([0]), m.tensor(
        1.5, dtype=m.float64))),
    ("index_add_ float", lambda m: _i(m).index_add_(0, m.tensor([0]), m.tensor([1.5]))),
    ("index_copy_ float", lambda m: _i(m).index_copy_(0, m.tensor([0]), m.tensor([1.5]))),
    ("index_fill_ 1.5", lambda m: _i(m).index_fill_(0, m.tensor([0]), 1.5)),
    ("index_fill 0-d float", lambda m: _i(m).index_fill(0, m.tensor([0]), m.tensor(1.5))),
    ("masked_fill_ 1.5", lambda m: _i(m).masked_fill_(m.tensor([True, False, False]), 1.5)),
    ("masked_fill 0-d float", lambda m: _i(m).masked_fill(m.tensor([True, False, False]),
                                                           m.tensor(1.5))),
    ("masked_scatter_ float", lambda m: _i(m).masked_scatter_(
        m.tensor([True, False, False]), m.tensor([1.5]))),
    ("index_put_ float", lambda m: _i(m).index_put_((m.tensor([0]),), m.tensor([1.5]))),
    ("copy_ float", lambda m: _i(m).copy_(m.tensor([1.5, 2.5, 3.5]))),
    ("fill_ 1.5", lambda m: _i(m).fill_(1.5)),
    ("fill_ 0-d 1.5", lambda m: _i(m).fill_(m.tensor(1.5))),
    ("remainder_ 1.5", lambda m: _i(m).remainder_(1.5)),
    ("fmod_ 1.5", lambda m: _i(m).fmod_(1.5)),
    ("floor_divide_ 1.5", lambda m: _i(m).floor_divide_(1.5)),
    ("exp_", lambda m: _i(m).exp_()),
    ("sqrt_", lambda m: _i(m).sqrt_()),
    ("sigmoid_", lambda m: _i(m).sigmoid_()),
    ("reciprocal_", lambda m: _i(m).reciprocal_()),
    ("int neg_", lambda m: _i(m).neg_()),
    ("int abs_", lambda m: _i(m).abs_()),
    ("int floor_", lambda m: _i(m).floor_()),
    ("int sign_", lambda m: _i(m).sign_()),
    ("bool += 1", lambda m: _iop(operator.iadd)(_b(m), 1)),
    ("bool += True", lambda m: _iop(operator.iadd)(_b(m), True)),
    ("bool *= bool", lambda m: _iop(operator.imul)(_b(m), _b(m))),
    ("bool += int tensor", lambda m: _iop(operator.iadd)(_b(m), _i(m))),
    ("bool add_ int 0-d", lambda m: _b(m).add_(m.tensor(1))),
    ("int += True", lambda m: _iop(operator.iadd)(_i(m), True)),
    ("uint8 += int64 tensor", lambda m: _iop(operator.iadd)(_u(m), _i(m))),
    ("uint8 += int64 0-d", lambda m: _iop(operator.iadd)(_u(m), m.tensor(5))),
    ("uint8 += -1", lambda m: _iop(operator.iadd)(_u(m), -1)),
    ("uint8 += 300", lambda m: _iop(operator.iadd)(_u(m), 300)),
    ("float16 += float64", lambda m: _iop(operator.iadd)(m.ones(2, dtype=m.float16),
                                                         m.ones(2, dtype=m.float64))),
    ("float += int", lambda m: _iop(operator.iadd)(m.ones(3), _i(m))),
    ("bitwise_and_ 1.5", lambda m: _i(m).bitwise_and_(1.5)),
    ("bitwise_and_ 3", lambda m: _i(m).bitwise_and_(3)),
    ("&= 3", lambda m: _iop(operator.iand)(_i(m), 3)),
    ("|= bool", lambda m: _iop(operator.ior)(_i(m), _b(m))),
    ("bool |= int", lambda m: _iop(operator.ior)(_b(m), m.tensor([3]))),
    ("^= uint8", lambda m: _iop(operator.ixor)(_i(m), _u(m))),
    ("<<= 1", lambda m: _iop(operator.ilshift)(_i(m), 1)),
    (">>= 1", lambda m: _iop(operator.irshift)(_i(m), 1)),
    ("eq_ 1.5", lambda m: _i(m).eq_(1.5)),
    ("lt_ 1.5", lambda m: _i(m).lt_(1.5)),
    ("bool lt_ 2", lambda m: _b(m).lt_(2)),
    ("bool eq_ 1.5", lambda m: _b(m).eq_(1.5)),
    ("logical_and_", lambda m: _i(m).logical_and_(_i(m))),
    ("logical_not_", lambda m: _i(m).logical_not_()),
    ("bitwise_not_", lambda m: _i(m).bitwise_not_()),
]

POW = [
    ("uint8 pow int8 -3", lambda m: _u(m).pow(m.tensor([-3], dtype=m.int8))),
    ("int pow tensor negative", lambda m: m.tensor([1, -1, -1, 2, 0]).pow(
        m.tensor([-1, -2, -3, -1, 0]))),
    ("2 ** tensor negative", lambda m: 2 ** m.tensor([-1, 2])),
    ("1 ** tensor negative", lambda m: 1 ** m.tensor([-1, 2])),
    ("int pow 0-d -1", lambda m: _i(m).pow(m.tensor(-1))),
    ("int ** -1", lambda m: _i(m) ** -1),
    ("bool ** bool", lambda m: _b(m) ** _b(m)),
    ("bool ** True", lambda m: _b(m) ** True),
    ("bool ** False", lambda m: _b(m) ** False),
    ("True ** bool", lambda m: True ** _b(m)),
    ("bool ** 2", lambda m: _b(m) ** 2),
    ("2 ** bool", lambda m: 2 ** _b(m)),
    ("bool ** -1", lambda m: _b(m) ** -1),
    ("-1 ** bool", lambda m: -1 ** _b(m)),
    ("uint8 ** 300", lambda m: _u(m) ** 300),
    ("300 ** uint8", lambda m: 300 ** _u(m)),
    ("int8 ** -200", lambda m: m.tensor([2], dtype=m.int8) ** -200),
    ("uint8 ** 2**63", lambda m: _u(m) ** 2**63),
    ("uint8 ** 2**64", lambda m: _u(m) ** 2**64),
]

INDEX = []
for _name, _fn in {
    "index_add": lambda m, k: m.zeros(3, 2).index_add(0, m.tensor([k]), m.ones(1, 2)),
    "index_add_": lambda m, k: m.zeros(3, 2).index_add_(0, m.tensor([k]), m.ones(1, 2)),
    "index_copy": lambda m, k: m.zeros(3, 2).index_copy(0, m.tensor([k]), m.ones(1, 2)),
    "index_copy_": lambda m, k: m.zeros(3, 2).index_copy_(0, m.tensor([k]), m.ones(1, 2)),
    "index_fill": lambda m, k: m.zeros(3, 2).index_fill(0, m.tensor([k]), 1.0),
    "index_select": lambda m, k: m.zeros(3, 2).index_select(0, m.tensor([k])),
    "index_put": lambda m, k: m.zeros(3, 2).index_put((m.tensor([k]),), m.ones(2)),
    "index_put acc": lambda m, k: m.zeros(3, 2).index_put((m.tensor([k]),), m.ones(2),
                                                          accumulate=True),
    "getitem": lambda m, k: m.arange(6).reshape(3, 2)[m.tensor([k])],
    "scatter": lambda m, k: m.zeros(3, 2).scatter(0, m.tensor([[k, 0]]), m.ones(1, 2)),
    "scatter_add": lambda m, k: m.zeros(3, 2).scatter_add(0, m.tensor([[k, 0]]), m.ones(1, 2)),
    "scatter value": lambda m, k: m.zeros(3, 2).scatter(0, m.tensor([[k, 0]]), 5.0),
    "gather": lambda m, k: m.arange(6).reshape(3, 2).gather(0, m.tensor([[k, 0]])),
    "take": lambda m, k: m.arange(6).reshape(3, 2).take(m.tensor([2 * k])),
    "take_along_dim": lambda m, k: m.arange(6).reshape(3, 2).take_along_dim(
        m.tensor([[k, 0]]), 0),
    "one_hot": lambda m, k: m.nn.functional.one_hot(m.tensor([k]), 3),
    "embedding": lambda m, k: m.nn.functional.embedding(m.tensor([k]), m.ones(3, 2)),
}.items():
    for _k in (-1, -3) if _name == "take_along_dim" else (-1, -3, -4, 3):
        # (torch's take_along_dim reads out of bounds unchecked: only valid indices compared)
        INDEX.append((f"{_name} [{_k}]", lambda m, f=_fn, k=_k: f(m, k)))


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in INPLACE + POW + INDEX])
def test_matches_torch(fn):
    assert_same_outcome(fn)


def _out(m, fn, x, out):
    r = fn(x, out=out)
    assert r is out
    return out


OUT = [
    ("exp int out=int", lambda m: _out(m, m.exp, m.tensor([1, 2]), m.zeros(2, dtype=m.int64))),
    ("sqrt out=float64", lambda m: _out(m, m.sqrt, m.tensor([2.0, 3.0]), m.zeros(
        2, dtype=m.float64))),
    ("sqrt int out=float16", lambda m: _out(m, m.sqrt, m.tensor([2, 3]), m.zeros(
        2, dtype=m.float16))),
    ("sqrt out resized", lambda m: _out(m, m.sqrt, m.tensor([1.0, 4.0]), m.zeros(0))),
    ("exp out requires grad", lambda m: m.exp(m.tensor([1.0], requires_grad=True),
                                              out=m.zeros(1))),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in OUT])
def test_out_matches_torch(fn):
    assert_same_outcome(fn)
