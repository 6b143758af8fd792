"""Random factories and samplers on unusual inputs, against torch: non-contiguous ``*_like``
inputs (torch keeps their strides and fills in memory order), and the dtypes and bounds torch
refuses (dropout of an integer tensor, bernoulli of integer probabilities, randperm past what
the dtype holds, uniform_ bounds outside the dtype)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

LIKE_INPUTS = [
    ("permute", lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1)),
    ("t_blocked", lambda lib: lib.zeros(4, 8).t()),
    ("t_float64", lambda lib: lib.zeros(3, 5, dtype=lib.float64).t()),
    ("slice", lambda lib: lib.zeros(4, 8)[:, ::2]),
    ("expand", lambda lib: lib.zeros(4, 1).expand(4, 5)),
]


@pytest.mark.parametrize("name,make", LIKE_INPUTS, ids=[n for n, _ in LIKE_INPUTS])
@pytest.mark.parametrize("op", ["rand_like", "randn_like"])
def test_like_samplers_of_strided_inputs_give_torch_numbers_and_strides(name, make, op):
    results = []
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        out = getattr(lib, op)(make(lib))
        arr = out.detach().numpy()
        results.append((arr.copy(), arr.strides, lib.rand(3).numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]
    np.testing.assert_array_equal(results[0][2], results[1][2])  # the same draws consumed


def _error(fn, lib):
    with pytest.raises(Exception) as err:
        fn(lib)
    return err


REFUSED = {
    "dropout_int": lambda lib: lib.nn.functional.dropout(lib.ones(4, dtype=lib.int64), 0.5),
    "dropout_bool": lambda lib: lib.nn.functional.dropout(lib.ones(4, dtype=lib.bool), 0.5),
    "dropout_int_inplace": lambda lib: lib.nn.functional.dropout(
        lib.ones(4, dtype=lib.int64), 0.5, inplace=True),
    "dropout2d_int": lambda lib: lib.nn.functional.dropout2d(
        lib.ones(2, 2, 2, 2, dtype=lib.int64), 0.5),
    "bernoulli_int": lambda lib: lib.bernoulli(lib.tensor([0, 1])),
    "bernoulli_bool": lambda lib: lib.bernoulli(lib.tensor([True, False])),
    "rand_like_int": lambda lib: lib.rand_like(lib.zeros(3, dtype=lib.int64)),
    "randn_like_bool": lambda lib: lib.randn_like(lib.zeros(3, dtype=lib.bool)),
    "randperm_bool": lambda lib: lib.randperm(2, dtype=lib.bool),
    "randperm_int8": lambda lib: lib.randperm(129, dtype=lib.int8),
    "randperm_uint8": lambda lib: lib.randperm(257, dtype=lib.uint8),
    "randperm_int16": lambda lib: lib.randperm(40000, dtype=lib.int16),
    "randperm_half": lambda lib: lib.randperm(2050, dtype=lib.float16),
    "uniform_inf": lambda lib: lib.empty(3).uniform_(0, float("inf")),
    "uniform_nan": lambda lib: lib.empty(3).uniform_(float("nan"), 0),
    "uniform_half": lambda lib: lib.empty(3, dtype=lib.float16).uniform_(0, 70000),
    "uniform_span": lambda lib: lib.empty(3).uniform_(-3e38, 3e38),
    "init_uniform": lambda lib: lib.nn.init.uniform_(lib.empty(3), -1e39, 0),
    "bernoulli_p_shape": lambda lib: lib.zeros(5).bernoulli_(lib.full((2,), 0.5)),
    "bernoulli_p_dims": lambda lib: lib.zeros(5).bernoulli_(lib.full((2, 5), 0.5)),
    "randint_float_bounds": lambda lib: lib.randint(0.5, 10.7, (4,)),
    "randint_int_size": lambda lib: lib.randint(0, 10, 3),
    "randint_float_element": lambda lib: lib.randint(0, 10, (3.0,)),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_inputs_raise_torch_error_type_and_message(case):
    theirs, ours = (_error(REFUSED[case], lib) for lib in (torch, glassgrad))
    assert type(ours.value) is type(theirs.value)
    if "invalid combination" in str(theirs.value) or "tuple of ints" in str(theirs.value):
        return  # NOTE: torch lists its overloads; glassgrad names the call's types
    assert str(ours.value).startswith(str(theirs.value).split("\n")[0])


ACCEPTED = {
    "dropout_int_p1": lambda lib: lib.nn.functional.dropout(lib.ones(4, dtype=lib.int64), 1.0),
    "dropout_int_eval": lambda lib: lib.nn.functional.dropout(
        lib.ones(4, dtype=lib.int64), 0.5, training=False),
    "randperm_int8_128": lambda lib: lib.randperm(128, dtype=lib.int8),
    "randperm_uint8_256": lambda lib: lib.randperm(256, dtype=lib.uint8),
    "randperm_half_2049": lambda lib: lib.randperm(2049, dtype=lib.float16),
    "uniform_float64_big": lambda lib: lib.empty(3, dtype=lib.float64).uniform_(0, 1e308),
    "bernoulli_int_p": lambda lib: lib.bernoulli(lib.tensor([0, 1]), p=0.5),
    "bernoulli_p_broadcast": lambda lib: lib.zeros(2, 3).bernoulli_(lib.full((2, 1), 0.5)),
    "randint_list_size": lambda lib: lib.randint(0, 10, [3]),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_edge_inputs_torch_accepts_give_torch_values(case):
    outs = []
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        out = ACCEPTED[case](lib)
        outs.append((out.numpy(), str(out.dtype).split(".")[-1]))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1]


BAD_CALLS = {
    "generator_seed_float": lambda lib: lib.Generator().manual_seed(1.5),
    "generator_seed_str": lambda lib: lib.Generator().manual_seed("1"),
    "generator_seed_bool": lambda lib: lib.Generator().manual_seed(True),
    "generator_seed_overflow": lambda lib: lib.Generator().manual_seed(2**64),
    "manual_seed_overflow": lambda lib: lib.manual_seed(-(2**63) - 1),
    "manual_seed_none": lambda lib: lib.manual_seed(None),
    "rand_generator_str": lambda lib: lib.rand(2, generator="x"),
    "type_unknown_name": lambda lib: lib.zeros(2).type("torch.FooTensor"),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_seeds_generators_and_type_names_raise_torch_error_type(case):
    theirs, ours = (_error(BAD_CALLS[case], lib) for lib in (torch, glassgrad))
    assert type(ours.value) is type(theirs.value)
    phrase = str(theirs.value).split(" - got")[0].split("rand() ")[-1][:60]
    assert phrase in str(ours.value)


@pytest.mark.parametrize("seed", [1.5, "7", True])
def test_manual_seed_converts_with_int_as_torch(seed):
    torch.manual_seed(seed)
    glassgrad.manual_seed(seed)
    np.testing.assert_array_equal(torch.rand(3).numpy(), glassgrad.rand(3).numpy())


def test_an_unknown_print_profile_is_ignored_as_in_torch():
    for lib in (torch, glassgrad):
        lib.set_printoptions(precision=2)
        lib.set_printoptions(profile="weird", precision=None)
    try:
        assert str(glassgrad.tensor([1.23456])) == str(torch.tensor([1.23456]))
    finally:
        for lib in (torch, glassgrad):
            lib.set_printoptions(profile="default")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("bounds", [(0, 5000), (-5000, 3), (2047, 2050), (0, 65504), (4001, 4003),
                                    (2**24, 2**24 + 7)])
def test_randint_into_floats_moves_its_bounds_inwards_as_torch(dtype, bounds):
    results = []
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        try:
            results.append(lib.randint(*bounds, (8,), dtype=getattr(lib, dtype)).tolist())
            results.append(lib.zeros(4, dtype=getattr(lib, dtype)).random_(*bounds).tolist())
        except RuntimeError as err:
            results.append(str(err).split("\n")[0])
    half = len(results) // 2
    assert results[:half] == results[half:]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("n", [15, 16, 17, 33, 1000])
@pytest.mark.parametrize("mean_std", [None, (2.5, 0.3)])
def test_16_bit_normals_take_aten_float32_blocks_as_torch(dtype, n, mean_std):
    results = []
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        d = getattr(lib, dtype)
        out = lib.randn(n, dtype=d) if mean_std is None else lib.empty(n, dtype=d).normal_(
            *mean_std)
        results.append((out.float().numpy(), lib.rand(3).numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])  # the same draws consumed
