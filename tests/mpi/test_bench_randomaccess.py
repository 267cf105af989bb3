"""RandomAccess at a tiny size: every variant runs and verifies; the verification catches errors."""

import json

import numpy as np
from util import collective_verdict

import pgas as pg
from pgas import comm
from pgas.array.core import DistArray
from pgas.tools.bench import randomaccess as ra


def test_randomaccess_tiny_run_verifies(tmp_path):
    path = comm.bcast(str(tmp_path / "ra.json"), 0)
    status = ra.main(["--log2-table", "6", "--variants", "update_one,aggregated", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        data = json.load(open(path))
        assert data["updates"] == 4 * data["table_words"]
        assert set(data["best"]) == {"update_one", "aggregated"}
        assert all(m["verified"] and m["errors"] == 0 for m in data["best"].values())


def test_getput_variant_runs_and_reports_its_errors(tmp_path):
    """Unsynchronised get + put may lose updates (more than 1% on a tiny, contended table)."""
    path = comm.bcast(str(tmp_path / "ra.json"), 0)
    ra.main(["--log2-table", "6", "--variants", "getput", "--out", path])
    if pg.here == 0:
        m = json.load(open(path))["best"]["getput"]
        assert m["verified"] == (m["errors"] <= 0.01 * m["updates"] / 4) and m["messages"] >= 0
        if pg.num_locales == 1:
            assert m["errors"] == 0


def test_updates_cover_the_whole_stream_once():
    """Running the updates once changes the table like a serial HPCC run does."""
    from pgas.tools.bench.hpcc_rng import starts, step

    size = ra.table_size(5, pg.num_locales)
    T = ra.make_table(size)
    ra.run_aggregated(T)
    ref = np.arange(size, dtype=np.int64)
    ran = starts([0])
    for _ in range(4 * size):
        ran = step(ran)
        ref[int(ran[0]) & (size - 1)] ^= ran.view(np.int64)[0]
    collective_verdict(np.array_equal(T.to_numpy(), ref), "table differs from a serial run")
    collective_verdict(ra.errors(T) == 0, "re-applying did not restore the table")


def test_verification_counts_corrupted_words():
    T = ra.make_table(ra.table_size(4, pg.num_locales))
    ra.run_aggregated(T)
    if T.local.size:
        T.local[0] += 1
    comm.barrier()
    bad = sum(1 for r in range(pg.num_locales) if T.layout.local_shape(r)[0])
    collective_verdict(ra.errors(T) == bad, "corrupted words not counted")


def test_reapply_in_chunks_restores_the_table(monkeypatch):
    """Verification in several alltoallv chunks (as at large tables), the last one short."""
    monkeypatch.setattr(ra, "REAPPLY_BLOCKS", 3)
    T = ra.make_table(ra.table_size(11, pg.num_locales))          # 8 blocks of 1024 updates per locale
    ra.run_aggregated(T)
    collective_verdict(ra.errors(T) == 0, "chunked re-application did not restore the table")
    ra.run_aggregated(T, ra.WARMUP_BLOCKS // 32)            # a warm-up's partial run changes the table
    collective_verdict(ra.errors(T) > 0, "a partial run went unnoticed")


P = pg.num_locales


# -- benchmark verification ---------------------------------------------------
def test_randomaccess_verification_catches_a_broken_aggregated_update(monkeypatch):
    monkeypatch.setattr(DistArray, "update", lambda self, indices, values, op="add": comm.barrier())
    T = ra.make_table(ra.table_size(5, P))
    m = ra.measure(T, "aggregated")
    collective_verdict(not m["verified"], f"a no-op update() verified with {m['errors']} errors")


def test_randomaccess_verification_catches_a_broken_update_one(monkeypatch):
    monkeypatch.setattr(DistArray, "update_one", lambda self, i, v, op="add": None)
    T = ra.make_table(ra.table_size(5, P))
    m = ra.measure(T, "update_one")
    collective_verdict(not m["verified"], f"a no-op update_one verified with {m['errors']} errors")
