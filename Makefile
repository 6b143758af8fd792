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

# NOTE: one BLAS thread: the demo's matrices are small, and two OpenBLAS threads on a busy
# 2-core machine made it ~10x slower (measured: 9 min vs 50 s)
demo: $(VENV)/.examples-installed
	OPENBLAS_NUM_THREADS=1 $(PY) examples/gan.py

# BENCH_ARGS: e.g. "--threads 1", "--only chain,mlp", "--json bench.json" (python benchmarks/run.py -h)
bench: $(VENV)/.test-installed
	$(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) runs
