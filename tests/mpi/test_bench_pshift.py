"""``pgas bench pshift`` at tiny sizes: runs, checks its results, one message per pair per pshift."""

import json

from pgas import comm
from pgas.tools.bench import pshift
from util import collective_verdict


def test_pshift_bench_tiny(tmp_path):
    path = comm.bcast(str(tmp_path / "pshift.json"), 0)
    status = pshift.main(["--size", "tiny", "--ranks", "1,2,4", "--trials", "1", "--warmup", "0", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    if comm.here() == 0:
        data = json.load(open(path))
        assert len(data["rows"]) == 6 and all(r["correct"] for r in data["rows"])
        assert all(r["pshift"]["max_per_pair"] <= 1 for r in data["rows"])
        assert all(r["ghosts"]["max_per_pair"] <= 1 for r in data["rows"])
        assert set(data["fits"]) == {"rank1", "rank2", "rank4", "eq1", "eq1_cpu", "eq1_paper"}
        eq1 = data["fits"]["eq1"]["pshift"]            # eq. (1) in full, every rank at once
        assert set(eq1["params"]) == {"T0", "Tmm", "Tmt+Ttm", "Tex"} and eq1["Nsl"] == 2
        assert len(eq1["residuals"]) == 6 and eq1["params"]["T0"] is not None
        assert data["fits"]["eq1_paper"]["rows"] == 27


def test_fit_recovers_a_model():
    rows = [{"rank": 2, "L": L, "cshift": {"seconds": 1e-4 + 2e-6 * L + 3e-8 * L * L}} for L in (2, 4, 8, 16, 32)]
    f = pshift.fit(rows, 2, "cshift")
    assert abs(f["a"] - 1e-4) < 1e-9 and abs(f["b"] - 2e-6) < 1e-10 and f["relative_rms_residual"] < 1e-6
    assert pshift.fit(rows[:2], 2, "cshift") is None
    rows1 = [{"rank": 1, "L": L, "ghosts": {"seconds": 5e-5 + 1e-9 * L}} for L in (4, 64, 1024)]
    f1 = pshift.fit(rows1, 1, "ghosts")
    assert abs(f1["a"] - 5e-5) < 1e-10 and f1["b"] == 0 and abs(f1["c"] - 1e-9) < 1e-13
