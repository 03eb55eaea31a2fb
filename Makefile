# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STORE ?= $(HOME)/store

.PHONY: run test lint typecheck bench clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,interop]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/rocketq server --store $(STORE)

test: lint
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/store_bench.py --seconds 3
	$(BIN)/python bench/broker_bench.py
	$(BIN)/python bench/client_bench.py --count 8000 --size 256
	$(BIN)/python bench/ha_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
