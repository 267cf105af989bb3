"""The Jupyter tutorial (docs/tutorials/jupyter.ipynb) runs: nbclient executes it in a fresh
kernel with 2 MPI engines (ipyparallel), every cell within a time limit, and its outputs hold no
error, the printed values of NumPy's computation of the same field, and the plot made on engine 0.

The notebook starts a controller and engines in their own sessions (a signal to the kernel does not
reach them): the kernel, and every process started under it, carries a marker in its environment,
and whatever still carries it after the run, passed or failed, is ended and reported.
The page beside it (docs/tutorials/jupyter.md) shows the notebook's code: each of its Python blocks
is the text of a code cell."""

import json
import os
import re
import signal
import sys
import time
import uuid

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = os.path.join(ROOT, "docs", "tutorials", "jupyter.ipynb")
PAGE = os.path.join(ROOT, "docs", "tutorials", "jupyter.md")
ENGINES_LINE = "engines = 4 "               # the first code cell's engine count, set to 2 here
CELL_TIMEOUT = 180                          # seconds per cell (starting the engines is the longest)
MARKER = "PGAS_NOTEBOOK_TEST"


def code_cells() -> list[str]:
    with open(NOTEBOOK, encoding="utf-8") as f:
        nb = json.load(f)
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_page_shows_the_notebooks_code():
    """Every ``python`` block of the page is (the whole text of) one of the notebook's code cells."""
    with open(PAGE, encoding="utf-8") as f:
        blocks = re.findall(r"^```python\n(.*?)^```$", f.read(), re.S | re.M)
    cells = {c.strip() for c in code_cells()}
    assert blocks, "docs/tutorials/jupyter.md shows no code"
    stale = [b for b in blocks if b.strip() not in cells]
    assert not stale, "blocks of jupyter.md that are no cell of jupyter.ipynb:\n\n" + "\n---\n".join(stale)


def heat() -> np.ndarray:
    """The notebook's field, in NumPy (its sizes: 64 x 64, 100 steps, alpha 0.2)."""
    n, steps, alpha = 64, 100, 0.2
    G = np.zeros((n, n))
    G[n // 4: n // 2, n // 4: n // 2] = 100.0
    for _ in range(steps):
        H = G.copy()
        H[1:-1, 1:-1] = G[1:-1, 1:-1] + alpha * (
            G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:] - 4 * G[1:-1, 1:-1])
        G = H
    return G


def _marked(marker: str) -> list:
    """The live processes whose environment carries ``MARKER=marker``."""
    import psutil

    out = []
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.environ().get(MARKER) == marker and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except (psutil.Error, OSError):
            continue
    return out


def _end_marked(marker: str, grace: float = 15.0) -> list[str]:
    """Wait up to ``grace`` seconds for the marked processes to end (ipyparallel's engine nannies
    notice their engine's end within a few seconds), then kill those left; their command lines."""
    deadline = time.monotonic() + grace
    left = _marked(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = _marked(marker)
    names = []
    for p in left:
        try:
            names.append(" ".join(p.cmdline()))
            p.send_signal(signal.SIGKILL)
        except (OSError, Exception):  # noqa: BLE001 - it ended meanwhile
            pass
    return names


def _kernel_spec(data_dir: str) -> None:
    """A ``python3`` kernel running this Python, in a Jupyter data folder of the test's own (so
    that no kernel a user or the system installed is picked instead)."""
    folder = os.path.join(data_dir, "kernels", "python3")
    os.makedirs(folder)
    with open(os.path.join(folder, "kernel.json"), "w") as f:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "Python 3 (pgas test)", "language": "python"}, f)


def test_notebook_runs_on_two_engines(tmp_path):
    reason = "the notebook needs ipyparallel, ipykernel and nbclient: pip install -e '.[test]' (or '.[notebook]')"
    for module in ("ipyparallel", "ipykernel", "nbclient", "nbformat", "psutil", "matplotlib"):
        pytest.importorskip(module, reason=reason)
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert ENGINES_LINE in first.source, f"the notebook's first code cell lost its line {ENGINES_LINE!r}"
    first.source = first.source.replace(ENGINES_LINE, "engines = 2 ")

    marker = uuid.uuid4().hex
    data_dir = str(tmp_path / "jupyter")
    _kernel_spec(data_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PGAS_JOB_DIR", "MPLBACKEND")}
    env.update({MARKER: marker, "JUPYTER_DATA_DIR": data_dir, "IPYTHONDIR": str(tmp_path / "ipython"),
                "PYTHONPATH": os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)})
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", startup_timeout=120,
                            resources={"metadata": {"path": str(tmp_path)}})
    try:
        client.execute(env=env)
    finally:
        left = _end_marked(marker)
    assert not left, "processes the notebook left running (now killed):\n" + "\n".join(left)

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, f"error outputs: {errors}"
    # what the kernel printed, and the engines' printed lines (display data "[stdout:k] ...")
    text = "".join(o.get("text", "") if o.output_type == "stream" else o.get("data", {}).get("text/plain", "")
                   for o in outputs)
    assert "2 engines, ids [0, 1]" in text, text
    for k in (0, 1):
        assert f"locale {k} of 2" in text, text
    G = heat()
    sums = re.findall(r"total heat (\d+\.\d+), hottest (\d+\.\d+)", text)    # printed to 6 decimals
    assert len(sums) == 3, text                               # each engine's line and NumPy's
    for total, hottest in sums:
        assert abs(float(total) - G.sum()) <= 1e-6 and abs(float(hottest) - G.max()) <= 1e-6, (total, hottest)
    assert "largest difference from NumPy: 0" in text, text
    plots = [o for o in outputs if o.output_type in ("display_data", "execute_result") and "image/png" in o.get("data", {})]
    assert len(plots) == 1, f"expected one plot, from engine 0: {[o.output_type for o in outputs]}"
    assert plots[0].get("metadata", {}).get("engine") == 0, plots[0].get("metadata")
