"""Construction helpers and dtype/shape predicates (issue 15, lane ops) against torch: values,
warnings, and errors (type and key phrase)."""

import warnings

import pytest
import torch

import glassgrad
from tests.ops_errors import same_error

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


@pytest.mark.parametrize("src", DTYPES)
def test_can_cast_every_pair(src):
    for dst in DTYPES:
        assert glassgrad.can_cast(getattr(glassgrad, src), getattr(glassgrad, dst)) == \
            torch.can_cast(getattr(torch, src), getattr(torch, dst)), (src, dst)


@pytest.mark.parametrize("name", DTYPES)
def test_finfo_iinfo_fields_and_repr(name):
    ours, theirs = getattr(glassgrad, name), getattr(torch, name)
    if theirs.is_floating_point:
        a, b = glassgrad.finfo(ours), torch.finfo(theirs)
        fields = "bits eps max min tiny smallest_normal resolution dtype".split()
    elif name != "bool":
        a, b = glassgrad.iinfo(ours), torch.iinfo(theirs)
        fields = "bits max min dtype".split()
    else:
        same_error(lambda lib: lib.iinfo(lib.bool), "torch.bool is not supported")
        return
    for f in fields:
        assert getattr(a, f) == getattr(b, f) and type(getattr(a, f)) is type(getattr(b, f)), f
    assert repr(a) == repr(b)


def test_finfo_default_and_errors():
    assert glassgrad.finfo().dtype == torch.finfo().dtype
    assert glassgrad.finfo(float) == glassgrad.finfo(glassgrad.float64)
    same_error(lambda lib: lib.finfo(lib.int64), "torch.finfo() requires a floating point")
    same_error(lambda lib: lib.iinfo(lib.float32), "torch.iinfo() requires an integer")


@pytest.mark.parametrize("shapes", [[(2, 1), (3,)], [(), (4, 1, 2)], [5, (2, 1)], [],
                                    [(0, 1), (3,)]])
def test_broadcast_shapes(shapes):
    assert tuple(glassgrad.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    assert isinstance(glassgrad.broadcast_shapes(*shapes), glassgrad.Size)


def test_broadcast_shapes_errors():
    same_error(lambda lib: lib.broadcast_shapes((2, 3), (4,)),
                "Attempting to broadcast a dimension of length 4")
    same_error(lambda lib: lib.broadcast_shapes((2, -1)), "negative length")


def test_predicates():
    for lib in (glassgrad, torch):
        a, b = lib.ones(2, 3), lib.zeros(2, 3, dtype=lib.int64)
        assert lib.is_same_size(a, b) and not a.is_same_size(lib.ones(3, 2))
    for name in DTYPES:
        assert glassgrad.is_signed(glassgrad.ones(1, dtype=getattr(glassgrad, name))) == \
            torch.is_signed(torch.ones(1, dtype=getattr(torch, name))), name


@pytest.mark.parametrize("args,kwargs", [((0, 3), {}), ((1, 2, 0.25), {}),
                                         ((0, 1, 0.3), {"dtype": "float64"}), ((5, 1, -2), {})])
def test_range_is_inclusive_and_warns(args, kwargs):
    outs = []
    for lib in (glassgrad, torch):
        kw = {k: getattr(lib, v) for k, v in kwargs.items()}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            outs.append(lib.range(*args, **kw))
        assert any("torch.range is deprecated" in str(x.message) for x in w)
    assert outs[0].tolist() == pytest.approx(outs[1].tolist())
    assert str(outs[0].dtype).split(".")[-1] == str(outs[1].dtype).split(".")[-1]


def test_range_needs_end():
    for lib in (glassgrad, torch):
        with pytest.raises(TypeError):
            lib.range(4)


def test_meshgrid_warns_without_indexing():
    for lib in (glassgrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            grids = lib.meshgrid(lib.arange(2), lib.arange(3))
        assert any("it will be required to pass the indexing argument" in str(x.message)
                   for x in w)
        assert tuple(grids[0].shape) == (2, 3)


def test_scalar_tensor_dtype_and_grad():
    for lib in (glassgrad, torch):
        t = lib.scalar_tensor(2, dtype=lib.float64, requires_grad=True)
        assert t.requires_grad and t.dim() == 0 and t.dtype == lib.float64


@pytest.mark.parametrize("fn,phrase", [
    (lambda lib: lib.vsplit(lib.ones(4), 2), "requires a tensor with at least 2 dimension"),
    (lambda lib: lib.hsplit(lib.ones(4, 3), 2), "is not divisible by the split_size 2"),
    (lambda lib: lib.dsplit(lib.ones(4, 3), 2), "requires a tensor with at least 3 dimension"),
    (lambda lib: lib.block_diag(lib.ones(2, 2, 2)), "Input tensors must have 2 or fewer"),
    (lambda lib: lib.combinations(lib.ones(2, 2)), "Expect a 1D vector"),
    (lambda lib: lib.meshgrid(lib.ones(2), indexing="ab"), "indexing must be one of"),
    (lambda lib: lib.meshgrid(lib.ones(2, 2), indexing="ij"), "Expected 0D or 1D tensor"),
    (lambda lib: lib.zeros(3).fill_diagonal_(1), "dimensions must larger than 1"),
    (lambda lib: lib.zeros(3, 3, 2).fill_diagonal_(1), "all dimensions of input must be"),
    (lambda lib: lib.tril_indices(3, 3, dtype=lib.float32), "\"tril_indices\" not implemented"),
    (lambda lib: lib.unravel_index(lib.tensor(1.0), (2, 4)), "expected 'indices' to be integer"),
    (lambda lib: lib.nonzero_static(lib.ones(2), size=-1), "'size' must be an non-negative"),
])
def test_errors(fn, phrase):
    same_error(fn, phrase)
