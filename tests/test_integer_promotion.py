"""Type promotion and integer wrap-around against torch, as grids: every dtype pair, as
dimensioned tensor x 0-d tensor x Python scalar, for arithmetic, comparison, bitwise, shift and
where() (a 0-d tensor and a number take part like scalars: ``uint8_tensor & int64_0d`` is uint8);
every binary op with out-of-range Python ints for every integer dtype (PyTorch wraps them in two's
complement); integer division by zero. Values, dtypes and errors are compared."""

from __future__ import annotations

import operator

import pytest

from tests.integer_oracle import assert_same_outcome

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64")
INTS = ("bool", "uint8", "int8", "int16", "int32", "int64")
OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift, "lt": operator.lt, "eq": operator.eq, "ge": operator.ge,
    "maximum": lambda a, b: a.maximum(b),
    "where": lambda a, b: a.__class__.__module__.split(".")[0] and _where(a, b),
}


def _where(a, b):
    import sys

    lib = sys.modules[type(a if hasattr(a, "dtype") else b).__module__.split(".")[0]]
    return lib.where(lib.tensor([True, False]), a, b)


def _make(m, d, kind):
    dt = getattr(m, d)
    if kind == "dim":
        return m.tensor([3, 1], dtype=dt) if d != "bool" else m.tensor([True, False])
    return m.tensor(2, dtype=dt) if d != "bool" else m.tensor(True)


def _grid():
    for op in OPS:
        for a in DTYPES:
            for b in DTYPES:
                for ka, kb in (("dim", "0d"), ("0d", "dim"), ("0d", "0d")):
                    yield f"{op} {a}-{ka} {b}-{kb}", op, (a, ka), (b, kb)
            if op in ("maximum",):
                continue
            for s in (True, 2, 2.5):
                for k in ("dim", "0d"):
                    yield f"{op} {a}-{k} {s!r}", op, (a, k), s
                    if op != "where":
                        yield f"{op} {s!r} {a}-{k}", op, s, (a, k)


def _operand(m, x):
    return _make(m, *x) if isinstance(x, tuple) else x


@pytest.mark.parametrize("op,a,b", [pytest.param(o, a, b, id=i) for i, o, a, b in _grid()])
def test_promotion_grid(op, a, b):
    fn = OPS[op]
    assert_same_outcome(lambda m: fn(_operand(m, a), _operand(m, b)))


WRAP_OPS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lt",
            "eq", "ge")
NUMBERS = (-1, 200, 300, -200, 2**31, 2**40, 2**63 - 1, 2**63, -(2**63) - 1, 2**64)


def _wrap_cases():
    for op in WRAP_OPS:
        for d in INTS:
            for s in NUMBERS:
                yield f"{op} {d} {s}", op, d, s, False
                yield f"{op} {s} {d}", op, d, s, True


@pytest.mark.parametrize("op,d,s,reflected",
                         [pytest.param(*c[1:], id=c[0]) for c in _wrap_cases()])
def test_python_int_operand(op, d, s, reflected):
    fn = OPS[op]

    def run(m):
        x = _make(m, d, "dim") if d == "bool" else m.tensor([5, 3], dtype=getattr(m, d))
        return fn(s, x) if reflected else fn(x, s)

    assert_same_outcome(run)


@pytest.mark.parametrize("d", INTS[1:])
@pytest.mark.parametrize("op", ["floordiv", "mod", "fmod", "div_trunc", "div_floor", "truediv",
                                "remainder_", "floor_divide_", "floordiv_number"])
def test_integer_division_by_zero(op, d):
    def run(m):
        x = m.tensor([5, -3] if d != "uint8" else [5, 3], dtype=getattr(m, d))
        z = m.tensor([0, 1], dtype=getattr(m, d))
        return {
            "floordiv": lambda: x // z, "mod": lambda: x % z, "fmod": lambda: m.fmod(x, z),
            "div_trunc": lambda: m.div(x, z, rounding_mode="trunc"),
            "div_floor": lambda: m.div(x, z, rounding_mode="floor"),
            "truediv": lambda: x / z, "remainder_": lambda: x.remainder_(0),
            "floor_divide_": lambda: x.floor_divide_(0), "floordiv_number": lambda: x // 0,
        }[op]()

    assert_same_outcome(run)
