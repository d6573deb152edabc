# Two entry points that work on a fresh machine with only Python 3.11+ and make:
#   make demo   installs tablesight into .venv and runs it on the bundled sample
#   make test   installs the development tools into .venv and runs the tests
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck bench clean photoreal-env

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# The learning stack (torch, ultralytics: ~5.5 GB in .venv, a few minutes) for the training smoke test; stops
# first, saying so, when the disk has less than 6 GB free (session 42's CI run ran out of space halfway).
$(VENV)/.train-installed: pyproject.toml | $(VENV)/.installed
	sh scripts/check_disk.sh $(VENV) 6
	$(BIN)/python -m pip install --quiet -e '.[dev,train]'
	touch $@

# Blender's Python (bpy from PyPI, ~400 MB) in its own environment, for the photoreal slice
# (`tablesight render-photoreal`); never needed by the product or the tests.
photoreal-env:
	python3.11 -m venv .venv-bpy
	.venv-bpy/bin/python -m pip install --quiet 'bpy==5.0.1'

demo: $(VENV)/.installed
	$(BIN)/tablesight serve

test: $(VENV)/.installed $(VENV)/.train-installed
	sh scripts/ensure_chromium.sh
	$(BIN)/python -m pytest

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.installed
	$(BIN)/mypy

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_geometry.py
	$(BIN)/python benchmarks/bench_rules.py
	$(BIN)/python benchmarks/bench_calibration.py
	$(BIN)/python benchmarks/bench_live.py
	$(BIN)/python benchmarks/bench_web.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
