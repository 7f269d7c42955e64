# Two commands on a fresh machine (each creates .venv and installs when needed):
#   make figures   quick reproduction of every registered experiment into figures/
#   make test      ruff + the default test suite (< 10 min on 2 cores)
# Also: make test-slow (paper-scale checks), make test-gpu (CUDA tests), make bench,
#   make medium (every experiment at the medium scale: CPU evidence, the neural set 48.5
#   minutes on 2 idle cores of an AVX-512/AMX Xeon, 64-77 on a slower one), make full (paper scale), make docs (the site, strict), make docs-check
#   (it in headless Chromium), make results.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
JOBS   ?= 2

.PHONY: figures medium full test test-slow test-gpu bench lint typecheck docs docs-check results venv clean

venv: $(STAMP)

# Reinstall when the dependency list or the torch pin changes. torch is pinned to the CPU
# wheel by constraints.txt: an unpinned torch pulls several GB of CUDA packages.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[nn,dist,dev,docs]" -c constraints.txt
	@touch $(STAMP)

figures: $(STAMP)
	$(BIN)/lds-toolkit reproduce all --quick --out figures --jobs $(JOBS)
	$(BIN)/lds-toolkit report --out figures

medium: $(STAMP)
	$(BIN)/lds-toolkit reproduce all --scale medium --out figures-medium --jobs $(JOBS)
	$(BIN)/lds-toolkit report --out figures-medium

full: $(STAMP)
	$(BIN)/lds-toolkit reproduce all --out figures-full --jobs $(JOBS)
	$(BIN)/lds-toolkit report --out figures-full

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

# The site in strict mode (broken links or references, a failing tutorial: error). The
# tutorials are executed (full size; cached in .cache/docs-tutorials/ until they or the
# package change). The test suite builds it without executing them (tests/test_docs_site.py).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# Serve site/ on localhost, load pages in headless Chromium (Debian's package: apt-get
# install chromium), fail on console errors or missing images, screenshots in docs-check/.
docs-check: docs
	@test -x $(BIN)/playwright || $(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[browser]"
	$(BIN)/python docs/_site/check_site.py --site site --out docs-check

# Copy the runs under FROM (default figures/) into docs/results/ and regenerate the
# reproduction table of docs/index.md, e.g. make results FROM="figures figures-full"
FROM ?= figures
results: $(STAMP)
	$(BIN)/python docs/build_results.py $(addprefix --from ,$(FROM))

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

test-gpu: $(STAMP)
	$(BIN)/python -m pytest -q -m gpu

# One table (ours vs each anchor, the training roofline, cost growth) into docs/benchmarks.md
# and docs/img/benchmarks/; run it on an idle machine (it prints the load). The single
# scripts in benchmarks/ still run on their own.
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_table.py --write-docs

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache figures/*/ build *.egg-info site docs-check
