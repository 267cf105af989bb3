"""STREAM at a tiny size: kernels, sampled verification and the C reference run and agree."""

import json

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench import stream
from util import collective_verdict


def test_stream_tiny_run_verifies(tmp_path):
    path = comm.bcast(str(tmp_path / "stream.json"), 0)
    status = stream.main(["--n", "5000", "--trials", "2", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        data = json.load(open(path))
        assert data["verification"]["verified"] and data["verification"]["sampled_reads"] == 3 * pg.num_locales ** 2
        assert set(data["gb_per_s"]) == set(stream.KERNELS)
        if data["c_reference"] is not None:
            assert data["c_reference"]["errors"] == 0 and len(data["c_reference"]["per_process"]) == pg.num_locales


def test_strip_mined_triad_and_verification_catch_errors():
    n = 3 * stream.STRIP // 2 + 7                          # several strips, a ragged last one
    A, B, C = (pg.full(n * pg.num_locales, v, dist=pg.Block()) for v in (0.0, 2.0, 5.0))
    stream.triad(A, B, C, 3.0, np.empty(stream.STRIP))
    collective_verdict(np.all(A.local == 17.0), "triad")
    collective_verdict(stream.verify((A, B, C), (17.0, 2.0, 5.0), 4)["verified"], "verify rejects good data")
    if pg.here == pg.num_locales - 1:
        B.local[-1] = 0.0
    collective_verdict(not stream.verify((A, B, C), (17.0, 2.0, 5.0), 4)["verified"], "verify missed an error")


def test_expected_values_follow_the_recurrence():
    assert stream.expected(0) == (1.0, 2.0, 0.0)
    a, b, c = stream.expected(1)
    assert (c, b, a) == (4.0, 3.0, 3.0 + 3.0 * 4.0)
