"""The owner choice prices remote write-backs: the model's
``writeback`` figure, how it is fitted and loaded, and the choice it makes for mvt."""

import json
import warnings

import pytest

from pgas.exec import calibration as calibrate
from pgas.tools.calibrate import network as measuring
from pgas.tools.calibrate import statements as rates
from pgas.layout import BlockCyclic, Cyclic
from pgas.plan import Access, Statement, candidates, choose, plan_local

N = 400
#: x[i] += A[i, j] * y[j] and x[i] += A[j, i] * y[j] (mvt's two statements)
MVT = [Statement(((0, 1, N), (0, 1, N)), (Access(0, ((1, 0),), (0,)), Access(1, m, (0, 0)),
                                          Access(2, ((0, 1),), (0,))), 0, "add")
       for m in (((1, 0), (0, 1)), ((0, 1), (1, 0)))]


def _weights(m):
    """As :func:`pgas.exec.statement._weights` for float64 arrays."""
    return (8 * min(m.packed_gap, m.gap), m.latency + min(m.packed_fixed, m.issue), m.writeback)


def _choice(stmt, dist, P, model):
    layouts = (dist.bind((N,), P), dist.bind((N, N), P), dist.bind((N,), P))
    cands = candidates(stmt, layouts, "cost")
    costs = []
    for c in cands:
        ps = [plan_local(stmt, layouts, c, r) for r in range(P)]
        costs.append((sum(p.moved for p in ps), sum(p.messages for p in ps), all(p.valid for p in ps),
                      sum(len(p.writebacks) for p in ps)))
    return cands[choose(costs, _weights(model))], costs


#: This machine's calibration at 4 locales (pgas calibrate -n 4, load 6-8): the
#: accumulate round cost 0.7-2.6 ms; the smallest is used here.
MEASURED = {"latency": 1.2e-06, "issue": 1.26e-06, "gap": 1.58e-09, "packed_fixed": 5.5e-05, "packed_run": 2.8e-08,
            "packed_gap": 2.6e-10, "copy_gap": 4.5e-09, "element": 1.2e-06, "compute": 6.9e-10, "task": 1.05e-05,
            "strip": 9.5e-05, "overlap": 0.0, "writeback": 7e-4}


@pytest.mark.parametrize("dist", [Cyclic(), BlockCyclic(4)])
@pytest.mark.parametrize("k", [0, 1])
def test_mvt_runs_on_the_write_under_a_measured_calibration(dist, k):
    model = calibrate.Model(**MEASURED)
    own, costs = _choice(MVT[k], dist, 4, model)
    assert own == MVT[k].write, costs               # plain aggregation's plan
    cheap = calibrate.Model(**{**MEASURED, "writeback": 0.0})     # transfers alone: A's owner
    own0, _ = _choice(MVT[k], dist, 4, cheap)
    assert own0 == 1, costs


def test_mvt_runs_on_the_write_under_the_defaults():
    own, costs = _choice(MVT[0], Cyclic(), 4, calibrate.Model(**calibrate.DEFAULTS))
    assert own == 0, costs


def test_a_large_remote_matrix_still_goes_where_it_lives():
    # moving A costs far more than the accumulates: the reduction runs on A's owner
    model = calibrate.Model(**{**MEASURED, "gap": 1e-6, "packed_gap": 1e-6})
    own, costs = _choice(MVT[0], Cyclic(), 4, model)
    assert own == 1, costs


def test_choose_ignores_write_backs_without_their_weight():
    costs = [(100, 2, True, 0), (96, 2, True, 4)]
    assert choose(costs) == 1 and choose(costs, (1e-9, 1e-5)) == 1 and choose(costs, (1e-9, 1e-5, 1e-6)) == 0
    assert choose([(100, 2, True), (96, 2, True)], (1e-9, 1e-5, 1.0)) == 1      # three-field entries


def _file(tmp_path, figs):
    k = calibrate.key("h", "m", 4)
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": calibrate.VERSION, "key": k, "figures": figs, "measurements": {}}))
    return k, str(path)


def test_a_file_without_the_writeback_figure_loads_with_the_default(tmp_path):
    old = {f: MEASURED[f] for f in ("latency", "issue", "gap", "packed_fixed", "packed_run", "packed_gap",
                                    "copy_gap", "element")}        # the first format's figures
    k, path = _file(tmp_path, old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = calibrate.load(k, path)
    assert m.source == path and m.writeback == calibrate.DEFAULTS["writeback"] and m.gap == old["gap"]
    k, path = _file(tmp_path, MEASURED)
    assert calibrate.load(k, path).writeback == MEASURED["writeback"]


def test_a_stale_file_still_warns(tmp_path):
    k, path = _file(tmp_path, MEASURED)
    with pytest.warns(RuntimeWarning, match="stale"):
        m = calibrate.load(calibrate.key("h", "m", 3), path)
    assert m.source == "defaults"


def _meas():
    grid = [{"length": L, "count": C, "bytes": 8 * L * C, "pipelined": 1e-6 * C + 1e-9 * L * C,
             "packed": 5e-6 + 1e-8 * C + 3e-10 * 8 * L * C} for L in (1, 16) for C in (1, 16)]
    return {"latency": 1e-6, "big": 1e-3, "big_bytes": 1 << 20, "grid": grid, "o": {"1,8": 1e-6},
            "copy": 1e-4, "copy_bytes": 1 << 16, "add": 1e-3, "add_elements": 1 << 20, "task": 1e-5,
            "overlap": 0.0}


def test_fit_without_the_measurement_gives_the_default():
    assert measuring.fit(_meas())["writeback"] == calibrate.DEFAULTS["writeback"]


def test_fit_prices_what_the_transfers_do_not_explain():
    meas = dict(_meas(), writeback_times={"write": 1e-3, "accumulate": 1.5e-3}, writeback_locales=2,
                writeback_plans={"write": [544, 4, 0], "accumulate": [32, 2, 2]})
    figs = measuring.fit(meas)
    pe, pm = 8 * min(figs["packed_gap"], figs["gap"]), figs["latency"] + min(figs["packed_fixed"], figs["issue"])
    want = (2 * 0.5e-3 - ((32 - 544) * pe + (2 - 4) * pm)) / 2
    assert figs["writeback"] == pytest.approx(want) and figs["writeback"] > 0.5e-3
    faster = dict(meas, writeback_times={"write": 2e-3, "accumulate": 1e-3})
    assert measuring.fit(faster)["writeback"] == 0.0           # never negative
    assert rates.writeback({}, 1e-9, 1e-6, 3.0) == 3.0
