VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: test demo bench clean

$(VENV)/.test-installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[test]"
	touch $@

$(VENV)/.examples-installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[examples]"
	touch $@

test: $(VENV)/.test-installed
	$(PY) -m pytest

# NOTE [OpenBLAS kernels]: on an AMD CPU with AVX-512 (Zen 4 and later) OpenBLAS runs its
# AVX-512 (SkylakeX) kernels, measured 6-15% slower on every GEMM shape tried here than its Zen
# (AVX2) ones, which it reports as Haswell: (128, 784) @ (784, 256) 0.58 -> 0.49 ms, 1024^3
# 21.2 -> 20.0 ms, one thread.
# OPENBLAS_CORETYPE is read when NumPy loads OpenBLAS (it tunes NumPy's BLAS only: torch links
# MKL and oneDNN); one set by the caller wins.
BLAS_CORE := $(shell grep -qs AuthenticAMD /proc/cpuinfo && grep -qs avx512f /proc/cpuinfo && echo Zen)
BLAS_ENV := $(if $(OPENBLAS_CORETYPE),,$(if $(BLAS_CORE),OPENBLAS_CORETYPE=$(BLAS_CORE)))

# NOTE: one BLAS thread: the demo's matrices are small, and two OpenBLAS threads on a busy
# 2-core machine made it ~10x slower (measured: 9 min vs 50 s)
demo: $(VENV)/.examples-installed
	OPENBLAS_NUM_THREADS=1 $(BLAS_ENV) $(PY) examples/gan.py

# BENCH_ARGS: e.g. "--threads 1", "--only chain,mlp", "--json bench.json" (python benchmarks/run.py -h)
bench: $(VENV)/.test-installed
	$(BLAS_ENV) $(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) runs
