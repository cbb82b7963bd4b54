# The two commands of the README: `make run` (quick suite, offline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUNS_DIR ?= runs

.PHONY: run test setup setup-dev lint bench clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "forkingpaths needs Python >= 3.11; set PYTHON=python3.11 (or newer)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@ $(VENV)/.installed

setup: $(VENV)/.installed

setup-dev: $(VENV)/.installed-dev

# Quick suite: every benchmark with its reference agents and scripted models; no network, no key.
run: $(VENV)/.installed
	$(BIN)/forkingpaths run --suite quick --runs-dir $(RUNS_DIR)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/pytest

# Performance figures (not tests): see benchmarks/README.md.
bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/bench_harness_overhead.py
	$(BIN)/python benchmarks/bench_concurrency.py
	$(BIN)/python benchmarks/bench_griddag_env_metric.py
	$(BIN)/python benchmarks/bench_eeb_games.py
	$(BIN)/python benchmarks/bench_escape_engine.py
	$(BIN)/python benchmarks/bench_escape_agents.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
