# make venv   - create .venv and install pgas (with its MPI: the mpich wheel) and the test tools
# make demo   - run the demo on 4 local locales
# make test   - the whole test suite: pure tests, then tests/mpi on 1, 2, 3 and 4 locales

PYTHON ?= python3
VENV   := .venv
DEMO   ?= examples/jacobi.py

.PHONY: venv demo test

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[test]'
	touch $@

demo: venv
	$(VENV)/bin/pgas run -n 4 $(DEMO)

test: venv
	$(VENV)/bin/python tests/run_mpi.py
