# The two commands of the README. Both create (or reuse) .venv and install what they need,
# pinned by constraints.txt (tested versions; regenerate with `make lock`).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF

.PHONY: demo test lint typecheck unit integration bench clean lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip setuptools wheel

## Install groundtrace with the local LLM and run the demo end to end (no network, no API key).
demo: $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e '.[llm,plots]'
	$(BIN)/groundtrace demo $(DEMO_ARGS)

## Install everything and run every test tier: lint, types, unit, integration (real servers, real LLM).
test: $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,llm,phoenix,plots]'
	$(MAKE) lint typecheck
	$(BIN)/python -m pytest -q -ra

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy -p groundtrace.sdk -p groundtrace.collectors -p groundtrace.analyzer

unit:
	$(BIN)/python -m pytest -q -m "not integration"

integration:
	$(BIN)/python -m pytest -q -m integration

bench:
	$(BIN)/python benchmarks/sdk_overhead.py
	$(BIN)/python benchmarks/ingest.py
	$(BIN)/python benchmarks/analyzer_stats.py

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache

## Refresh constraints.txt from the current environment (after changing dependencies).
lock:
	$(BIN)/pip freeze --exclude-editable | grep -v '^groundtrace' > constraints.txt
