# Two commands for a fresh machine:
#   make lab    set up .venv and open JupyterLab on examples/quickstart.ipynb (offline index without a key)
#   make test   set up .venv (with test extras and Chromium) and run lint and the whole test suite
# Also: make bench (benchmarks into bench/results/), make clean.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: lab test bench lint browser clean

$(VENV)/.lab-installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[lab,server]'
	touch $@

$(VENV)/.test-installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test,bench]'
	touch $@ $(VENV)/.lab-installed

# Extra JupyterLab options, e.g. `make lab LAB_ARGS="--no-browser --port 8899"`. The venv's bin goes first
# on PATH so that `!devknow` in the notebooks finds the command; with no key the offline index is used.
LAB_ARGS ?=
lab: $(VENV)/.lab-installed
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) \
	  $(LAB_ARGS) examples/quickstart.ipynb

# Debian's Chromium for the browser test (Playwright drives it; its own browser download is not used).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	  else echo "Chromium is missing: install Debian's chromium package to run the browser test"; fi; }

lint: $(VENV)/.test-installed
	$(PY) -m ruff check devknow_jupyter tests bench scripts

test: $(VENV)/.test-installed browser lint
	$(PY) -m pytest

bench: $(VENV)/.test-installed
	$(PY) -m bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache bench/results test-artifacts
