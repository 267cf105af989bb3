"""The fuzzers run under the multi-locale harness of ``tests/mpi`` (``harness.py``), with its
``util.py`` helpers: ``pgas run -n N python -m pytest tests/fuzz`` (``tests/run_mpi.py`` runs them
with ``tests/mpi``)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "mpi"))

from harness import *  # noqa: E402,F401,F403
