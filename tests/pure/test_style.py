"""The repository passes ruff with the project's settings (``[tool.ruff]`` in pyproject.toml)."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert "No module named ruff" not in out.stderr, "ruff is part of the test extra: pip install -e '.[test]'"
    assert out.returncode == 0, out.stdout + out.stderr
