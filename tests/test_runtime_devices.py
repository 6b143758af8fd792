"""torch.accelerator, torch.cuda, torch.mps, torch.xpu and torch.backends as PyTorch's CPU build
answers them, probe by probe on both libraries (tests/runtime_probe.py)."""

from __future__ import annotations

import importlib

import pytest
import torch

import glassgrad
from tests.runtime_probe import outcome, same_outcome

ACCELERATOR = [
    "accelerator.is_available()",
    "accelerator.current_accelerator()",
    "accelerator.current_accelerator(check_available=True)",
    "accelerator.device_count()",
    "accelerator.current_device_index()",
    "accelerator.current_device_idx()",
    "accelerator.set_device_index(0)",
    "accelerator.set_device_idx(0)",
    "accelerator.synchronize()",
    "accelerator.current_stream()",
    "accelerator.get_device_capability()",
    "accelerator.get_memory_info()",
    "accelerator.memory_allocated()",
    "accelerator.max_memory_allocated()",
    "accelerator.memory_reserved()",
    "accelerator.max_memory_reserved()",
    "accelerator.memory_stats()",
    "accelerator.reset_peak_memory_stats()",
    "accelerator.reset_accumulated_memory_stats()",
    "accelerator.empty_cache()",
    "accelerator.empty_host_cache()",
    "accelerator.device_index(0).__enter__()",
    "accelerator.device_index(None).__enter__()",
]

CUDA = [
    "cuda.is_available()",
    "cuda.device_count()",
    "cuda.is_initialized()",
    "cuda._is_compiled()",
    "cuda.manual_seed(1)",
    "cuda.manual_seed_all(1)",
    "cuda.manual_seed(1.5)",
    "cuda.manual_seed('a')",
    "cuda.seed()",
    "cuda.seed_all()",
    "cuda.initial_seed()",
    "cuda.init()",
    "cuda.get_rng_state()",
    "cuda.get_rng_state_all()",
    "cuda.set_rng_state_all([])",
    "cuda.synchronize()",
    "cuda.current_device()",
    "cuda.set_device(-1)",
    "cuda.set_device('cpu')",
    "cuda.get_device_name()",
    "cuda.get_device_name(0)",
    "cuda.get_device_properties(0)",
    "cuda.get_device_capability()",
    "cuda.mem_get_info()",
    "cuda.current_stream()",
    "cuda.default_stream()",
    "cuda.ipc_collect()",
    "cuda.is_bf16_supported()",
    "cuda.is_bf16_supported(including_emulation=False)",
    "cuda.is_tf32_supported()",
    "cuda.get_arch_list()",
    "cuda.get_gencode_flags()",
    "cuda.device(0).__enter__()",
    "cuda.device(-1).__enter__()",
    "cuda.device('cpu')",
    "cuda.device_of(t.zeros(1)).__enter__()",
    "cuda.stream(None).__enter__() is not None",
    "cuda.Stream()",
    "cuda.Event()",
    "cuda.Event(enable_timing=True)",
]

MPS = [
    "mps.is_available()",
    "mps.device_count()",
    "mps.manual_seed(1)",
    "mps.seed()",
    "mps.get_rng_state()",
    "mps.synchronize()",
    "mps.empty_cache()",
    "mps.current_allocated_memory()",
    "mps.driver_allocated_memory()",
    "mps.recommended_max_memory()",
    "mps.set_per_process_memory_fraction(0.5)",
]

XPU = [
    "xpu.is_available()",
    "xpu.device_count()",
    "xpu.is_initialized()",
    "xpu._is_compiled()",
    "xpu.manual_seed(1)",
    "xpu.manual_seed_all(1)",
    "xpu.manual_seed('a')",
    "xpu.seed()",
    "xpu.seed_all()",
    "xpu.is_bf16_supported()",
    "xpu.empty_cache()",
    "xpu.memory_allocated()",
    "xpu.synchronize()",
    "xpu.current_device()",
    "xpu.set_device(0)",
    "xpu.set_device(-1)",
    "xpu.get_device_name()",
    "xpu.get_device_properties()",
    "xpu.initial_seed()",
]

BACKENDS = [
    "backends.cudnn.benchmark",
    "backends.cudnn.deterministic",
    "backends.cudnn.enabled",
    "backends.cudnn.allow_tf32",
    "backends.cudnn.benchmark_limit",
    "backends.cudnn.fp32_precision",
    "backends.cudnn.is_available()",
    "backends.cudnn.version()",
    "backends.cudnn.is_acceptable(t.zeros(1))",
    "backends.cuda.is_built()",
    "backends.cuda.matmul.allow_tf32",
    "backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    "backends.cuda.matmul.fp32_precision",
    "backends.cuda.matmul.no_such_flag",
    "backends.cuda.flash_sdp_enabled()",
    "backends.cuda.mem_efficient_sdp_enabled()",
    "backends.cuda.math_sdp_enabled()",
    "backends.cuda.cudnn_sdp_enabled()",
    "backends.mps.is_available()",
    "backends.mps.is_built()",
    "backends.mkldnn.enabled",
]


@pytest.mark.parametrize("expr", ACCELERATOR + CUDA + MPS + XPU + BACKENDS)
def test_device_module_answers_as_torch_cpu(expr):
    same_outcome(lambda t: eval("t." + expr, {"t": t}))


@pytest.mark.parametrize("name", ["cudnn", "cuda", "mps", "mkldnn", "mkl", "openmp", "cpu"])
def test_backends_are_importable_modules(name):
    """``import torch.backends.cudnn as cudnn`` needs a real submodule."""
    module = importlib.import_module(f"glassgrad.backends.{name}")
    assert module is getattr(glassgrad.backends, name)


@pytest.fixture
def restore_flags():
    saved = [(lib, lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic,
              lib.backends.cudnn.enabled, lib.backends.cudnn.allow_tf32,
              lib.get_float32_matmul_precision(), lib.backends.mkldnn.enabled)
             for lib in (torch, glassgrad)]
    yield
    for lib, bench, det, enabled, tf32, precision, mkldnn in saved:
        lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic = bench, det
        lib.backends.cudnn.enabled, lib.backends.cudnn.allow_tf32 = enabled, tf32
        lib.set_float32_matmul_precision(precision)
        lib.backends.mkldnn.enabled = mkldnn


SETTINGS = [
    ("cudnn", "benchmark", True), ("cudnn", "deterministic", True), ("cudnn", "enabled", False),
    ("cudnn", "allow_tf32", False), ("mkldnn", "enabled", False),
    ("cudnn", "benchmark", 1), ("cudnn", "deterministic", 1), ("cudnn", "enabled", "yes"),
    ("cudnn", "allow_tf32", 0), ("mkldnn", "enabled", 1),
]


@pytest.mark.parametrize("module, flag, value", SETTINGS)
def test_backend_flags_keep_their_value_and_reject_non_bools(restore_flags, module, flag, value):
    def probe(t):
        setattr(getattr(t.backends, module), flag, value)
        return getattr(getattr(t.backends, module), flag)

    same_outcome(probe)


@pytest.mark.parametrize("value", [True, False, 1, "x"])
def test_matmul_allow_tf32_follows_float32_matmul_precision(restore_flags, value):
    def probe(t):
        t.backends.cuda.matmul.allow_tf32 = value
        return t.get_float32_matmul_precision(), t.backends.cuda.matmul.allow_tf32

    same_outcome(probe)


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_float32_matmul_precision_sets_allow_tf32(restore_flags, precision):
    def probe(t):
        t.set_float32_matmul_precision(precision)
        return (t.backends.cuda.matmul.allow_tf32, t.backends.cuda.matmul.fp32_precision)

    same_outcome(probe)


@pytest.mark.parametrize("value", [False, 1])
def test_reduced_precision_reduction_flag(value):
    def probe(t):
        matmul = t.backends.cuda.matmul
        matmul.allow_fp16_reduced_precision_reduction = value
        try:
            return matmul.allow_fp16_reduced_precision_reduction
        finally:
            matmul.allow_fp16_reduced_precision_reduction = True

    same_outcome(probe)


def test_cudnn_flags_context_restores(restore_flags):
    def probe(t):
        with t.backends.cudnn.flags(enabled=False, benchmark=True):
            inside = (t.backends.cudnn.enabled, t.backends.cudnn.benchmark)
        return inside, (t.backends.cudnn.enabled, t.backends.cudnn.benchmark)

    same_outcome(probe)


def test_sdp_switches_and_deprecated_context():
    def probe(t):
        with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"):
            with t.backends.cuda.sdp_kernel(enable_flash=False):
                inside = t.backends.cuda.flash_sdp_enabled()
        t.backends.cuda.enable_math_sdp(False)
        off = t.backends.cuda.math_sdp_enabled()
        t.backends.cuda.enable_math_sdp(True)
        return inside, t.backends.cuda.flash_sdp_enabled(), off

    assert outcome(probe, glassgrad) == outcome(probe, torch) == ("returns", (False, True, False))


def test_cpu_capability_matches_torch_on_this_machine():
    """Both read the CPU's features; on AVX2 machines both say "AVX2". ATEN_CPU_CAPABILITY can
    lower torch's answer, so the comparison holds only without it."""
    import os
    import platform

    if os.environ.get("ATEN_CPU_CAPABILITY"):
        pytest.skip("ATEN_CPU_CAPABILITY overrides torch's detection")
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("off x86 torch names SVE/VSX levels that glassgrad reports as DEFAULT")
    same_outcome(lambda t: t.backends.cpu.get_cpu_capability())


def test_mkl_and_openmp_report_numpys_blas():
    """glassgrad answers for the libraries its kernels call (NumPy's BLAS), which torch cannot;
    the oracle is threadpoolctl's report on the same process."""
    from threadpoolctl import threadpool_info

    pools = threadpool_info()
    assert glassgrad.backends.mkl.is_available() == any(
        p["internal_api"] == "mkl" for p in pools)
    assert glassgrad.backends.openmp.is_available() == any(
        p["user_api"] == "openmp" for p in pools)
    assert glassgrad.backends.mkldnn.is_available() is False  # glassgrad runs no oneDNN kernel


def test_program_device_selection_lines_run():
    """The lines programs start with pick the CPU on both libraries."""
    def probe(t):
        use_accel = t.accelerator.is_available()
        device = t.accelerator.current_accelerator() if use_accel else t.device("cpu")
        t.cuda.manual_seed_all(0)
        t.backends.cudnn.benchmark = False
        return str(device), str(t.device("cuda" if t.cuda.is_available() else "cpu"))

    same_outcome(probe)
