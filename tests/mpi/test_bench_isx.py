"""ISx at a tiny size: both styles sort, count and verify; keys and buckets are right."""

import json

import numpy as np
from util import collective_verdict

import pgas as pg
from pgas import comm
from pgas.array.core import DistArray
from pgas.tools.bench import isx


def test_isx_tiny_run_verifies(tmp_path):
    path = comm.bcast(str(tmp_path / "isx.json"), 0)
    status = isx.main(["--keys", "3000", "--width", "500", "--trials", "2", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        data = json.load(open(path))
        assert [s["style"] for s in data["styles"]] == list(isx.STYLES)
        for s in data["styles"]:
            assert s["verified"] and s["verification"]["keys"] == 3000 * pg.num_locales
            phases = s["phase_seconds_mean"]          # the breakdown names every phase (no timing asserted)
            assert set(phases) == set(isx.PHASES)


def test_counts_equal_a_global_histogram():
    P, n, width = pg.num_locales, 800, 64
    keys = isx.make_keys(n, width, P, pg.here, seed=5)
    for style in isx.STYLES:
        sorter = isx.Sorter(n, width)
        _, counts = isx.sort_once(sorter, keys, style)
        every = np.concatenate([isx.make_keys(n, width, P, r, seed=5) for r in range(P)])
        want = np.bincount(every, minlength=width * P)[pg.here * width:(pg.here + 1) * width]
        collective_verdict(np.array_equal(counts, want), f"{style}: counts differ from the histogram")
        got = np.sort(sorter.recv.local[:sorter.received])
        collective_verdict(np.array_equal(got, np.sort(every[every // width == pg.here])), f"{style}: keys")


def test_keys_are_uniform_and_per_locale():
    k0, k1 = isx.make_keys(10000, 100, 4, 0), isx.make_keys(10000, 100, 4, 1)
    assert not np.array_equal(k0, k1) and np.array_equal(k0, isx.make_keys(10000, 100, 4, 0))
    assert k0.min() >= 0 and k0.max() < 400
    assert np.all(np.abs(np.bincount(k0 // 100, minlength=4) - 2500) < 300)


def test_bucketize_groups_by_destination():
    keys = np.array([9, 0, 5, 3, 8, 1])
    s, c = isx.bucketize(keys, 3, 4)
    assert c.tolist() == [2, 2, 1, 1] and s.tolist() == [0, 1, 5, 3, 8, 9]


P = pg.num_locales


ME = pg.here


def test_isx_verification_catches_lost_keys_in_a_later_trial(monkeypatch):
    n, width = 500, 100
    keys = isx.make_keys(n, width, P, ME, seed=3)
    sorter = isx.Sorter(n, width)
    _, counts = isx.sort_once(sorter, keys, "spmd")
    collective_verdict(isx.verify(sorter, keys, counts)["verified"], "first trial")
    monkeypatch.setattr(DistArray, "put", lambda self, index, value: None)       # every key is lost
    _, counts = isx.sort_once(sorter, keys, "spmd")
    collective_verdict(not isx.verify(sorter, keys, counts)["verified"], "lost keys verified")


def test_global_view_counts_atomically_into_one_distributed_array():
    """The global style's counts are one Block array of width * locales (the slides'
    keyCounts of atomics): it equals the histogram of every locale's keys, trial after trial."""
    P, n, width = pg.num_locales, 500, 40
    keys = isx.make_keys(n, width, P, pg.here, seed=9)
    every = np.concatenate([isx.make_keys(n, width, P, r, seed=9) for r in range(P)])
    sorter = isx.Sorter(n, width)
    for _ in range(2):                                   # the counts are reset between trials
        isx.sort_once(sorter, keys, "global")
        whole = sorter.counts.to_numpy()
        collective_verdict(np.array_equal(whole, np.bincount(every, minlength=width * P)), "global key counts")
