"""The LMAD algebra (pgas.plan.lmad) and message building against brute-force index sets;
the protocol model and the calibration file."""

import dataclasses
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.exec import calibration as calibrate
from pgas.plan import lmad
from pgas.plan.transfers import MessageBuilder, buffer_view, normalise

SET = settings(derandomize=True, database=None, deadline=None, max_examples=25)


@st.composite
def regions(draw, max_dims=3):
    nd = draw(st.integers(0, max_dims))
    counts = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    strides = tuple(draw(st.integers(1, 40)) for _ in range(nd))
    return (draw(st.integers(0, 50)), counts, strides)


@SET
@given(regions())
def test_coalesce_keeps_the_element_sequence(r):
    c = lmad.coalesce(r)
    assert np.array_equal(lmad.expand(*c), lmad.expand(*r))
    assert len(c[1]) <= len(r[1]) and all(n > 1 for n in c[1])


def test_coalescible_levels_fuse():
    assert lmad.coalesce((5, (4, 16), (16, 1))) == (5, (64,), (1,))
    assert lmad.coalesce((0, (3, 1, 2), (10, 7, 5))) == (0, (6,), (5,))
    assert lmad.coalesce((0, (3, 2), (10, 1))) == (0, (3, 2), (10, 1))


@SET
@given(st.lists(regions(2), max_size=6), st.data())
def test_stack_keeps_the_element_sequence(rs, data):
    # add runs of evenly spaced copies, which stack
    if rs and data.draw(st.booleans()):
        o, c, s = rs[0]
        step = data.draw(st.integers(1, 30))
        rs = [(o + k * step, c, s) for k in range(data.draw(st.integers(2, 5)))] + rs
    got = lmad.stack(rs)
    want = np.concatenate([lmad.expand(*r) for r in rs]) if rs else np.zeros(0, np.int64)
    have = np.concatenate([lmad.expand(*r) for r in got]) if got else np.zeros(0, np.int64)
    assert np.array_equal(have, want)
    assert len(got) <= len(rs)


def test_stack_examples():
    rows = [(k * 100, (99,), (1,)) for k in range(99)]            # b[i][j], one row each
    assert lmad.stack(rows) == ((0, (99, 99), (100, 1)),)
    assert lmad.stack([(0, (4,), (1,)), (4, (3,), (1,))]) == ((0, (7,), (1,)),)


@SET
@given(regions(2), st.integers(1, 60))
def test_interleave_covers_the_union(r, delta):
    o, c, s = r
    got = lmad.interleave(r, (o + delta, c, s))
    if got is None:
        assert s and delta >= min(s)
        return
    region, level, index = got
    want = np.sort(np.concatenate([lmad.expand(*r), lmad.expand(o + delta, c, s)]))
    assert np.array_equal(np.sort(lmad.expand(*region)), want)
    assert level == len(c) and index == 1


def test_interleave_paper_example():
    # a[100 i + 1], a[100 i + 2] are one LMAD with a new level of stride 1
    assert lmad.interleave((1, (5,), (100,)), (2, (5,), (100,))) == ((1, (5, 2), (100, 1)), 1, 1)


@SET
@given(st.lists(regions(3), max_size=5))
def test_runs_and_bounding_cover_the_elements(rs):
    offs, lens = lmad.runs(rs)
    want = np.concatenate([lmad.expand(*r) for r in rs]) if rs else np.zeros(0, np.int64)
    have = np.concatenate([np.arange(o, o + n) for o, n in zip(offs, lens)]) if len(offs) else np.zeros(0, np.int64)
    assert np.array_equal(have, want)
    assert all(offs[k + 1] != offs[k] + lens[k] for k in range(len(offs) - 1))     # maximal
    if rs:
        lo, hi = lmad.bounding(rs)
        assert lo == want.min() and hi == want.max() + 1


@st.composite
def footprints(draw):
    """Footprints of one message: LMADs over lattice dims, as the planner adds them."""
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    base = tuple(draw(st.integers(-12, 12)) for _ in range(nd))
    out = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["shift", "interleave", "random"]))
        if kind == "random":
            strides = tuple(draw(st.integers(-12, 12)) for _ in range(nd))
        else:
            strides = base
        out.append((draw(st.integers(40, 80)), shape, strides))
    return out


@SET
@given(footprints(), st.booleans())
def test_message_buffers_hold_every_use(fps, write):
    """Each use's view of the message buffer reads exactly its footprint's elements."""
    if write:   # write-backs must be disjoint: keep the footprints that are
        seen, keep = set(), []
        for o, c, s in fps:
            e = set(lmad.expand(o, c, s).tolist())
            if len(e) == int(np.prod(c)) and not e & seen:
                seen |= e
                keep.append((o, c, s))
        fps = keep
    b = MessageBuilder(write=write)
    added = []
    for o, c, s in fps:
        region, dims, flips = normalise(o, c, s)
        added.append((b.add(*region), dims, flips, (o, c, s)))
    regions, uses = b.build()
    memory = np.arange(1000, 1200)
    buf = memory[np.concatenate([lmad.expand(*r) for r in regions])] if regions else memory[:0]
    if write:
        offs = np.concatenate([lmad.expand(*r) for r in regions]) if regions else np.zeros(0, int)
        assert len(np.unique(offs)) == len(offs)
    for u, dims, flips, (o, c, s) in added:
        start, cs = uses[u]
        boff, bst = buffer_view(start, cs, dims, flips, c, len(c))
        got = buf[lmad.expand(boff, c, bst)]
        assert np.array_equal(got, memory[lmad.expand(o, c, s)])


def test_model_never_chooses_slower_than_elements():
    m = calibrate.Model(**{**calibrate.DEFAULTS, "packed_fixed": 1.0, "issue": 1.0, "latency": 0.0})
    proto, times = m.choose(runs=2, nbytes=16, span=10 ** 9, write=False)
    assert proto == "elements" and times["elements"] == min(times.values())
    proto, _ = calibrate.Model(**calibrate.DEFAULTS).choose(runs=3, nbytes=3 * 8 * 4096, span=10 ** 9, write=True)
    assert proto in ("packed", "pipelined")


def test_bounding_only_for_reads_with_little_waste():
    m = calibrate.Model(**calibrate.DEFAULTS)
    assert "bounding" not in m.choose(4, 800, 800, write=True)[1]
    assert "bounding" not in m.choose(4, 800, 8000, write=False)[1]
    assert "bounding" in m.choose(4, 800, 1000, write=False)[1]


def test_calibration_file_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    k = calibrate.key("h", "MPICH 4", 3)
    figs = {**calibrate.DEFAULTS, "issue": 7e-6}
    path = calibrate.save(k, figs, {"grid": []})
    assert path.startswith(str(tmp_path)) and path.endswith("-3.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = calibrate.load(k)
    assert m.issue == 7e-6 and m.source == path
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert calibrate.load(calibrate.key("h", "MPICH 4", 4)).source == "defaults"     # no file: no warning


@pytest.mark.parametrize("damage", ["garbage", "version", "key", "negative", "missing"])
def test_corrupt_or_stale_calibration_is_ignored_with_a_warning(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    k = calibrate.key("h", "MPICH 4", 2)
    path = calibrate.save(k, calibrate.DEFAULTS)
    doc = json.load(open(path))
    if damage == "garbage":
        open(path, "w").write("{not json")
    else:
        if damage == "version":
            doc["version"] = calibrate.VERSION + 1
        elif damage == "key":
            doc["key"]["locales"] = 5
        elif damage == "negative":
            doc["figures"]["gap"] = -1.0
        else:
            del doc["figures"]["latency"]
        json.dump(doc, open(path, "w"))
    with pytest.warns(RuntimeWarning, match="stale" if damage in ("version", "key") else "corrupt"):
        m = calibrate.load(k)
    assert m.source == "defaults" and m.figures() == calibrate.DEFAULTS


def _synthetic_grid(seed: int):
    """A grid of length x count with random times per protocol (float64, waste 2)."""
    rng = np.random.default_rng(seed)
    return [{"length": L, "count": C, "packed": float(rng.uniform(1e-6, 1e-3)),
             "pipelined": float(rng.uniform(1e-6, 1e-3)), "bounding": float(rng.uniform(1e-6, 1e-3))}
            for L in (1, 4, 16, 64) for C in (1, 4, 16)]


@SET
@given(st.integers(0, 10 ** 6))
def test_grid_choice_at_grid_points_is_the_measured_fastest(seed):
    rows = _synthetic_grid(seed)
    m = dataclasses.replace(calibrate.Model(**calibrate.DEFAULTS), grid=calibrate.Grid(rows))
    for r in rows:
        L, C = r["length"], r["count"]
        proto, times = m.choose(runs=C, nbytes=8 * L * C, span=8 * (2 * L * C - L), write=False)
        allowed = ["pipelined"] if C == 1 else ["packed", "pipelined", "bounding"]
        fastest = min(allowed, key=lambda p: r[p])
        for p in allowed:
            assert times[p] == pytest.approx(r[p], rel=1e-9)
        assert proto == (fastest if times[fastest] <= times["elements"] else "elements")
        wproto, wtimes = m.choose(runs=C, nbytes=8 * L * C, span=8 * (2 * L * C - L), write=True)
        assert "bounding" not in wtimes


@SET
@given(st.integers(0, 10 ** 6), st.floats(0, 1), st.floats(0, 1))
def test_grid_interpolates_in_log_space_between_points(seed, fx, fy):
    rows = _synthetic_grid(seed)
    g = calibrate.Grid(rows)
    at = {(r["length"], r["count"]): r for r in rows}
    run_bytes, count = 8 * 4 * 4 ** fx, 4 * 4 ** fy           # between lengths 4, 16 and counts 4, 16
    got = g.times(run_bytes, count)
    for p in ("packed", "pipelined", "bounding"):
        want = math.exp((1 - fx) * (1 - fy) * math.log(at[4, 4][p]) + fx * (1 - fy) * math.log(at[16, 4][p])
                        + (1 - fx) * fy * math.log(at[4, 16][p]) + fx * fy * math.log(at[16, 16][p]))
        assert got[p] == pytest.approx(want, rel=1e-6)
        lo, hi = sorted((min(at[a, b][p] for a in (4, 16) for b in (4, 16)),
                         max(at[a, b][p] for a in (4, 16) for b in (4, 16))))
        assert lo * (1 - 1e-9) <= got[p] <= hi * (1 + 1e-9)


def test_grid_outside_or_missing_falls_back_to_the_fitted_model():
    rows = [r for r in _synthetic_grid(1) if (r["length"], r["count"]) != (64, 16)]
    fitted = calibrate.Model(**calibrate.DEFAULTS)
    m = dataclasses.replace(fitted, grid=calibrate.Grid(rows))
    assert m.grid.times(8 * 128, 4) is None and m.grid.times(8 * 4, 64) is None      # outside
    assert m.grid.times(8 * 32, 8) is None                          # next to the missing 64 x 16
    for runs, nbytes in ((64, 64 * 8 * 128), (8, 8 * 8 * 32)):
        assert m.choose(runs, nbytes, 2 * nbytes, False) == fitted.choose(runs, nbytes, 2 * nbytes, False)
    with pytest.raises(ValueError):
        calibrate.Grid([{"length": 1, "count": 1, "packed": 1e-6}])       # no pipelined time
    with pytest.raises(ValueError):
        calibrate.Grid([{"length": 1, "count": 1, "packed": -1.0, "pipelined": 1e-6}])


def test_calibration_file_grid_is_loaded_and_a_bad_one_warns(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    k = calibrate.key("h", "MPICH 4", 2)
    path = calibrate.save(k, calibrate.DEFAULTS, {"grid": _synthetic_grid(2)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = calibrate.load(k)
    assert m.grid is not None and len(m.grid) == 12
    doc = json.load(open(path))
    doc["measurements"]["grid"][3]["packed"] = float("nan")
    json.dump(doc, open(path, "w"))
    with pytest.warns(RuntimeWarning, match="corrupt"):
        assert calibrate.load(k).grid is None
