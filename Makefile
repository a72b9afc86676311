# The two commands of the README. Both create (or reuse) .venv and install what they need,
# pinned by constraints.txt (tested versions; regenerate with `make lock`).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Arize Phoenix (a real OTLP receiver for the integration tests) pins OpenTelemetry versions that
# conflict with other instrumentations the tests use, so it runs from its own environment.
PHOENIX_VENV ?= .venv-phoenix
export GROUNDTRACE_PHOENIX_PYTHON := $(abspath $(PHOENIX_VENV))/bin/python
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF

.PHONY: demo test lint typecheck unit integration bench clean lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip setuptools wheel

$(PHOENIX_VENV)/.installed: constraints-phoenix.txt
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install -q -c constraints-phoenix.txt arize-phoenix
	touch $@

## Install groundtrace with the local LLM and run the demo end to end (no network, no API key).
demo: $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e '.[llm,plots]'
	$(BIN)/groundtrace demo $(DEMO_ARGS)

## Install everything and run every test tier: lint, types, unit, integration (real servers, real LLM).
test: $(BIN)/python $(PHOENIX_VENV)/.installed
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,llm,plots]'
	$(MAKE) lint typecheck
	$(BIN)/python -m pytest -q -ra

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy -p groundtrace.sdk -p groundtrace.collectors -p groundtrace.analyzer \
		-p groundtrace.examples

unit:
	$(BIN)/python -m pytest -q -m "not integration"

integration:
	$(BIN)/python -m pytest -q -m integration

bench:
	$(BIN)/python -m benchmarks.sdk_overhead
	$(BIN)/python benchmarks/ingest.py
	$(BIN)/python benchmarks/analyzer_stats.py
	unshare -n sh -c 'ip link set lo up && $(BIN)/python -m benchmarks.scale_out'

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache

## Refresh constraints.txt from the current environment (after changing dependencies).
lock:
	uv pip compile pyproject.toml --extra dev --extra llm --extra plots -o constraints.txt --no-header --no-annotate
	echo arize-phoenix | uv pip compile - -o constraints-phoenix.txt --no-header --no-annotate
