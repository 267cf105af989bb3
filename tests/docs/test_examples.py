"""Every program under docs/examples runs under ``pgas run -n 2`` and checks its own
answer against NumPy (it exits non-zero on a mismatch).

The programs whose output a page shows with a ``<!-- output: pgas run -n 2 FILE -->``
marker already run that way in the docs build (test_build.py), so they are not run
twice.  The others start together, each as a separate job (they mostly wait on MPI
start-up), and each test waits for its own.
"""

import glob
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "examples", "*.py")))


def built_at_two() -> set[str]:
    """Examples a page's output marker runs with ``pgas run -n 2`` during the docs build."""
    out = set()
    for page in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True):
        with open(page, encoding="utf-8") as f:
            out.update(re.findall(r"^<!-- output: pgas run -n 2 (\S+\.py) -->$", f.read(), re.M))
    return out


BUILT = built_at_two()
TO_RUN = [p for p in EXAMPLES if p not in BUILT]


def _run(path: str):
    cmd = [sys.executable, "-m", "pgas.tools.cli", "run", "-n", "2", "--timeout", "300", path]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=400)


@pytest.fixture(scope="module")
def runs():
    with ThreadPoolExecutor(max_workers=8) as pool:
        yield {p: pool.submit(_run, p) for p in TO_RUN}


def test_examples_exist():
    assert len(EXAMPLES) >= 10, EXAMPLES
    assert BUILT <= set(EXAMPLES), f"output markers name missing files: {BUILT - set(EXAMPLES)}"


@pytest.mark.parametrize("path", TO_RUN)
def test_example_runs_on_two_locales(path, runs):
    done = runs[path].result()
    assert done.returncode == 0, f"pgas run -n 2 {path} failed:\n{done.stdout}\n{done.stderr}"
