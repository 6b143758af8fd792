"""Names that older programs touch on a CPU-only build, compared with torch probe by probe:
``torch.version.cuda``, ``torch.cuda.FloatTensor`` and the other CUDA legacy types (they exist;
calling one raises), ``torch.set_default_tensor_type`` (deprecated, sets the default dtype)."""

from __future__ import annotations

import warnings

import pytest
import torch

import glassgrad
from tests.runtime_probe import same_outcome
from tests.test_runtime_legacy import TYPES


@pytest.mark.parametrize("attr", ["cuda", "hip", "rocm", "xpu", "debug"])
def test_version_of_a_cpu_build(attr):
    same_outcome(lambda t: getattr(t.version, attr))
    assert glassgrad.version.__version__ == glassgrad.__version__


@pytest.mark.parametrize("name", TYPES)
def test_cuda_legacy_types_exist_and_refuse_to_construct(name):
    same_outcome(lambda t: getattr(t.cuda, name)([1, 2]))
    same_outcome(lambda t: getattr(t.cuda, name)(2, 3))
    same_outcome(lambda t: isinstance(t.zeros(2, dtype=getattr(t.cuda, name).dtype),
                                      getattr(t.cuda, name)))
    same_outcome(lambda t: str(getattr(t.cuda, name).dtype).split(".")[-1])
    same_outcome(lambda t: (getattr(t.cuda, name).__name__, getattr(t.cuda, name).is_cuda))


@pytest.fixture
def default_dtype_restored():
    yield
    torch.set_default_dtype(torch.float32)
    glassgrad.set_default_dtype(glassgrad.float32)


@pytest.mark.parametrize("arg", [
    "t.DoubleTensor", "t.HalfTensor", "t.BFloat16Tensor", "t.FloatTensor", "'torch.DoubleTensor'",
    "t.LongTensor", "t.BoolTensor", "t.cuda.FloatTensor", "'torch.cuda.DoubleTensor'",
    "t.float64", "'torch.NoSuchTensor'", "'nosuchmodule.FloatTensor'", "'torch'", "'nosuchmodule'", "3",
])
def test_set_default_tensor_type(arg, default_dtype_restored):
    def probe(t):
        t.set_default_tensor_type(eval(arg))
        return str(t.get_default_dtype()).split(".")[-1], str(t.ones(1).dtype).split(".")[-1]
    same_outcome(probe)


def test_set_default_tensor_type_warns_deprecated(default_dtype_restored):
    import glassgrad._legacy as legacy

    legacy._warned_default_type = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        glassgrad.set_default_tensor_type(glassgrad.DoubleTensor)
        glassgrad.set_default_tensor_type(glassgrad.FloatTensor)
    assert len(caught) == 1 and caught[0].category is UserWarning
    assert "set_default_tensor_type() is deprecated as of PyTorch 2.1" in str(caught[0].message)
    assert glassgrad.set_default_tensor_type.__doc__
