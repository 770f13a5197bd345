# The single entry point for people and CI. `make run` and `make test` work on a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
STAMP := $(VENV)/.installed

.PHONY: install run test lint format migrate bench bench-quick bench-install clean

RUN_STAMP := $(VENV)/.installed-run

install: $(STAMP)

# uv is installed into the venv from PyPI, then builds the locked environment: the
# service's packages and the dev group (tests, lint). `make run` needs only the first.
$(STAMP): pyproject.toml uv.lock
	@test -x $(UV) || { $(PYTHON) -m venv $(VENV) && $(BIN)/pip install --quiet --disable-pip-version-check 'uv==0.13.9'; }
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --frozen --python $(BIN)/python
	@touch $@ $(RUN_STAMP)

# The service's own packages only (no pytest, mypy, schemathesis or docker); --inexact
# leaves the dev group in place when `make install` put it there.
$(RUN_STAMP): pyproject.toml uv.lock
	@test -x $(UV) || { $(PYTHON) -m venv $(VENV) && $(BIN)/pip install --quiet --disable-pip-version-check 'uv==0.13.9'; }
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --frozen --no-dev --inexact --python $(BIN)/python
	@touch $@

run: $(RUN_STAMP)
	$(BIN)/leadmail migrate
	$(BIN)/leadmail serve

migrate: $(RUN_STAMP)
	$(BIN)/leadmail migrate

# The Redis tests (the rate limiter's) use this server, each under keys of its own; when
# none answers there they skip (with CI=true they fail). Set it empty to skip them.
# The suite runs on every core (pytest-xdist; each worker has its own databases and Redis
# keys). PYTEST_WORKERS=0 runs it in this one process.
PYTEST_WORKERS ?= auto
test: export LEADMAIL_TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
test: install
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist worksteal

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff check --fix src tests bench
	$(BIN)/ruff format src tests bench

# The benchmark (bench/README.md; not run in CI): the bench dependency group, and wrk and
# valgrind from Debian when missing. `make bench BENCH_ARGS="--only 3,8"` passes options on.
BENCH_STAMP := $(VENV)/.bench-installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(BENCH_STAMP): $(STAMP)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --frozen --group bench --python $(BIN)/python
	@touch $@

bench-install: $(BENCH_STAMP)
	@command -v wrk >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq wrk; }
	@command -v valgrind >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq valgrind; }

bench: bench-install
	$(BIN)/python -m bench.run $(BENCH_ARGS)

bench-quick: bench-install
	$(BIN)/python -m bench.run --quick $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache leadmail.db leadmail.db-wal leadmail.db-shm
