"""``benchmarks/median.py`` runs at a tiny size under ``pgas run`` at 2 locales and finds NumPy's
median and quantiles (what it reports that does not depend on time)."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_median_benchmark_runs_and_matches_numpy(tmp_path):
    out = tmp_path / "median.json"
    cmd = [sys.executable, "-m", "pgas.tools.cli", "run", "-n", "2", "--timeout", "120",
           str(ROOT / "benchmarks" / "median.py"), "--n", "5001", "--reps", "2", "--json", str(out)]
    res = subprocess.run(cmd, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                         text=True, timeout=180)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    got = json.loads(out.read_text())
    assert got["locales"] == 2 and got["n"] == 5001 and got["equal_to_numpy"] is True
    assert all(got[k] > 0 for k in ("pgas_median_s", "numpy_median_s", "median_ratio", "quantile9_ratio"))
