# Two commands on a fresh machine (each creates .venv and installs when needed):
#   make figures   quick reproduction of every registered experiment into figures/
#   make test      ruff + the default test suite (< 10 min on 2 cores)
# Also: make test-slow (paper-scale checks), make test-gpu (CUDA tests), make bench, make full.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
JOBS   ?= 2

.PHONY: figures full test test-slow test-gpu bench lint venv clean

venv: $(STAMP)

# Reinstall when the dependency list or the torch pin changes. torch is pinned to the CPU
# wheel by constraints.txt: an unpinned torch pulls several GB of CUDA packages.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[nn,dist,dev]" -c constraints.txt
	@touch $(STAMP)

figures: $(STAMP)
	$(BIN)/lds-toolkit reproduce all --quick --out figures --jobs $(JOBS)
	$(BIN)/lds-toolkit report --out figures

full: $(STAMP)
	$(BIN)/lds-toolkit reproduce all --out figures-full --jobs $(JOBS)
	$(BIN)/lds-toolkit report --out figures-full

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

test-gpu: $(STAMP)
	$(BIN)/python -m pytest -q -m gpu

bench: $(STAMP)
	@for f in benchmarks/[a-z]*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache figures/*/ build *.egg-info
