"""NAS IS, MG and FT written with pgas: class S verifies by NPB's rules at every locale count, and
``pgas bench nas`` runs them (and CG) under one command."""

import json

import numpy as np
import pytest
from util import collective_verdict

import pgas as pg
from pgas import comm
from pgas.tools.bench import nas, nas_ft, nas_is, nas_mg


def test_is_class_s_verifies():
    for fuse in ("auto", False):                  # compiled loops, and NumPy's counting
        pg.config(fuse=fuse)
        try:
            r = nas_is.run_class("S", 1)
        finally:
            pg.config()
        collective_verdict(r["verified"], f"fuse={fuse}: {r['check']}")
        collective_verdict(r["partial_passed"] == [50] and r["full_verified"] and r["mops"] > 0, str(r))


def test_is_keys_are_npb_keys_wherever_they_are_made():
    cls = nas_is.CLASSES["S"]
    whole = nas_is.make_keys(cls, 0, 1000)
    collective_verdict(np.array_equal(nas_is.make_keys(cls, 357, 100), whole[357:457]), "key stream jump")
    collective_verdict(whole.min() >= 0 and whole.max() < cls.max_key, "keys outside [0, MAX_KEY)")


def test_is_full_verification_catches_a_misplaced_key():
    R = nas_is.Ranker(nas_is.CLASSES["S"])
    R.rank(1)
    collective_verdict(R.full_verify(), "a correct ranking fails full verification")
    mine, counts, below, lo = R.last
    if pg.here == 0 and mine.size > 1:
        bad = below.copy()
        bad[:-1] = 0                              # every key ranked at the end: placed out of order
        R.last = (mine, counts, bad, lo)
    collective_verdict(not R.full_verify(), "a wrong ranking passes full verification")


def test_mg_class_s_verifies():
    for fuse in ("auto", False):                  # compiled loops, and NumPy's expressions
        pg.config(fuse=fuse)
        try:
            r = nas_mg.run_class("S", 1)
        finally:
            pg.config()
        collective_verdict(r["verified"], f"fuse={fuse}: {r['check']}")
        collective_verdict(r["relative_error"] <= nas_mg.EPSILON and r["mops"] > 0, str(r))


def test_mg_zran3_places_ten_ones_and_ten_minus_ones():
    mg = nas_mg.MG(nas_mg.CLASSES["S"])
    mg.zran3()
    v = mg.v.to_numpy()
    collective_verdict((v == 1).sum() == 10 and (v == -1).sum() == 10 and (v != 0).sum() == 20, "zran3")


@pytest.mark.parametrize("fuse", ["auto", False])
def test_mg_transfers_match_numpy(fuse):
    # restriction then prolongation of a random field, against NPB's weights written with np.roll
    pg.config(fuse=fuse)
    try:
        _transfers_match_numpy()
    finally:
        pg.config()


def _transfers_match_numpy():
    n = 8
    mg = nas_mg.MG(nas_mg.MGClass("U", n, 1, 1.0))
    f = np.random.default_rng(1).random((n, n, n))
    fine, coarse = mg.levels[3], mg.levels[2]
    fine.r[...] = f
    nas_mg.comm3(fine.r)
    mg.rprj3(3)
    w = {0: 1.0, 1: 0.5}
    want = sum(w[abs(a)] * w[abs(b)] * w[abs(c)] * 0.5 * np.roll(f, (-a, -b, -c), (0, 1, 2))
               for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1))[1::2, 1::2, 1::2]
    collective_verdict(np.allclose(coarse.r.to_numpy(), want, rtol=1e-14, atol=1e-14), "rprj3")
    z = np.random.default_rng(2).random((n // 2,) * 3)
    coarse.u[...] = z
    fine.u[...] = 0.0
    mg.interp(3)
    up = np.zeros((n, n, n))
    up[1::2, 1::2, 1::2] = z
    want = sum(w[abs(a)] * w[abs(b)] * w[abs(c)] * np.roll(up, (-a, -b, -c), (0, 1, 2))
               for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1))
    collective_verdict(np.allclose(fine.u.to_numpy(), want, rtol=1e-14, atol=1e-14), "interp")


def test_ft_class_s_verifies():
    r = nas_ft.run_class("S", 1)
    collective_verdict(r["verified"], r["check"])
    collective_verdict(len(r["checksums"]) == 6 and r["mops"] > 0, str(r))


def test_ft_transform_is_numpys_fftn():
    ft = nas_ft.FT(nas_ft.FTClass("U", 8, 4, 6, 1, (1j,)))
    ft.initial()
    u = ft.u.to_numpy()
    ft.forward()
    collective_verdict(np.allclose(ft.w.to_numpy(), np.fft.fftn(u).transpose(1, 0, 2), atol=1e-12), "forward")
    ft.t[...] = ft.w
    ft.inverse()
    collective_verdict(np.allclose(ft.u.to_numpy(), u * u.size, atol=1e-10), "inverse is unscaled")


def test_bench_nas_runs_every_kernel(tmp_path):
    path = comm.bcast(str(tmp_path / "nas.json"), 0)
    status = nas.main(["--kernels", "cg,is,mg,ft", "--classes", "S", "--trials", "1", "--out", path])
    collective_verdict(status == 0, f"pgas bench nas did not verify (status {status})")
    if pg.here == 0:
        with open(path) as f:
            rows = json.load(f)["results"]
        assert [(r["kernel"], r["class"], r["verified"]) for r in rows] == [
            ("cg", "S", True), ("is", "S", True), ("mg", "S", True), ("ft", "S", True)]
