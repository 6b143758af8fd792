"""Issue 22's smaller divergences against torch: every factory that takes a shape accepts it as
``size=`` (values compared, since glassgrad's generator gives torch's numbers from one seed), with
torch's TypeErrors for the forms torch refuses; ``Tensor.new_*(size=...)``; and the device/layout
flags programs probe (``is_sparse``, ``is_sparse_csr``, ``is_xpu``, ``is_mps``, ``is_meta``, ...)
on dense, COO and CSR tensors."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import glassgrad

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

CALLS = {  # name -> call(lib); every one draws or builds through size=
    "zeros": lambda lib: lib.zeros(size=(2, 3)),
    "ones": lambda lib: lib.ones(size=[2]),
    "empty": lambda lib: lib.empty(size=(2, 3)).shape,
    "full": lambda lib: lib.full(size=(2, 3), fill_value=1.5),
    "full int": lambda lib: lib.full(size=(2,), fill_value=3),
    "rand": lambda lib: lib.rand(size=(2, 3)),
    "randn": lambda lib: lib.randn(size=(2, 3)),
    "randn float64": lambda lib: lib.randn(size=(2,), dtype=lib.float64),
    "rand generator": lambda lib: lib.rand(size=(3,), generator=lib.Generator().manual_seed(3)),
    "randint low high": lambda lib: lib.randint(0, 5, size=(2, 3)),
    "randint high": lambda lib: lib.randint(5, size=(4,)),
    "randint keywords": lambda lib: lib.randint(low=1, high=5, size=(4,)),
    "normal": lambda lib: lib.normal(0.0, 1.0, size=(2, 3)),
    "normal keywords": lambda lib: lib.normal(mean=2.0, std=3.0, size=(2,)),
    "empty_strided": lambda lib: lib.empty_strided(size=(2, 3), stride=(3, 1)).shape,
    "zeros int32": lambda lib: lib.zeros(size=(1,), dtype=lib.int32),
    "ones Size": lambda lib: lib.ones(size=lib.Size([2, 2])),
    "new_zeros": lambda lib: lib.ones(2, dtype=lib.float64).new_zeros(size=(2, 3)),
    "new_ones": lambda lib: lib.ones(2, dtype=lib.float64).new_ones(size=(2,)),
    "new_empty": lambda lib: lib.ones(2, dtype=lib.float64).new_empty(size=(2, 3)).shape,
    "new_full": lambda lib: lib.ones(2, dtype=lib.float64).new_full(size=(2,), fill_value=4.0),
    "new_zeros positional": lambda lib: lib.ones(2).new_zeros((2, 3)),
}


def _plain(value):
    if hasattr(value, "tolist"):
        return value.tolist(), str(value.dtype).split(".")[1]
    return tuple(value)


def test_size_keyword_calls_match_torch_in_one_stream():
    # one seed, every call in order: a call that drew a different count would shift the rest
    results = {}
    for lib in (glassgrad, torch):
        lib.manual_seed(0)
        results[lib] = {name: _plain(call(lib)) for name, call in CALLS.items()}
    for name in CALLS:
        ours, theirs = results[glassgrad][name], results[torch][name]
        if isinstance(theirs, tuple) and len(theirs) == 2 and isinstance(theirs[1], str):
            assert ours[1] == theirs[1], name
            np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6, err_msg=name)
        else:
            assert ours == theirs, name


REFUSED = {
    "rand(size=int)": (lambda lib: lib.rand(size=3), "rand(): argument 'size' must be tuple of "
                       "ints, not int"),
    "randn(size=int)": (lambda lib: lib.randn(size=3), "randn(): argument 'size' must be tuple "
                        "of ints, not int"),
    "rand(2, size=)": (lambda lib: lib.rand(2, size=(3,)), "rand() received an invalid "
                       "combination of arguments"),
    "randn(2, size=)": (lambda lib: lib.randn(2, size=(3,)), "randn() received an invalid "
                        "combination of arguments"),
    "new_zeros(2, size=)": (lambda lib: lib.ones(2).new_zeros(2, size=(3,)),
                            "new_zeros() got multiple values for argument 'size'"),
    "new_ones(size=int)": (lambda lib: lib.ones(2).new_ones(size=3),
                           "new_ones(): argument 'size' must be tuple of ints, not int"),
    "new_empty()": (lambda lib: lib.ones(2).new_empty(), 'new_empty() missing 1 required '
                    'positional arguments: "size"'),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_size_forms_match_torch(case):
    call, phrase = REFUSED[case]
    for lib in (glassgrad, torch):
        with pytest.raises(TypeError, match=re.escape(phrase)):
            call(lib)


TENSORS = {
    "dense": lambda lib: lib.ones(2, 2),
    "coo": lambda lib: lib.ones(2, 2).to_sparse(),
    "csr": lambda lib: lib.ones(2, 2).to_sparse_csr(),
}
FLAGS = ["is_sparse", "is_sparse_csr", "is_xpu", "is_mps", "is_meta", "is_cuda", "is_cpu",
         "is_quantized", "is_mkldnn", "is_nested"]


@pytest.mark.parametrize("kind", sorted(TENSORS))
def test_layout_and_device_flags_match_torch(kind):
    ours, theirs = (TENSORS[kind](lib) for lib in (glassgrad, torch))
    for flag in FLAGS:
        assert getattr(ours, flag) == getattr(theirs, flag), flag
    assert str(ours.layout).split(".")[1] == str(theirs.layout).split(".")[1]
