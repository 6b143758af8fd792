"""torch.* runtime settings on both libraries: threads (really NumPy's BLAS threads), float32
matmul precision, deterministic algorithms, the default device, constants, typename and
is_inference."""

from __future__ import annotations

import math
import os

import pytest
import torch

import glassgrad
from glassgrad import _runtime
from tests.runtime_probe import same_outcome


@pytest.fixture
def restore_threads():
    saved = torch.get_num_threads(), glassgrad.get_num_threads()
    yield
    torch.set_num_threads(saved[0])
    glassgrad.set_num_threads(saved[1])


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


# OpenBLAS caps its threads at the cores it sees: two threads need two cores
TWO_CORES = (os.cpu_count() or 1) >= 2


def test_set_num_threads_sets_numpys_blas_threads(restore_threads):
    glassgrad.set_num_threads(1)
    assert glassgrad.get_num_threads() == 1 and set(_blas_threads()) == {1}
    if TWO_CORES:
        glassgrad.set_num_threads(2)
        assert glassgrad.get_num_threads() == 2 and set(_blas_threads()) == {2}


@pytest.mark.parametrize("n", [1, 2, 0, -1, 1.5, "2", True] if TWO_CORES else [1, 0, -1, 1.5])
def test_set_num_threads_checks_like_torch(restore_threads, n):
    def probe(t):
        t.set_num_threads(n)
        return t.get_num_threads()

    same_outcome(probe)


def test_default_num_threads_is_the_blas_count():
    assert glassgrad.get_num_threads() == max(_blas_threads())


def test_interop_threads_once(monkeypatch):
    monkeypatch.setitem(_runtime._state, "interop_set", False)
    monkeypatch.setitem(_runtime._state, "interop_threads", None)
    same_outcome(lambda t: t.set_num_interop_threads(0))
    glassgrad.set_num_interop_threads(1)
    assert glassgrad.get_num_interop_threads() == 1
    with pytest.raises(RuntimeError, match="cannot set number of interop threads after"):
        glassgrad.set_num_interop_threads(2)


@pytest.fixture
def restore_modes():
    saved = [(lib, lib.get_float32_matmul_precision(), lib.get_deterministic_debug_mode())
             for lib in (torch, glassgrad)]
    yield
    for lib, precision, mode in saved:
        lib.set_float32_matmul_precision(precision)
        lib.set_deterministic_debug_mode(mode)


@pytest.mark.parametrize("precision", ["highest", "high", "medium", "bogus", 3])
def test_float32_matmul_precision(restore_modes, precision):
    def probe(t):
        t.set_float32_matmul_precision("high")
        t.set_float32_matmul_precision(precision)
        return t.get_float32_matmul_precision()

    same_outcome(probe)


def test_unknown_matmul_precision_warns():
    for lib in (torch, glassgrad):
        with pytest.warns(UserWarning, match="bogus is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("bogus")


@pytest.mark.parametrize("call", [
    "use_deterministic_algorithms(True)", "use_deterministic_algorithms(True, warn_only=True)",
    "use_deterministic_algorithms(False, warn_only=True)", "use_deterministic_algorithms(1)",
    "set_deterministic_debug_mode('warn')", "set_deterministic_debug_mode('error')",
    "set_deterministic_debug_mode('default')", "set_deterministic_debug_mode(2)",
    "set_deterministic_debug_mode(True)", "set_deterministic_debug_mode('bogus')",
    "set_deterministic_debug_mode(5)",
])
def test_deterministic_algorithm_flags(restore_modes, call):
    def probe(t):
        eval("t." + call, {"t": t})
        return (t.are_deterministic_algorithms_enabled(),
                t.is_deterministic_algorithms_warn_only_enabled(),
                t.get_deterministic_debug_mode())

    same_outcome(probe)


@pytest.mark.parametrize("name", ["inf", "pi", "e", "nan", "newaxis"])
def test_constants(name):
    ours, theirs = getattr(glassgrad, name), getattr(torch, name)
    assert type(ours) is type(theirs)
    assert ours == theirs or (math.isnan(ours) and math.isnan(theirs))


def test_newaxis_indexes():
    same_outcome(lambda t: tuple(t.zeros(2, 3)[:, t.newaxis].shape))


def test_default_device():
    def probe(t):
        before = str(t.get_default_device())
        t.set_default_device("cpu")
        during = str(t.get_default_device())
        t.set_default_device(None)
        return before, during, str(t.get_default_device())

    same_outcome(probe)


@pytest.mark.parametrize("expr", [
    "t.zeros(2)", "t.zeros(2, dtype=t.int64)", "t.zeros(1, dtype=t.float16)",
    "t.zeros(1, dtype=t.bfloat16)", "t.zeros(1, dtype=t.bool)", "1.0", "3", "'s'",
    "t.nn.Linear(1, 1)", "t.nn.Linear",
])
def test_typename(expr):
    same_outcome(lambda t: t.typename(eval(expr, {"t": t})).replace("glassgrad", "torch"))


@pytest.mark.parametrize("make", ["t.zeros(1)", "3"])
def test_is_inference(make):
    def probe(t):
        with t.inference_mode():
            inside = t.ones(1)
        x = eval(make, {"t": t})
        return t.is_inference(inside), inside.is_inference(), t.is_inference(x)

    same_outcome(probe)
