"""Remote write-backs priced in the owner choice: under
``protocol="auto"`` mvt's reductions run where plain aggregation runs them when the
calibration says an accumulate costs more than the elements it saves, elsewhere
when it does not; the same choice on every locale, results equal to NumPy; and
pgas calibrate's write-back measurement."""

import math

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm
from pgas.exec import calibration as calibrate
from pgas.exec import settings, statement
from pgas.tools.calibrate import statements as rates

P = comm.num_locales()


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    calibrate.reset()
    statement._choices.clear()
    yield
    pg.config()
    calibrate.reset()
    statement._choices.clear()


def _mvt(n, dist):
    rng = np.random.default_rng(3)
    a, y1, y2 = rng.random((n, n)), rng.random(n), rng.random(n)
    A, Y1, Y2 = (pg.from_numpy(v, dist=dist) for v in (a, y1, y2))
    X1, X2 = pg.zeros(n, dist=dist), pg.zeros(n, dist=dist)

    def body(i, j):
        X1[i] += A[i, j] * Y1[j]
        X2[i] += A[j, i] * Y2[j]

    for _ in range(2):
        pg.forall((range(n), range(n)), body)
    assert_matches(X1, 2 * (a @ y1), rtol=1e-12)
    assert_matches(X2, 2 * (a.T @ y2), rtol=1e-12)
    return sorted(v == k[0].write for k, v in statement._choices.items())


@pytest.mark.parametrize("dist", [pg.Cyclic(), pg.BlockCyclic(2)])
@pytest.mark.parametrize("writeback", ["costly", "free", "differ"])
def test_mvt_owner_follows_the_writeback_figure(dist, writeback):
    figs = dict(calibrate.DEFAULTS, gap=1e-8, packed_gap=1e-8)       # elements cost something
    if writeback == "differ":                                        # per-host files: averaged, agreed
        figs["writeback"] = [1.0, 0.0][comm.here() % 2]
    else:
        figs["writeback"] = 1.0 if writeback == "costly" else 0.0
    calibrate._current.append(calibrate.Model(**figs))
    pg.config(owner="cost", protocol="auto")
    got = _mvt(24, dist)
    every = comm.allgather(got)
    collective_verdict(all(e == every[0] for e in every), f"owner choices differ between locales: {every}")
    if P > 1 and writeback in ("costly", "differ"):
        collective_verdict(got == [True, True], f"a costly write-back must keep the write's owner: {got}")
    if P > 1 and writeback == "free":
        collective_verdict(not all(got), f"free write-backs: A's owner moves fewer elements: {got}")


def test_writeback_measurement_runs_and_keeps_settings():
    pg.config(owner="write", protocol="pipelined")
    got = rates.measure_writeback(reps=1)
    kept = settings.get("owner") == "write" and settings.get("protocol") == "pipelined"
    if P == 1:
        ok = got == {}
    else:
        t, plans = got["writeback_times"], got["writeback_plans"]
        ok = (all(math.isfinite(v) and v > 0 for v in t.values()) and got["writeback_locales"] == P
              and plans["accumulate"][2] > 0 and plans["write"][2] == 0
              and plans["accumulate"][0] < plans["write"][0])
        w = rates.writeback(got, 1e-9, 1e-6, 5.0)
        ok = ok and math.isfinite(w) and w >= 0
    collective_verdict(ok and kept, f"{got}, kept settings: {kept}")


@pytest.mark.parametrize("differ", ["protocol", "buffer_limit", "aggregate", "none"])
def test_planning_settings_that_differ_raise_everywhere(differ):
    # the owner choice's first-run reduction carries a hash of the planning settings:
    # locales whose pg.config differ all raise the same error (no hang, no wrong data)
    n = 12
    a = np.arange(n * n, dtype=np.float64).reshape(n, n)
    A = pg.from_numpy(a, dist=pg.Cyclic())
    y = pg.from_numpy(np.arange(n, dtype=np.float64), dist=pg.Cyclic())
    x = pg.zeros(n, dist=pg.Cyclic())
    kw = {"owner": "cost", "protocol": "packed"}
    if differ != "none" and comm.here() == P - 1:
        kw.update({"protocol": {"protocol": "auto"}, "buffer_limit": {"buffer_limit": 4096},
                   "aggregate": {"aggregate": False}}[differ])
    pg.config(**kw)

    def body(i, j):
        x[i] += A[j, i] * y[j]

    try:
        pg.forall((range(n), range(n)), body)
        got = None
    except RuntimeError as e:
        got = str(e)
    pg.config()
    every = comm.allgather(got)
    collective_verdict(all(e == every[0] for e in every), f"different outcomes: {every}")
    if differ == "none" or P == 1:
        collective_verdict(got is None, got)
        assert_matches(x, a.T @ np.arange(n, dtype=np.float64), rtol=1e-12)
    else:
        collective_verdict(got is not None and "differ between locales" in got, str(got))


def test_the_owner_choice_is_made_again_when_the_protocol_changes():
    # Regression (pgas bench stmt runs mvt under owner="cost" with "packed", then
    # "auto"): the choice was cached by statement and layouts alone, so "auto" reused the
    # fewest-elements choice and never ranked by time.  Now the settings are in the key.
    calibrate._current.append(calibrate.Model(**dict(calibrate.DEFAULTS, gap=1e-8, packed_gap=1e-8,
                                                     writeback=1.0)))
    pg.config(owner="cost", protocol="packed")
    packed = _mvt(24, pg.Cyclic())                 # fewest elements: A's owner where it differs
    before = len(statement._choices)
    pg.config(owner="cost", protocol="auto")
    _mvt(24, pg.Cyclic())
    auto = sorted(v == k[0].write for k, v in list(statement._choices.items())[before:])
    if P > 1:
        collective_verdict(not all(packed) and auto == [True, True], f"packed {packed}, auto {auto}")
