# Two commands on a fresh machine (each creates .venv and installs what it needs):
#   make figures   quick reproduction of every registered experiment into figures/; installs
#                  only the package and torch (the nn extra)
#   make test      ruff, mypy and the default test suite; adds the test, type-check and docs
#                  tools (the dev, dist and docs extras)
# On Linux without an NVIDIA GPU, take torch's CPU wheel (PyPI's Linux wheel is the CUDA build,
# several GB):  make figures TORCH_INDEX=https://download.pytorch.org/whl/cpu
# Also: make test-slow (paper-scale checks), make test-gpu (CUDA tests), make bench,
#   make medium (every experiment at the medium scale: CPU evidence; the committed runs'
#   times are in docs/running.md), make full (paper scale), make docs (the site, strict), make docs-check
#   (it in headless Chromium), make results.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# what reproducing needs (core + nn) / what developing needs on top (dist, dev, docs)
STAMP  := $(VENV)/.installed-run
DEV    := $(VENV)/.installed-dev
JOBS   ?= 2
# pytest-xdist workers for make test (each test module stays on one worker: --dist loadfile)
TEST_JOBS ?= 2
# PyTorch's wheel index for torch alone, e.g. https://download.pytorch.org/whl/cpu (empty: the
# default index)
TORCH_INDEX ?=
PIP := $(BIN)/python -m pip install --disable-pip-version-check --progress-bar on

.PHONY: figures medium full test test-slow test-gpu bench lint typecheck docs docs-instructor docs-check lessons results venv clean

venv: $(DEV)

# Reinstall when the dependency list or the torch pin changes. constraints.txt pins torch's
# version (it installs nothing by itself); TORCH_INDEX picks where its wheel comes from.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "== installing lds_toolkit and torch (the nn extra) into $(VENV)"
	$(if $(TORCH_INDEX),$(PIP) torch -c constraints.txt --index-url $(TORCH_INDEX))
	$(PIP) -e ".[nn]" -c constraints.txt
	@touch $(STAMP)

$(DEV): $(STAMP)
	@echo "== adding the test, type-check and docs tools (dev, dist, docs extras) to $(VENV)"
	$(PIP) -e ".[nn,dist,dev,docs]" -c constraints.txt
	@touch $(DEV)

figures: $(STAMP)
	$(BIN)/lds-toolkit reproduce all --quick --out figures --jobs $(JOBS)
	$(BIN)/lds-toolkit report --out figures

medium: $(STAMP)
	$(BIN)/lds-toolkit reproduce all --scale medium --out figures-medium --jobs $(JOBS)
	$(BIN)/lds-toolkit report --out figures-medium

full: $(STAMP)
	$(BIN)/lds-toolkit reproduce all --out figures-full --jobs $(JOBS)
	$(BIN)/lds-toolkit report --out figures-full

lint: $(DEV)
	$(BIN)/ruff check .

typecheck: $(DEV)
	$(BIN)/mypy

test: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile

# The site in strict mode (broken links or references, a failing tutorial: error). The
# tutorials are executed (full size; cached in .cache/docs-tutorials/ until they or the
# package change). The test suite builds it without executing them (tests/test_docs_site.py).
docs: $(DEV)
	$(BIN)/mkdocs build --strict

# The instructor's site in site-instructor/ (never publish it): each lesson's solution folded
# under its exercise, the solution notebooks, instructor slides, autograder archives, sources.
docs-instructor: $(DEV)
	LDS_DOCS_INSTRUCTOR=1 $(BIN)/mkdocs build --strict --site-dir site-instructor

# Read every page for raw math and code-block equations, then serve site/ on localhost and
# load pages in headless Chromium (Debian's package: apt-get install chromium); fail on console
# errors, missing images or unrendered equations; screenshots in docs-check/. Then run lesson 1
# in a live JupyterLab and move its slider (docs/_site/lab_slider_check.py).
docs-check: docs
	@test -x $(BIN)/playwright -a -x $(BIN)/jupyter-lab || $(PIP) -e ".[browser]"
	$(BIN)/python docs/_site/check_site.py --site site --out docs-check
	$(BIN)/python docs/_site/lab_slider_check.py --lesson 01_memory_and_regions --out docs-check

# The student build (handout/student/: notebooks, slides, data; no solution) and the
# instructor bundle (handout/instructor/: solutions, slides, answer keys, otter autograder
# archives with hidden weighted tests) of every lesson (docs/lessons/index.md)
lessons: $(DEV)
	$(BIN)/python docs/_site/lessons.py --out handout

# Copy the runs under FROM (default figures/) into docs/results/ and regenerate the
# reproduction table of docs/index.md, e.g. make results FROM="figures figures-full"
FROM ?= figures
results: $(STAMP)
	$(BIN)/python docs/build_results.py $(addprefix --from ,$(FROM))

test-slow: $(DEV)
	$(BIN)/python -m pytest -q -m slow

test-gpu: $(DEV)
	$(BIN)/python -m pytest -q -m gpu

# One table (ours vs each anchor, the training roofline, cost growth) into docs/benchmarks.md
# and docs/img/benchmarks/; run it on an idle machine (it prints the load). The single
# scripts in benchmarks/ still run on their own.
bench: $(DEV)
	$(BIN)/python benchmarks/bench_table.py --write-docs

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache figures/*/ build *.egg-info site docs-check handout
