PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: play test lint bench fuzz clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

play: $(STAMP)
	$(BIN)/thousand play

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check core bot adapters tests bench
	$(BIN)/ruff format --check core bot adapters tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/engine.py

fuzz: $(STAMP)
	$(BIN)/python bench/fuzz.py --deals 1000000

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
