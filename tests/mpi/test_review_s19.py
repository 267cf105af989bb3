"""Hostile review (session 19) of the session's changes: the dense / sparse (NBX)
personalised exchange and its users (update, scatter, gather, index plans, axis
reductions, scans, to_numpy(root=)), np.var / np.std with where=, strip counts
chosen by the overlap model or pinned, and ``pgas bench suite --resume``.
Each test compares with NumPy; the six defects the review found are fixed and tested here."""

import importlib
import json
import os
import time
import warnings

import numpy as np
import pytest

import pgas as pg
from pgas import comm
from util import assert_matches, collective_verdict

P = pg.num_locales
me = pg.here
EXCHANGE = importlib.import_module("pgas.comm.exchange")


@pytest.fixture(params=["dense", "nbx"])
def mode(request, monkeypatch):
    """Both exchange protocols at any locale count (the same choice on every locale)."""
    monkeypatch.setattr(EXCHANGE, "DENSE_MAX", 10 ** 6 if request.param == "dense" else 1)
    return request.param


def _idx(seed, r, n, k):
    """Locale ``r``'s indices of round ``seed`` (every locale can draw every locale's)."""
    return np.random.default_rng(1000 * seed + r).integers(0, n, k)


def _skew(rnd):
    time.sleep(0.004 * ((me + rnd) % P))


# ---------------------------------------------------------------------------
# 1. Exchanges of different kinds back to back, locales skewed by sleeps
# ---------------------------------------------------------------------------
def test_back_to_back_exchanges_of_every_kind_never_mix(mode):
    """update -> axis reduction -> index plan -> gather(plan) -> scatter -> scan ->
    statement -> gather -> to_numpy(root) -> update(plan), each locale entering each
    at a different time, and every result as NumPy's (rule 8: a gather sees the
    update / scatter / statement just before it)."""
    n = 5 * P + 3
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a, dist=pg.Cyclic())
    b = np.arange(6.0 * (2 * P + 1)).reshape(6, 2 * P + 1) % 7
    B = pg.from_numpy(b, dist=pg.Block())
    ok, why = True, ""
    for rnd in range(3):
        _skew(rnd)
        A.update(_idx(rnd, me, n, 7), 1.0 + rnd, "add")
        for r in range(P):
            np.add.at(a, _idx(rnd, r, n, 7), 1.0 + rnd)
        s = B.sum(axis=0)                              # axis-reduction exchange right after
        _skew(rnd + 1)
        plan = A.index_plan(_idx(rnd + 50, me, n, 5))
        g1 = A.gather(plan)
        if not np.array_equal(g1, a[_idx(rnd + 50, me, n, 5)]):
            ok, why = False, f"round {rnd}: gather(plan) {g1} after update"
        sc = _idx(rnd + 70, me, n, 3)
        A.scatter(sc, 100.0 * rnd + me)
        for r in range(P):                             # last locale's value wins on repeats
            a[_idx(rnd + 70, r, n, 3)] = 100.0 * rnd + r
        c = np.cumsum(B, axis=1)
        A[...] = A * 2 - 1                             # a statement right after exchanges
        a = a * 2 - 1
        g2 = A.gather(_idx(rnd + 90, me, n, 6))
        if not np.array_equal(g2, a[_idx(rnd + 90, me, n, 6)]):
            ok, why = False, f"round {rnd}: gather {g2} after scatter + statement"
        full = A.to_numpy(root=rnd % P)
        if me == rnd % P and not np.array_equal(full, a):
            ok, why = False, f"round {rnd}: to_numpy(root) {full}"
        A.update(plan, 0.5, "add")                     # an update through a plan
        for r in range(P):
            np.add.at(a, np.unique(_idx(rnd + 50, r, n, 5)), 0.0)
            np.add.at(a, _idx(rnd + 50, r, n, 5), 0.5)
        assert_matches(s, b.sum(axis=0))
        assert_matches(c, np.cumsum(b, axis=1))
        collective_verdict(ok, why)
        assert_matches(A, a)


def test_a_statement_right_after_a_plan_gather_does_not_overwrite_unserved_values(mode):
    """Each locale asks only the next one (the plan's pairs); it then overwrites its own
    block at once.  A locale still behind (sleeping) must be served the old values."""
    n = 4 * P
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a, dist=pg.Block())
    want = 4 * ((me + 1) % P) + np.arange(4)
    plan = A.index_plan(want)
    for rnd in range(3):
        if me == rnd % P:
            time.sleep(0.05)
        got = A.gather(plan)
        A.local[...] = -1.0 - rnd                   # owner's own stores right after
        A[...] = A + 0                              # and a statement
        collective_verdict(np.array_equal(got, a[want]) if rnd == 0 else np.all(got == -float(rnd)),
                           f"round {rnd}: {got}")


def test_an_error_on_one_locale_raises_everywhere_and_leaves_no_message(mode):
    """A bad index or value shape on the last locale only: every locale raises, and
    the next exchanges (of every kind) see none of the failed one's messages."""
    n = 3 * P
    A = pg.from_numpy(np.zeros(n), dist=pg.Cyclic())
    for bad_call in (lambda: A.update(np.array([n if me == P - 1 else 0, 1]), 1.0),
                     lambda: A.update(np.arange(2), np.ones(3) if me == P - 1 else np.ones(2)),
                     lambda: A.index_plan(np.array([-n - 1 if me == P - 1 else 1])),
                     lambda: A.gather(np.array([0, n + 5 if me == P - 1 else 0]))):
        with pytest.raises((IndexError, ValueError, pg.LocaleError)):
            bad_call()
    A.update(np.arange(n), 1.0)
    B = pg.from_numpy(np.ones((4, 2 * P)))
    assert_matches(B.sum(axis=1), np.full(4, 2.0 * P))
    assert_matches(A, np.full(n, float(P)))
    got = A.gather(np.arange(n)[::-1])
    collective_verdict(np.array_equal(got, np.full(n, float(P))), f"{got}")


def test_many_small_exchanges_alternating_tags_with_skew(mode):
    """Odd and even rounds use different tags in NBX; a locale that runs ahead by one
    exchange must not take the other round's messages (RandomAccess-style loop)."""
    n = 2 * P + 1
    A = pg.zeros(n, dtype=np.int64, dist=pg.Block())
    want = np.zeros(n, np.int64)
    for rnd in range(12):
        if rnd % 4 == me % 4:
            time.sleep(0.003)
        k = (rnd + me) % 3                         # some locales send nothing
        A.update(_idx(rnd, me, n, k), rnd + 1)
        for r in range(P):
            np.add.at(want, _idx(rnd, r, n, (rnd + r) % 3), rnd + 1)
    assert_matches(A, want)


def test_raw_exchange_random_sizes_and_dtypes_back_to_back(mode):
    """comm.exchange itself: random part sizes (many empty), three dtypes in turn,
    20 rounds with skew, interleaved with exchange_known; every part as sent."""
    dts = [np.dtype(np.int64), np.dtype([("off", np.int64), ("v", np.complex64)]), np.dtype(np.uint8)]

    def part(rnd, src, dst, dt):
        rng = np.random.default_rng(7919 * rnd + 31 * src + dst)
        k = int(rng.integers(0, 4)) * int(rng.integers(0, 2))
        out = np.zeros(k, dt)
        out.view(np.uint8)[...] = rng.integers(0, 256, out.nbytes, dtype=np.uint8)
        return out
    ok, why = True, ""
    for rnd in range(20):
        dt = dts[rnd % 3]
        if (rnd + me) % 5 == 0:
            time.sleep(0.002)
        got = comm.exchange([part(rnd, me, r, dt) for r in range(P)], dt)
        for r in range(P):
            if got[r].tobytes() != part(rnd, r, me, dt).tobytes():
                ok, why = False, f"round {rnd}: from {r} got {got[r]!r}"
        if rnd % 4 == 3:                              # sizes known on both sides
            parts = {r: np.empty(len(part(rnd + 100, r, me, dts[0])), np.int64) for r in range(P) if r != me}
            EXCHANGE.exchange_known([(r, part(rnd + 100, me, r, dts[0])) for r in range(P)
                                     if r != me and len(part(rnd + 100, me, r, dts[0]))],
                                    [(r, out) for r, out in parts.items() if len(out)])
            for r in parts:
                if not np.array_equal(parts[r], part(rnd + 100, r, me, dts[0])):
                    ok, why = False, f"round {rnd}: known from {r} got {parts[r]}"
    collective_verdict(ok, why)


@pytest.mark.parametrize("dist", ["block", "cyclic"])
def test_exchanges_where_most_locales_own_nothing(mode, dist):
    """Arrays smaller than the locale count (at 9-10 locales most own nothing): axis
    reductions, masked var, scans, gathers, updates and to_numpy(root=) still agree."""
    d = {"block": pg.Block(), "cyclic": pg.Cyclic()}[dist]
    g = np.arange(6.0).reshape(2, 3) ** 1.5
    m = np.array([[True, False, True], [False, False, False]])
    A = pg.from_numpy(g, dist=d)
    assert_matches(A.sum(axis=0), g.sum(axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_matches(np.var(A, axis=1, where=m), np.var(g, axis=1, where=m))
        assert_matches(np.std(A, axis=0, where=m, keepdims=True), np.std(g, axis=0, where=m, keepdims=True))
    assert_matches(np.cumsum(A, axis=1), np.cumsum(g, axis=1))
    assert_matches(np.cumprod(A, axis=0), np.cumprod(g, axis=0))
    v = pg.from_numpy(np.arange(3.0), dist=d)
    v.update(np.array([me % 3]), 1.0)
    want = np.arange(3.0) + np.bincount(np.arange(P) % 3, minlength=3)
    assert_matches(v, want)
    got = v.gather(np.array([2, 0]) if me % 2 else np.empty(0, np.int64))
    collective_verdict(np.array_equal(got, want[[2, 0]] if me % 2 else want[:0]), f"{got}")
    full = v.to_numpy(root=P - 1)
    collective_verdict((full is None) == (me != P - 1) and (full is None or np.array_equal(full, want)), f"{full}")
    with pytest.raises(ValueError):
        v.to_numpy(root=P)


# ---------------------------------------------------------------------------
# 2. np.var / np.std with where=
# ---------------------------------------------------------------------------
DISTS = {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc": pg.BlockCyclic(block=(2,))}


@pytest.mark.parametrize("dist", list(DISTS))
def test_var_std_where_match_numpy(dist):
    g = np.arange(30.0).reshape(5, 6) ** 1.3
    m = np.zeros((5, 6), bool)
    m[0, :], m[2, 1], m[3, ::2] = True, True, True            # rows 1, 4 select nothing
    A = pg.from_numpy(g, dist=DISTS[dist])
    M = pg.from_numpy(m, dist=DISTS[dist])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ax in (None, 0, 1, (0, 1)):
            for ddof in (0, 1, 3):
                want = np.var(g, axis=ax, ddof=ddof, where=m)
                got = np.var(A, axis=ax, ddof=ddof, where=m)
                got2 = np.std(A, axis=ax, ddof=ddof, where=M)
                if np.ndim(want):
                    assert_matches(got, want)
                    assert_matches(got2, np.sqrt(want))
                else:
                    collective_verdict(np.allclose([got, got2], [want, np.sqrt(want)], equal_nan=True),
                                       f"axis {ax} ddof {ddof}: {got}, {got2} vs {want}")
        assert_matches(np.var(A, axis=1, where=m, keepdims=True), np.var(g, axis=1, where=m, keepdims=True))
        assert_matches(np.var(A, axis=0, where=m[0]), np.var(g, axis=0, where=m[0]))
        gi = (g * 10).astype(np.int64)
        assert_matches(np.var(pg.from_numpy(gi, dist=DISTS[dist]), axis=0, where=m), np.var(gi, axis=0, where=m))
        gc = g + 1j * g[::-1]
        Ac = pg.from_numpy(gc, dist=DISTS[dist])
        assert_matches(np.var(Ac, axis=1, where=m), np.var(gc, axis=1, where=m))
        collective_verdict(np.isclose(np.std(Ac, where=m), np.std(gc, where=m)), "complex std")
        O = pg.zeros(6, dist=DISTS[dist])
        np.var(A, axis=0, where=m, out=O, ddof=1)
        assert_matches(O, np.var(g, axis=0, where=m, ddof=1))
        g3 = np.arange(60.0).reshape(3, 4, 5) % 7
        A3 = pg.from_numpy(g3, dist=DISTS[dist])
        assert_matches(np.var(A3, axis=(0, 2), where=g3 > 2, ddof=1), np.var(g3, axis=(0, 2), where=g3 > 2, ddof=1))
        assert_matches(np.var(A[:, 1:].T, axis=0, where=m[:, 1:].T), np.var(g[:, 1:].T, axis=0, where=m[:, 1:].T))


def test_var_where_on_a_grid_and_with_ghosts():
    g = np.arange(24.0).reshape(4, 6) ** 1.3
    m = (np.arange(24).reshape(4, 6) % 5) > 1
    grid = (2, P // 2) if P % 2 == 0 else (1, P)
    A = pg.from_numpy(g, dist=pg.Block(grid=grid))
    assert_matches(np.var(A, axis=1, where=m, ddof=1), np.var(g, axis=1, where=m, ddof=1))
    Ag = pg.from_numpy(g, ghosts=(1, 1))
    assert_matches(np.std(Ag, axis=0, where=m), np.std(g, axis=0, where=m))


def test_var_where_a_lazy_mask_as_numpy_users_write_it():
    """``np.var(A, where=A > 10)``: the mask is an unevaluated expression."""
    g = np.arange(24.0).reshape(4, 6) ** 1.3
    A = pg.from_numpy(g, dist=pg.Cyclic())
    assert_matches(np.var(A, axis=1, where=A > 3), np.var(g, axis=1, where=g > 3))


def test_var_where_warns_on_every_locale_alike():
    g = np.arange(24.0).reshape(4, 6)
    m = np.ones((4, 6), bool)
    m[1] = False                                   # row 1 selects nothing: NumPy warns
    A = pg.from_numpy(g, dist=pg.Block())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", RuntimeWarning)
        got = np.var(A, axis=1, where=m)
    warned = any("Degrees of freedom" in str(x.message) for x in w)
    every = comm.allgather(warned)
    collective_verdict(all(every), f"warned on locales {[r for r, x in enumerate(every) if x]} only")


def test_var_where_a_view_of_a_distributed_mask():
    g = np.arange(30.0).reshape(5, 6) ** 1.3
    m = (np.arange(30).reshape(5, 6) % 4) > 0
    A, M = pg.from_numpy(g, dist=pg.Cyclic()), pg.from_numpy(m, dist=pg.Cyclic())
    assert_matches(np.var(A.T, axis=0, where=M.T), np.var(g.T, axis=0, where=m.T))


def test_var_with_a_complex_dtype_has_numpys_result_dtype():
    g = np.arange(24.0).reshape(4, 6) ** 1.3
    A = pg.from_numpy(g)
    assert_matches(np.var(A, axis=0, dtype=np.complex128), np.var(g, axis=0, dtype=np.complex128))


def test_var_into_an_integer_out_like_numpy():
    g = np.arange(24.0).reshape(4, 6) ** 1.3
    m = (np.arange(24).reshape(4, 6) % 5) > 1
    O = pg.zeros(6, dtype=np.int64)
    np.var(pg.from_numpy(g), axis=0, where=m, out=O)
    assert_matches(O, np.var(g, axis=0, where=m, out=np.zeros(6, np.int64)))


# ---------------------------------------------------------------------------
# 3. Strip counts: pinned, forced by the buffer limit, or the model's
# ---------------------------------------------------------------------------
@pytest.fixture
def restore_config():
    yield
    pg.config(strips="auto", buffer_limit=64 << 20)


@pytest.mark.parametrize("strips,limit", [(1, 64 << 20), (3, 64 << 20), (7, 200), ("auto", 64), (2, 64)])
def test_strip_mined_statements_match_numpy(strips, limit, restore_config):
    pg.config(strips=strips, buffer_limit=limit)
    G = np.random.default_rng(0).integers(-9, 10, (12, 10)).astype(float)
    W = np.zeros_like(G)
    W[1:-1, 1:-1] = G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:]
    for dist in DISTS.values():
        A = pg.from_numpy(G, dist=dist)
        B = pg.zeros((12, 10), dist=dist)
        B[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
        assert_matches(B, W)
        C = pg.zeros((10, 12), dist=dist)
        C[...] = A.T
        assert_matches(C, G.T)
        v = pg.zeros(12, dist=dist)
        D = pg.zeros((12, 12), dist=dist)
        E = pg.zeros((12, 10), dist=dist)
        F = pg.zeros((12, 10), dist=dist)

        def body(i, j):
            v[i] += A[i, j] * C[j, i]

        def mm(i, j, k):
            D[i, j] += A[i, k] * C[k, j]

        def grouped(i, j):
            E[i, j] = A[11 - i, j] * 2
            F[i, j] = E[i, 9 - j] + A[i, j]
        pg.forall((range(12), range(10)), body)
        pg.forall((range(12), range(12), range(10)), mm)
        pg.forall((range(12), range(10)), grouped)
        assert_matches(v, (G * G).sum(1))
        assert_matches(D, G @ G.T)
        assert_matches(F, (G[::-1] * 2)[:, ::-1] + G)
        A[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1]          # reads and writes the same array
        W2 = G.copy()
        W2[1:-1, 1:-1] = G[:-2, 1:-1] + G[2:, 1:-1]
        assert_matches(A, W2)


@pytest.mark.parametrize("strips", [2, 5])
def test_pinned_strips_on_ghosted_arrays_with_current_and_stale_ghosts(strips, restore_config):
    pg.config(strips=strips, buffer_limit=256)
    G = np.random.default_rng(1).integers(-9, 10, (12, 10)).astype(float)
    A = pg.from_numpy(G, ghosts=(1, 1))
    B = pg.zeros((12, 10), ghosts=(1, 1))
    g = G.copy()
    for step in range(3):
        if step != 1:
            A.update_ghosts()
        B[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
        w = np.zeros_like(g)
        w[1:-1, 1:-1] = g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:]
        assert_matches(B, w)
        A[...] = B * 0.5 + 1
        g = w * 0.5 + 1


def test_bad_strip_settings_raise_alike_and_explain_says_the_count(restore_config):
    for bad in (0, -1, 1.5, True, "many", None):
        with pytest.raises(ValueError):
            pg.config(strips=bad)
    with pytest.raises(ValueError):
        pg.config(buffer_limit=0)
    A = pg.from_numpy(np.arange(64.0).reshape(8, 8), dist=pg.Cyclic())
    B = pg.zeros((8, 8), dist=pg.Cyclic())
    pg.config(strips=3)
    text = pg.explain(lambda: B.__setitem__((slice(1, None), slice(None)), A[:-1, :]), locales=4, locale=1)
    pg.config(strips="auto", buffer_limit=8)
    text2 = pg.explain(lambda: B.__setitem__((slice(1, None), slice(None)), A[:-1, :]), locales=4, locale=1)
    ok = "pinned by pg.config(strips=3)" in text and "buffer limit of 8 bytes" in text2
    collective_verdict(ok, text + "\n----\n" + text2)


# ---------------------------------------------------------------------------
# 4. pgas bench suite --resume
# ---------------------------------------------------------------------------
def _planned_configs():
    from pgas.tools.bench import suite
    from pgas.tools.bench.kernels import KERNELS

    jobs = suite.configs("small", 1, ["folding"], ["planned"])
    return [dict(c, n=KERNELS["folding"].tiny) for c in jobs[1] if c["study"] == "planned"][:2]


def test_resume_after_a_line_cut_short_keeps_the_next_run(tmp_path):
    from pgas.tools.bench import suite

    out = comm.bcast(str(tmp_path), 0)
    mine = _planned_configs()
    path, raw = os.path.join(out, "job.json"), os.path.join(out, "raw.jsonl")
    if me == 0:
        json.dump(mine[1:], open(path, "w"))
        with open(raw, "w") as f:
            f.write(json.dumps({"config": mine[0], "row": {"study": "planned"}}) + "\n")
            f.write('{"config": {"cut sh')              # the job was killed mid-line
    comm.barrier()
    status = suite.run_job(path, raw, 1)
    done = comm.bcast(suite.load_rows(raw)[0] if me == 0 else None, 0)
    collective_verdict(status == 0 and done == mine, f"status {status}; kept {done}")


def test_resume_with_other_steps_does_not_keep_old_rows(tmp_path, monkeypatch):
    import pgas.tools.launch.launcher as launch_mod
    from pgas.tools.bench import suite

    out = comm.bcast(str(tmp_path), 0)
    ran = []

    def fake_launch(P, argv, timeout):             # a job: one row per configuration, tagged with steps
        job, steps = argv[argv.index("--job") + 1], int(argv[argv.index("--steps") + 1])
        raw = os.path.join(out, "raw", f"{P}.jsonl")
        with open(job) as f, open(raw, "a") as w:
            for c in json.load(f):
                ran.append(steps)
                w.write(json.dumps({"config": c, "row": {"study": c["study"], "steps": steps}}) + "\n")
        return 0
    monkeypatch.setattr(launch_mod, "launch", fake_launch)
    monkeypatch.setattr(launch_mod, "under_launcher", lambda: False)
    mine = _planned_configs()
    monkeypatch.setattr(suite, "configs", lambda *a: {1: mine})
    import pgas.tools.bench.report as report
    monkeypatch.setattr(report, "build", lambda *a, **k: [])
    ok, why = True, ""
    if me == 0:                                    # (no collective inside: the jobs are faked)
        try:
            suite.main(["--out", out, "--steps", "1", "--no-plots"])
            suite.main(["--out", out, "--steps", "5", "--no-plots", "--resume"])
            res = json.load(open(os.path.join(out, "results.json")))
            steps = [r["steps"] for r in res["runs"]]
            ok, why = steps == [res["steps"]] * len(steps), f"results say steps {res['steps']}, rows ran {steps}"
        except Exception as e:  # noqa: BLE001 - reported on every locale below
            ok, why = False, f"{type(e).__name__}: {e}"
    collective_verdict(ok, why)
