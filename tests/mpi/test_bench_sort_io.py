"""``pgas bench sort``, ``pgas bench io`` and ``pgas bench redist`` at tiny sizes: they run, verify and write JSON
(no timing is asserted)."""

import json

import pgas as pg
from pgas import comm
from pgas.tools.bench import iobench, sortbench
from util import collective_verdict


def test_sort_bench_tiny(tmp_path):
    path = comm.bcast(str(tmp_path / "sort.json"), 0)
    status = sortbench.main(["--keys", "1000,3000", "--trials", "1", "--warmup", "0", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        data = json.load(open(path))
        assert data["verified"] and [r["keys_per_locale"] for r in data["sizes"]] == [1000, 3000]
        assert all(r["mkeys_per_s"] > 0 and r["np_sort_mkeys_per_s"] > 0 for r in data["sizes"])


def test_io_bench_tiny(tmp_path):
    d = comm.bcast(str(tmp_path), 0)
    status = iobench.main(["--mb", "0.05", "--trials", "1", "--warmup", "0", "--dir", d, "--out", d + "/io.json"])
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        data = json.load(open(d + "/io.json"))
        assert data["verified"] and data["sizes"][0]["save_gb_per_s"] > 0


def test_redist_bench_tiny(tmp_path):
    from pgas.tools.bench import redist

    path = comm.bcast(str(tmp_path / "redist.json"), 0)
    status = redist.main(["--size", "1001", "--trials", "1", "--warmup", "0", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        data = json.load(open(path))
        assert data["correct"] and len(data["runs"]) == 6
        # both move exactly the elements that change locale
        assert all(r["pgas_bytes"] == r["alltoallw_bytes"] for r in data["runs"])
