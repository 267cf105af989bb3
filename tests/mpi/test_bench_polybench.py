"""PolyBench kernels at tiny sizes: the statements verify exactly against NumPy (mvt to
1e-12), in both fuse modes; the parser knows the kernels (no timing asserted)."""

import pytest

import pgas as pg
from pgas.tools.bench import polybench
from util import collective_verdict

TINY = {"jacobi-2d": (17, 3), "fdtd-2d": ((13, 11), 3), "mvt": (19, 1)}


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("name", polybench.KERNELS)
def test_kernels_verify(name, fuse):
    pg.config(fuse=fuse)
    r = polybench.run_kernel(name, TINY[name][1], True, TINY)
    collective_verdict(r["verified"], f"{name}: {r}")


def test_parser():
    args = polybench.make_parser().parse_args(["--kernels", "mvt,jacobi-2d", "--steps", "3"])
    assert args.kernels == ["mvt", "jacobi-2d"] and args.steps == 3


def test_trials_are_run():
    """``--trials`` times that many runs (it was accepted and ignored before)."""
    r = polybench.run_kernel("jacobi-2d", 2, True, TINY, trials=3)
    ok = len(r["trial_seconds"]) == 3 and r["verified"] and min(r["trial_seconds"]) <= r["seconds"]
    collective_verdict(ok, f"{r}")
    assert polybench.make_parser().parse_args([]).trials == 3


def test_reference_runs_beside_each_trial():
    """``--reference``: the C code runs once after each timed trial (``between``), and the
    ratio is the median of each trial's time per step over the run beside it."""
    calls = []
    r = polybench.run_kernel("jacobi-2d", 2, True, TINY, trials=3, between=lambda: calls.append(len(calls)))
    collective_verdict(len(calls) == 3 and len(r["trial_seconds"]) == 3, f"{calls} {r}")
    # pair_ratios' arithmetic on given figures (nothing here is timed): a reference run
    # that failed (None) drops its pair, and the reference's time is the median of the rest
    r = {"steps": 2, "trial_seconds": [1.0, 2.0, 3.0]}
    polybench.pair_ratios(r, [{"seconds": 10.0}, {"seconds": None}, {"seconds": 30.0}], 10)
    assert r["trial_ratios"] == [0.5, 0.5] and r["ratio_to_c"] == 0.5
    assert r["reference"]["seconds"] == 20.0 and r["reference"]["trial_seconds"] == [10.0, None, 30.0]
    r = {"steps": 2, "trial_seconds": [1.0]}
    polybench.pair_ratios(r, [{"seconds": None}], 10)
    assert "ratio_to_c" not in r and r["reference"]["seconds"] is None
