"""Runtime names of torch.* (futures, fork/wait, exception classes, build facts, per-device
autocast functions, warn-always, anomaly mode, device queries, Tensor leftovers), run on torch
and glassgrad and compared (issue 15, lane surface)."""

from __future__ import annotations

import warnings

import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def _outcome(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(lib)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            return type(exc).__name__, str(exc).split("\n")[0], []
    return "ok", out, [(w.category.__name__, str(w.message).split(" (Triggered")[0])
                       for w in caught]


def _futures(lib):
    F = lib.futures.Future
    f = F()
    first = f.done()
    f.set_result(3)
    g = f.then(lambda fut: fut.wait() + 1)
    h, calls = F(), []
    h.add_done_callback(lambda fut: calls.append(fut.value()))
    h2 = h.then(lambda fut: fut.value() * 2)
    h.set_result(5)
    c = lib.futures.collect_all([f, h])
    return (first, f.done(), f.value(), f.wait(), g.wait(), calls, h2.wait(),
            [x.value() for x in c.wait()], lib.futures.wait_all([f, h]),
            isinstance(g, lib.Future), issubclass(F, lib.Future))


def _future_errors(lib):
    e = lib.futures.Future()
    e.set_exception(ValueError("bad"))
    out = []
    for probe in (e.wait, e.value, lambda: e.then(lambda fut: fut.wait()).wait(),
                  lambda: e.set_result(1), lambda: lib.futures.wait_all([e])):
        try:
            probe()
        except Exception as exc:  # noqa: BLE001
            out.append((type(exc).__name__, str(exc).split("\n")[0]))
    return out, e.done()


def _fork(lib):
    fut = lib.fork(lambda x, y=0: x + y, 1, y=2)
    return fut.done(), lib.wait(fut), isinstance(fut, lib.Future)


def _autocast_roundtrip(lib):
    out = [lib.get_autocast_cpu_dtype(), lib.get_autocast_gpu_dtype(), lib.get_autocast_ipu_dtype(),
           lib.get_autocast_xla_dtype(), lib.is_autocast_cpu_enabled(),
           lib.is_autocast_ipu_enabled(), lib.is_autocast_xla_enabled()]
    try:
        lib.set_autocast_cpu_dtype(lib.float16)
        lib.set_autocast_cpu_enabled(True)
        lib.set_autocast_gpu_dtype(lib.bfloat16)
        lib.set_autocast_ipu_dtype(lib.bfloat16)
        lib.set_autocast_ipu_enabled(True)
        lib.set_autocast_xla_dtype(lib.float16)
        lib.set_autocast_xla_enabled(True)
        out += [lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"),
                lib.get_autocast_dtype("cuda"), lib.get_autocast_ipu_dtype(),
                lib.is_autocast_ipu_enabled(), lib.get_autocast_xla_dtype(),
                lib.is_autocast_xla_enabled()]
        with lib.autocast("cpu"):  # the deprecated names and autocast see one state
            out.append(lib.is_autocast_cpu_enabled())
    finally:
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        lib.set_autocast_dtype("cuda", lib.float16)
        lib.set_autocast_ipu_dtype(lib.float16)
        lib.set_autocast_ipu_enabled(False)
        lib.set_autocast_xla_dtype(lib.bfloat16)
        lib.set_autocast_xla_enabled(False)
    return [str(v).split(".")[-1] for v in out]


def _anomaly(lib):
    lib.set_anomaly_enabled(True)
    try:
        on = lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(True, False)
        no_nan = lib.is_anomaly_check_nan_enabled()
    finally:
        lib.set_anomaly_enabled(False)
    return on, no_nan, lib.is_anomaly_enabled()


class _WithClassProperty:
    @staticmethod
    def make(lib):
        class Owner:
            base = 2

            @lib.classproperty
            def doubled(cls):
                return cls.base * 2

        return Owner.doubled, Owner().doubled


CASES = {
    "futures": _futures,
    "future errors": _future_errors,
    "future value pending": lambda lib: lib.futures.Future().value(),
    "fork": _fork,
    "fork raises": lambda lib: lib.fork(lambda: 1 / 0),
    "exception classes": lambda lib: [
        [c.__name__ for c in cls.__mro__] for cls in
        (lib.OutOfMemoryError, lib.AcceleratorError, lib.FatalError)],
    "GradScaler": lambda lib: lib.GradScaler is lib.amp.GradScaler,
    "facts": lambda lib: (lib.has_lapack, lib.has_spectral),
    "init_num_threads": lambda lib: lib.init_num_threads(),
    "get_device": lambda lib: (lib.get_device(lib.ones(2)), lib.ones(2).get_device()),
    "get_device bad": lambda lib: lib.get_device(3),
    "is_distributed": lambda lib: lib.is_distributed(lib.ones(2)),
    "get_device_module": lambda lib: [
        lib.get_device_module(d).__name__.split(".")[-1] for d in
        (None, "cpu", "cuda:0", lib.device("cpu"))] + [lib.get_device_module().device_count(),
                                                       lib.get_device_module().is_available()],
    "get_device_module bad": lambda lib: lib.get_device_module("foo"),
    "autocast per device": _autocast_roundtrip,
    "anomaly": _anomaly,
    "classproperty": _WithClassProperty.make,
    "jagged": lambda lib: (repr(lib.jagged).split(".")[-1], isinstance(lib.jagged, lib.layout)),
    "device flags": lambda lib: [getattr(lib.ones(2), n) for n in
                                 ("is_ipu", "is_xla", "is_maia", "is_mtia", "name")],
    "ipu": lambda lib: lib.ones(2).ipu(),
    "volatile": lambda lib: lib.ones(2).volatile,
    "grad_dtype": lambda lib: str(lib.ones(2, dtype=lib.float64).grad_dtype).split(".")[-1],
    "reinforce": lambda lib: lib.ones(2).reinforce(1),
    "module_load": lambda lib: (lib.ones(2).module_load(lib.zeros(2)).tolist(),
                                lib.ones(2).module_load(lib.zeros(2), assign=True).tolist()),
    "module_load leaf": lambda lib: lib.ones(2, requires_grad=True).module_load(lib.zeros(2)),
    "as_subclass bad": lambda lib: lib.ones(2).as_subclass(int),
    "get_file_path": lambda lib: lib.get_file_path("a", "b") == __import__("os").path.join(
        __import__("os").path.dirname(__import__("os").path.dirname(lib.__file__)), "a", "b"),
    "warn_always default": lambda lib: lib.is_warn_always_enabled(),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    theirs, ours = (_outcome(CASES[name], lib) for lib in LIBS)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        assert ours[1] == theirs[1]
        assert [w[0] for w in ours[2]] == [w[0] for w in theirs[2]]
        for (_, a), (_, b) in zip(ours[2], theirs[2]):
            assert a.replace("glassgrad", "torch").startswith(b), (a, b)
    else:
        tail = "device type at start of device string"  # the lists of known types differ
        assert (ours[1].startswith(theirs[1]) or name == "future value pending"
                or tail in theirs[1] and ours[1].split(tail)[1] == theirs[1].split(tail)[1]), \
            (ours, theirs)


def test_as_subclass_stays_on_the_graph():
    grads = []
    for lib in LIBS:
        class Sub(lib.Tensor):
            pass

        x = lib.ones(2, requires_grad=True)
        y = x.as_subclass(Sub)
        (y * 2).sum().backward()
        grads.append((type(y) is Sub, y.grad_fn.name(), y.data_ptr() == x.data_ptr(),
                      x.grad.tolist()))
    assert grads[0] == grads[1]


def test_set_warn_always_repeats_once_only_warnings():
    x = glassgrad.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.storage()
        x.storage()
        once = len(caught)
        glassgrad.set_warn_always(True)
        try:
            assert glassgrad.is_warn_always_enabled()
            x.storage()
            x.storage()
        finally:
            glassgrad.set_warn_always(False)
    assert once <= 1 and len(caught) == once + 2


def test_set_flush_denormal_reports_no_support():
    """glassgrad cannot switch the CPU's denormal mode: it says so, and denormals survive."""
    assert glassgrad.set_flush_denormal(True) is False
    assert glassgrad.tensor([1e-310], dtype=glassgrad.float64).item() != 0.0


def test_build_facts_are_glassgrads():
    import numpy as np

    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"].lower()
    assert glassgrad.has_mkl == ("mkl" in blas)
    assert glassgrad.has_openmp is False and glassgrad.compiled_with_cxx11_abi() is False
