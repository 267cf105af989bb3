"""The overlap model that picks a plan's strip count (pgas.plan.overlap), the strips cut
for a count (pgas.plan.strips), and the calibration file's optional strip figures."""

import json
import math
import warnings

from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.exec import calibration as calibrate
from pgas.layout import Block, BlockCyclic, Cyclic
from pgas.plan import overlap
from pgas.plan.model import Access, Statement
from pgas.plan.planner import plan_local
from pgas.plan.strips import footprint, forced, strips

SET = settings(derandomize=True, database=None, deadline=None, max_examples=25)
TRANSFER = ("latency", "issue", "gap", "packed_fixed", "packed_run", "packed_gap", "copy_gap", "element")
TINY = st.sampled_from([0.0, 1e-10, 1e-9, 1e-7, 1e-6, 1e-5, 1e-3])


@st.composite
def models(draw, **fixed):
    figs = {k: draw(TINY) for k in calibrate.FIELDS if k != "overlap"}
    figs["overlap"] = draw(st.sampled_from([0.0, 0.3, 0.8, 1.0]))
    figs.update(fixed)
    return calibrate.Model(**figs)


@st.composite
def works(draw, messages=True):
    msgs = []
    for _ in range(draw(st.integers(1, 3)) if messages else 0):
        size = draw(st.sampled_from([1, 4, 8]))
        n = draw(st.integers(1, 1 << 20))
        runs = draw(st.integers(1, n))
        msgs.append((runs, n * size, n * size * draw(st.integers(1, 3)), size))
    return overlap.Work(tuple(msgs), draw(st.integers(0, 1 << 22)), draw(st.integers(1, 5)),
                        draw(st.integers(1, 50)))


def _t(model, work, k):
    return overlap.strip_time(model, work, k)


@SET
@given(models(), works(), st.integers(1, 40), st.one_of(st.none(), st.integers(1, 100)))
def test_never_fewer_strips_than_the_buffer_limit_forces(model, work, k_min, pin):
    c = overlap.choose(model, work, k_min, pin)
    assert c.k >= k_min and c.k_min == k_min
    if pin is not None:
        assert c.k == max(pin, k_min) and c.why == ("pinned" if pin >= k_min else "buffer limit")
    elif model.overlap <= 0:
        assert c.k == k_min and not c.times                      # nothing to gain, nothing priced
    else:
        assert c.k in {k for k, _ in c.times}
        assert c.predicted(c.k) <= c.predicted(k_min)           # never predicted slower than the least
        assert c.k == k_min or c.predicted(c.k) < (1 - overlap.MARGIN) * c.predicted(k_min)


@SET
@given(models(), works())
def test_one_strip_is_fetch_then_compute(model, work):
    x = overlap._transfer(model, work, 1)
    c = work.elements * work.ops * model.compute + model.task * work.tasks
    assert math.isclose(_t(model, work, 1), model.strip + x + c, rel_tol=1e-9, abs_tol=1e-15)


@SET
@given(models(overlap=0.0), works(), st.integers(1, 8))
def test_no_overlap_means_no_strip_mining(model, work, k_min):
    """``choose`` skips pricing without overlap; the prices agree that no count pays."""
    assert overlap.choose(model, work, k_min).k == k_min
    x0 = overlap._transfer(model, work, k_min)
    base = overlap.strip_time(model, work, k_min, k_min)
    assert all(overlap.strip_time(model, work, k, k_min, x0) >= base * (1 - 1e-12)
               for k in overlap.candidates(k_min, 64))


@SET
@given(models(compute=0.0, task=0.0), works(), st.integers(1, 8))
def test_negligible_compute_means_no_strip_mining(model, work, k_min):
    """With nothing to compute there is nothing to hide a transfer behind."""
    assert overlap.choose(model, work, k_min).k == k_min


@SET
@given(models(**{k: 0.0 for k in TRANSFER}), works(), st.integers(1, 8))
def test_negligible_transfers_mean_no_strip_mining(model, work, k_min):
    assert overlap.choose(model, work, k_min).k == k_min
    assert overlap.choose(model, overlap.Work((), work.elements, 1, 1), k_min).k == k_min


@SET
@given(models(), works(), st.sampled_from(list(calibrate.FIELDS)), st.integers(1, 64))
def test_predicted_time_never_falls_as_a_cost_grows(model, work, field, k):
    """Every figure but ``overlap`` is a cost: raising it never predicts a faster run;
    more overlap never predicts a slower one; more elements never a faster one."""
    import dataclasses

    old = getattr(model, field)
    new = dataclasses.replace(model, **{field: (min(1.0, old + 0.25) if field == "overlap" else old * 3 + 1e-6)})
    t0, t1 = _t(model, work, k), _t(new, work, k)
    if field == "overlap":
        assert t1 <= t0 * (1 + 1e-12)
    else:
        assert t1 >= t0 * (1 - 1e-12)
    more = overlap.Work(work.messages, work.elements * 2 + 1, work.ops, work.tasks)
    assert _t(model, more, k) >= t0 * (1 - 1e-12)
    assert _t(model, work, k) >= work.elements * work.ops * model.compute      # the compute is all done


def test_balanced_overlap_picks_several_strips():
    """Transfers that proceed while computing, as long as the compute, and cheap strips:
    the model strip-mines, and predicts the gain the pipeline can give (at most 2x)."""
    model = calibrate.Model(**{**calibrate.DEFAULTS, "overlap": 1.0, "strip": 2e-6, "task": 1e-6,
                               "compute": 1e-9, "gap": 1e-10})
    w = overlap.Work(((1, 16 << 20, 16 << 20, 8),), elements=1 << 21, ops=1, tasks=1)
    c = overlap.choose(model, w)
    assert c.k > 1 and c.why == "model"
    t1 = c.predicted(1)
    assert 0.5 * t1 < c.predicted(c.k) < (1 - overlap.MARGIN) * t1
    costly = calibrate.Model(**{**model.figures(), "strip": 1.0})        # a strip costs a second
    assert overlap.choose(costly, w).k == 1


def _mvt(n, P, dist):
    """y[i] += A[j, i] * x[j]: the paper's Figure 2 kernel (a remote matrix)."""
    s = Statement(((0, 1, n), (0, 1, n)), (Access(0, ((1, 0),), (0,)), Access(1, ((0, 1), (1, 0)), (0, 0)),
                                           Access(2, ((0, 1),), (0,))), write=0, reduce="add")
    return s, (dist.bind((n,), P), dist.bind((n, n), P), dist.bind((n,), P))


@SET
@given(st.integers(4, 40), st.integers(2, 4), st.sampled_from([Block(), Cyclic(), BlockCyclic(3)]),
       st.integers(1, 12), st.integers(0, 3))
def test_strips_for_a_count_cover_the_plan(n, P, dist, count, me):
    """Cut for ``count`` strips: about that many (at least as many as asked where the
    tasks can be cut), every iteration in exactly one sub-task, and under a forcing
    limit no strip's buffers above half of it."""
    s, layouts = _mvt(n, P, dist)
    p = plan_local(s, layouts, 0, me % P)
    sizes = (8, 8, 8)
    foot = footprint(p, sizes)
    if not foot:
        return
    for limit, k in ((1 << 40, count), (max(64, foot // 3), count)):
        got = strips(p, sizes, limit, k)
        if k == 1 and foot <= limit:
            assert got is None
            continue
        pieces, parts = got
        assert sum(math.prod(t.shape) for st_ in parts for t in st_.tasks) == sum(math.prod(t.shape) for t in p.tasks)
        if foot > limit:
            assert forced(p, sizes, limit) > 1
            assert all(sum(m.size * 8 for m in st_.fetches) <= limit // 2 or len(st_.tasks) == 1 for st_ in parts)
        fetching = sum(1 for st_ in parts if st_.fetches)
        assert fetching <= max(k, forced(p, sizes, limit)) * 2 + 1


def test_work_of_a_plan():
    s, layouts = _mvt(16, 2, Block())
    p = plan_local(s, layouts, 0, 0)
    w = overlap.work(p, (8, 8, 8), 2)
    assert w.elements == 8 * 16 and w.ops == 2 and w.nbytes == footprint(p, (8, 8, 8))
    assert overlap.choose(calibrate.Model(**calibrate.DEFAULTS), w).k == 1     # defaults: no overlap


def test_calibration_file_without_strip_figures_loads_with_defaults(tmp_path):
    """A file written before the strip figures were measured still loads, without a
    warning, with the defaults for them."""
    k = calibrate.key("h", "MPI x", 2)
    path = str(tmp_path / "c.json")
    figs = {f: calibrate.DEFAULTS[f] * 2 for f in calibrate.FIELDS}
    calibrate.save(k, figs, path=path)
    doc = json.load(open(path))
    for f in calibrate.OPTIONAL:
        del doc["figures"][f]
    json.dump(doc, open(path, "w"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = calibrate.load(k, path)
    assert m.latency == 2 * calibrate.DEFAULTS["latency"]
    assert all(getattr(m, f) == calibrate.DEFAULTS[f] for f in calibrate.OPTIONAL)


def test_writes_follow_the_measured_put_grid(tmp_path):
    """A calibration with puts measured: writes choose by the put grid, reads by the read
    grid; a file without puts: writes use the read grid (as before)."""
    rows = [{"length": L, "count": C, "packed": 1e-5 * C, "pipelined": 2e-5 * C, "bounding": 9e-5 * C,
             "put_packed": 5e-5 * C, "put_pipelined": 1e-5 * C} for L in (1, 16) for C in (1, 16)]
    k = calibrate.key("h", "MPI x", 2)
    path = str(tmp_path / "c.json")
    calibrate.save(k, calibrate.DEFAULTS, {"grid": rows}, path=path)
    m = calibrate.load(k, path)
    assert m.put_grid is not None
    assert m.choose(8, 8 * 8 * 4, 8 * 8 * 8, write=False)[0] == "packed"
    assert m.choose(8, 8 * 8 * 4, 8 * 8 * 8, write=True)[0] == "pipelined"
    for r in rows:
        del r["put_packed"], r["put_pipelined"]
    calibrate.save(k, calibrate.DEFAULTS, {"grid": rows}, path=path)
    m = calibrate.load(k, path)
    assert m.put_grid is None and m.choose(8, 8 * 8 * 4, 8 * 8 * 8, write=True)[0] == "packed"


@SET
@given(works(), st.integers(1, 4))
def test_a_grid_cheaper_for_cut_messages_is_no_reason_to_strip(work, k_min):
    """Without overlap, a measured grid that prices small messages far below large ones
    does not make the model strip-mine: cutting transfers is not what strips are for."""
    rows = [{"length": L, "count": C, "packed": 1e-6 * (L * C) ** 2, "pipelined": 1e-6 * (L * C) ** 2}
            for L in (1, 1 << 10, 1 << 20) for C in (1, 1 << 10, 1 << 20)]
    model = calibrate.Model(**calibrate.DEFAULTS, grid=calibrate.Grid(rows))
    assert overlap.choose(model, work, k_min).k == k_min
