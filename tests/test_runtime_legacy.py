"""Legacy constructors (torch.FloatTensor ... BoolTensor, torch.Tensor(...), x.new(...)),
x.type() strings and torch.autograd.Variable, compared with torch call by call."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.runtime_probe import outcome, same_outcome

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
         "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


def _described(value):
    """A tensor as (dtype name, shape, values as float64), for comparing across libraries."""
    if isinstance(value, (torch.Tensor, glassgrad.Tensor)):
        arr = value.detach().float().numpy() if value.dtype.is_floating_point else (
            value.detach().numpy())
        return (str(value.dtype).split(".")[-1], tuple(value.shape),
                arr.astype(np.float64).tolist(), value.requires_grad)
    return value


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("args", [
    "(2, 3)", "([1, 0, 2],)", "([[1.7, -2.2], [3.0, 0.0]],)", "()", "(3,)",
    "(t.Size([2, 3]),)", "((2, 3),)", "(np.array([1, 2]),)", "(np.array([1.5, 0.0]),)",
    "([1, 2], device='cpu')", "(2.5,)", "('a',)", "([1, 2], requires_grad=True)",
    "(2, dtype=t.float64)",
])
def test_legacy_constructor(name, args):
    def probe(t):
        result = eval(f"t.{name}{args}", {"t": t, "np": np})
        if result.numel() and args in ("(2, 3)", "(3,)", "(t.Size([2, 3]),)"):
            result = result.zero_()  # torch leaves this memory uninitialised; glassgrad zeroes it
        return _described(result)

    same_outcome(probe)


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "uint8", "float16"])
def test_isinstance_of_legacy_type_checks_dtype(name, dtype):
    same_outcome(lambda t: (isinstance(t.zeros(2, dtype=getattr(t, dtype)), getattr(t, name)),
                            issubclass(getattr(t, name), t.Tensor), getattr(t, name).is_cuda,
                            str(getattr(t, name).dtype).split(".")[-1], getattr(t, name).__name__))


@pytest.mark.parametrize("src", ["t.tensor([1., 2.])", "t.tensor([1, 2])"])
def test_legacy_constructor_of_a_tensor(src):
    same_outcome(lambda t: _described(t.FloatTensor(eval(src, {"t": t}))))
    same_outcome(lambda t: _described(t.Tensor(eval(src, {"t": t}))))


def test_legacy_constructor_shares_numpy_and_tensor_storage():
    for lib in (torch, glassgrad):
        arr = np.array([1.0, 2.0], dtype=np.float32)
        lib.FloatTensor(arr)[0] = 5.0
        src = lib.tensor([1.0, 2.0])
        lib.FloatTensor(src)[1] = 7.0
        assert arr.tolist() == [5.0, 2.0] and src.tolist() == [1.0, 7.0], lib.__name__


@pytest.mark.parametrize("args", ["(2, 3)", "([1, 2],)", "()", "(np.array([1, 2]),)",
                                  "(t.Size([4]),)"])
def test_tensor_legacy_call_and_new(args):
    def probe(t):
        made = eval(f"t.Tensor{args}", {"t": t, "np": np})
        new = eval(f"t.zeros(1, dtype=t.int32).new{args}", {"t": t, "np": np})
        return [_described(x.zero_() if args in ("(2, 3)", "(t.Size([4]),)") else x)
                for x in (made, new)]

    same_outcome(probe)


def test_tensor_legacy_call_uses_the_default_dtype():
    def probe(t):
        t.set_default_dtype(t.float64)
        try:
            return _described(t.Tensor([1, 2]))
        finally:
            t.set_default_dtype(t.float32)

    same_outcome(probe)


@pytest.mark.parametrize("target", ["t.LongTensor", "'torch.LongTensor'", "t.float64",
                                    "'torch.BoolTensor'"])
def test_type_conversion_and_names(target):
    def probe(t):
        x = t.tensor([0.0, 1.5])
        out = x.type(eval(target, {"t": t}))
        return out.type(), _described(out), t.typename(out), x.type()

    same_outcome(probe)


@pytest.mark.parametrize("expr", [
    "Variable(t.ones(2), requires_grad=True)", "Variable(t.ones(2))", "Variable()",
    "Variable([1, 2])", "Variable(t.ones(2, requires_grad=True) * 2)",
    "Variable(t.ones(2, dtype=t.long), requires_grad=True)",
    "Variable(t.ones(2), volatile=True)",
])
def test_variable_makes_a_leaf_tensor(expr):
    def probe(t):
        v = eval(expr, {"t": t, "Variable": t.autograd.Variable})
        return type(v) is t.Tensor, v.is_leaf, _described(v)

    same_outcome(probe)


def test_variable_isinstance_shares_storage_and_trains():
    for lib in (torch, glassgrad):
        x = lib.ones(3)
        v = lib.autograd.Variable(x, requires_grad=True)
        assert isinstance(x, lib.autograd.Variable) and isinstance(v, lib.autograd.Variable)
        assert not isinstance(np.ones(2), lib.autograd.Variable)
        assert not issubclass(lib.autograd.Variable, lib.Tensor)
        v.data[0] = 4.0
        assert x.tolist() == [4.0, 1.0, 1.0]
        (v * v).sum().backward()
        assert v.grad.tolist() == [8.0, 2.0, 2.0]


def test_variable_volatile_warns():
    for lib in (torch, glassgrad):
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            lib.autograd.Variable(lib.ones(1), volatile=True)


@pytest.mark.parametrize("target", ["t.cuda.FloatTensor", "t.cuda.LongTensor",
                                    "'torch.cuda.FloatTensor'", "'foo'", "'torch.NoTensor'"])
def test_type_to_a_cuda_type_or_an_unknown_name_raises(target):
    """``x.type(torch.cuda.FloatTensor)`` needs CUDA (torch's RuntimeError, first sentence);
    a name that is no tensor type is torch's ValueError."""
    theirs, ours = (outcome(lambda t: t.ones(2).type(eval(target)), lib)
                    for lib in (torch, glassgrad))
    assert ours[:2] == theirs[:2] and theirs[0] == "raises"
    assert theirs[2].startswith(ours[2]), (ours, theirs)


@pytest.mark.parametrize("flag", ["is_cuda", "is_cpu", "is_xpu", "is_mps", "is_meta",
                                  "is_quantized", "is_mkldnn", "is_sparse"])
def test_device_type_flags(flag):
    """dcgan tests ``input.is_cuda or input.is_xpu`` before calling data_parallel."""
    same_outcome(lambda t: getattr(t.ones(2), flag))
