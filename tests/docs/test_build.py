"""The documentation site builds with warnings as errors (broken links, missing
includes, docstrings the API reference cannot render, a failing example output)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_docs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs tools are in the test extra: pip install -e '.[test]'")
    pytest.importorskip("mkdocstrings")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"mkdocs build failed:\n{done.stdout}\n{done.stderr}"
    api = (site / "api.html").read_text(encoding="utf-8")
    for text in ["forall", "from_numpy", "comm_diagnostics", "owned", "loop variable may also be used as a value"]:
        assert text in api, f"the API reference lacks {text!r}"
    planner = (site / "planner.html").read_text(encoding="utf-8")
    assert "$ python docs/examples/explain_stencil.py" in planner and "pieces, owning access" in planner
