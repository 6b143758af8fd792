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

demo: $(VENV)/.examples-installed
	$(PY) examples/gan.py

bench: $(VENV)/.test-installed
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) runs
