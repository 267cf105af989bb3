# make venv   - create .venv and install pgas with its runtime only (its MPI: the mpich wheel, NumPy, mpi4py)
# make demo   - run the demo on 4 local locales (needs only `make venv`)
# make test-venv - add the test tools, the docs tools and the optional libraries the suite covers (.[test])
# make test   - the test suite (under 10 minutes): pure tests, faults, the docs, the MPI tests at 1 locale (the
#               fuzzers and NAS kernels at 2) and the locale-count-dependent ones at 2 and 4 (tests/run_mpi.py says which)
# make test-full - the full matrix: every MPI test at 1, 2, 3 and 4 locales, scale tests at 8 and 16 (CI)
# make conformance - regenerate docs/conformance.md (the NumPy conformance table) at 4 locales
# make docs   - build the documentation site into build/docs (MkDocs, warnings are errors)

PYTHON ?= python3
VENV   := .venv
DEMO   ?= examples/jacobi.py

.PHONY: venv test-venv demo test test-full docs conformance

venv: $(VENV)/.installed

test-venv: $(VENV)/.installed-test

$(VENV)/.installed: pyproject.toml
	@echo "Creating $(VENV) and installing pgas with its MPI (the first time takes a while) ..."
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	@echo "Adding the test tools to $(VENV) (the first time takes a while) ..."
	$(VENV)/bin/python -m pip install -e '.[test]'
	touch $@

demo: venv
	$(VENV)/bin/pgas run -n 4 $(DEMO)

test: test-venv
	$(VENV)/bin/python tests/run_mpi.py

test-full: test-venv
	$(VENV)/bin/python tests/run_mpi.py --full

docs: test-venv
	$(VENV)/bin/mkdocs build --strict

conformance: test-venv
	PGAS_CONFORMANCE_TABLE=docs/conformance.md $(VENV)/bin/pgas run -n 4 -m pytest -q tests/mpi/test_conformance.py -k every_ufunc || true
