# The single entry point for people and CI. `make run` and `make test` work on a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
STAMP := $(VENV)/.installed

.PHONY: install run test lint format migrate bench bench-quick clean

install: $(STAMP)

# uv is installed into the venv from PyPI, then builds the locked environment.
$(STAMP): pyproject.toml uv.lock
	@test -x $(UV) || { $(PYTHON) -m venv $(VENV) && $(BIN)/pip install --quiet --disable-pip-version-check 'uv==0.13.9'; }
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --frozen --python $(BIN)/python
	@touch $@

run: install
	$(BIN)/leadmail migrate
	$(BIN)/leadmail serve

migrate: install
	$(BIN)/leadmail migrate

test: install
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff check --fix src tests
	$(BIN)/ruff format src tests

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache leadmail.db leadmail.db-wal leadmail.db-shm
