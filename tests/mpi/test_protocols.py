"""Every transfer protocol, and strip-mining under a small buffer limit, against NumPy:
the statement kernels, random slice statements, and the buffer bound.

Also: every protocol gives NumPy's values on the same statements."""

import numpy as np
import pytest
import test_stmt
from util import assert_matches, check_kernel, collective_verdict

import pgas as pg
from pgas import comm
from pgas.tools.bench.kernels import KERNELS
from pgas.exec import transfer

PROTOCOLS = ["auto", "packed", "pipelined", "bounding"]
P = pg.num_locales


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


DISTS = [pg.Cyclic(), pg.BlockCyclic(4), pg.Block()]
#: Every kernel under every protocol, whole and strip-mined; the distribution turns
#: with the case, so each kernel meets each distribution (the full cross product, 3x
#: the cases, added little: test_kernels runs every kernel on every distribution).
CASES = [(name, protocol, limit, DISTS[(k + j) % len(DISTS)])
         for k, name in enumerate(sorted(KERNELS)) for j, (protocol, limit)
         in enumerate((p, lim) for p in PROTOCOLS for lim in (None, 64))]


@pytest.mark.parametrize("name,protocol,limit,dist", CASES,
                         ids=[f"{n}-{p}-{'whole' if lim is None else 'strips'}-{d!r}" for n, p, lim, d in CASES])
def test_kernel_matches_numpy(name, protocol, limit, dist):
    pg.config(protocol=protocol, **({} if limit is None else {"buffer_limit": limit}))
    check_kernel(KERNELS[name], dist, 2)


@pytest.mark.parametrize("setting", ["pipelined", "bounding", "strips"])
def test_random_statements_match_numpy(setting):
    if setting == "strips":
        pg.config(buffer_limit=48)
    else:
        pg.config(protocol=setting)
    test_stmt.test_random_statements_match_numpy()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("limit", [48, 64, 1000])
def test_buffer_bound_holds_and_results_match(protocol, limit):
    """The fetch buffers held at once never exceed the limit; results are NumPy's."""
    pg.config(protocol=protocol, buffer_limit=limit)
    rng = np.random.default_rng(3)
    GA, GB = rng.standard_normal((12, 10)), rng.standard_normal((12, 10))
    A, B = pg.from_numpy(GA, dist=pg.Block()), pg.from_numpy(GB, dist=pg.Cyclic())
    C = pg.zeros((12, 10), dist=pg.BlockCyclic(3))
    transfer.reset_peak()
    C[1:-1, ::-1] = A[:-2, :] + B[2:, :] * A[1:-1, ::-1]
    peak = transfer.reset_peak()
    want = np.zeros((12, 10))
    want[1:-1, ::-1] = GA[:-2, :] + GB[2:, :] * GA[1:-1, ::-1]
    assert_matches(C, want)
    collective_verdict(peak <= limit, lambda: f"aggregation buffers peaked at {peak} bytes, limit {limit}")


@pytest.mark.parametrize("limit", [None, 64], ids=["whole", "strips"])
@pytest.mark.parametrize("protocol", ["pipelined", "packed", "auto"])
def test_remote_writes_and_accumulates(protocol, limit):
    """Write-backs and accumulates (owner="cost") through each protocol, also strip-mined."""
    pg.config(protocol=protocol, owner="cost", **({} if limit is None else {"buffer_limit": limit}))
    rng = np.random.default_rng(5)
    GM, Gx = rng.standard_normal((9, 11)), rng.standard_normal(11)
    M, x = pg.from_numpy(GM, dist=pg.BlockCyclic(2)), pg.from_numpy(Gx, dist=pg.Cyclic())
    y = pg.from_numpy(np.ones(9), dist=pg.Block())

    def body(i, j):
        y[i] += M[i, j] * x[j]

    pg.forall((range(9), range(11)), body)
    assert_matches(y, 1 + GM @ Gx, rtol=1e-12)
    G = rng.standard_normal(17)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    B = pg.from_numpy(G.copy(), dist=pg.Block())
    B[::2] = A[::-2] * 2
    want = G.copy()
    want[::2] = G[::-2] * 2
    assert_matches(B, want)


@pytest.fixture
def overlapping_model():
    """A model under which the overlap model strip-mines even tiny statements (slow
    transfers that proceed while computing, as slow a compute, free strips), restored
    afterwards."""
    from pgas.exec import calibration as calibrate

    calibrate.reset()
    slow = {"gap": 1e-7, "packed_gap": 1e-7, "copy_gap": 1e-7, "latency": 0.0}     # 0.8 us per float64
    calibrate._current.append(calibrate.Model(**{**calibrate.DEFAULTS, **slow, "overlap": 1.0, "strip": 0.0,
                                                 "task": 0.0, "compute": 4e-7}, source="test"))
    yield
    calibrate.reset()


def _mvt(n, dist, GA, gx):
    """y[i] += A[j, i] * x[j] with A remote: the paper's Figure 2 kernel; y and y's NumPy value."""
    A, x = pg.from_numpy(GA, dist=dist), pg.from_numpy(gx, dist=dist)
    y = pg.zeros(n, dist=dist)

    def body(i, j):
        y[i] += A[j, i] * x[j]
    return y, body


@pytest.mark.parametrize("strips", ["model", 1, 3, 7])
@pytest.mark.parametrize("dist", [pg.Cyclic(), pg.BlockCyclic(3), pg.Block()], ids=repr)
def test_every_strip_count_matches_numpy(strips, dist, overlapping_model):
    """The overlap model's choice (a model that strip-mines) and pinned counts, with and
    without a buffer limit forcing more: the Figure 2 kernel, a stencil kernel, and
    random slice statements (which draw their own distributions, so once per count)
    give NumPy's results."""
    from pgas.exec import strip

    pg.config(**({} if strips == "model" else {"strips": strips}))
    rng = np.random.default_rng(5)
    n = 13
    GA, gx = rng.standard_normal((n, n)), rng.standard_normal(n)
    for limit in (1 << 40, 160):
        pg.config(buffer_limit=limit)
        y, body = _mvt(n, dist, GA, gx)
        strip.clear()
        pg.forall((range(n), range(n)), body)
        assert_matches(y, GA.T @ gx, rtol=1e-12)
        made = [m for _, m in strip.choices()]
        if strips == "model" and P > 1 and limit > 1 << 30:         # on some locale at least
            some = comm.allreduce(int(any(m > 1 for m in made)), "max")
            collective_verdict(some == 1, f"the model strip-mined nowhere: {made}")
        check_kernel(KERNELS["jacobi2D"], dist, 2)
    if repr(dist) == repr(pg.Block()):
        pg.config(buffer_limit=1 << 40)
        test_stmt.test_random_statements_match_numpy()


def test_explain_says_the_strip_count_and_why(overlapping_model):
    n = 12
    GA, gx = np.ones((n, n)), np.ones(n)
    y, body = _mvt(n, pg.Block(), GA, gx)

    def said():
        return [ln for ln in pg.explain(lambda: pg.forall((range(n), range(n)), body), locales=2).splitlines()
                if ln.startswith("strips:")]
    auto = said()
    pg.config(strips=3)
    pinned = said()
    pg.config(strips="auto", buffer_limit=200)
    limited = said()
    pg.config()
    from pgas.exec import calibration as calibrate

    calibrate.reset()                       # the defaults: no overlap measured
    none = said()
    ok = (len(auto) == 1 and "overlap model (test; overlap 1.00)" in auto[0] and "1 strip (no" not in auto[0]
          and "pinned by pg.config(strips=3)" in pinned[0] and "3 strips" in pinned[0]
          and "the buffer limit of 200 bytes forces at least" in limited[0]
          and "1 strip (no strip-mining)" in none[0] and "no overlap measured" in none[0])
    collective_verdict(ok, f"{auto}\n{pinned}\n{limited}\n{none}")


def test_strip_overhead_is_measured_through_the_runtime():
    """pgas calibrate's per-strip cost (pgas.tools.calibrate.statements): finite, non-negative, from a run
    in several strips; nothing at one locale; the settings are left as they were."""
    import math

    from pgas.tools.calibrate import statements as rates

    pg.config(buffer_limit=12345, strips=2)
    got = rates.measure(reps=1)
    from pgas.exec import settings

    kept = settings.get("buffer_limit") == 12345 and settings.get("strips") == 2
    ok = (got == {} if P == 1 else (math.isfinite(got["strip_overhead"]) and got["strip_overhead"] >= 0
                                    and got["strip_count"] > 1))
    collective_verdict(ok and kept, f"{got}, kept settings: {kept}")


def test_bad_settings_raise_everywhere():
    with pytest.raises(ValueError, match="protocol must be one of"):
        pg.config(protocol="fast")
    with pytest.raises(ValueError, match="buffer_limit must be a positive"):
        pg.config(buffer_limit=0)
    with pytest.raises(ValueError, match="burst must be a non-negative"):
        pg.config(burst=-1)
    for bad in (0, -2, 1.5, True, "fast"):
        with pytest.raises(ValueError, match="strips must be 'auto' or a positive"):
            pg.config(strips=bad)


@pytest.mark.parametrize("burst", [1, 3])
def test_pipelined_bursts(burst):
    pg.config(protocol="pipelined", burst=burst)
    G = np.arange(60.0).reshape(6, 10)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    B = pg.zeros((6, 10), dist=pg.Block())
    B[:, 1:] = A[:, :-1] + A[:, 1:]
    want = np.zeros((6, 10))
    want[:, 1:] = G[:, :-1] + G[:, 1:]
    assert_matches(B, want)


@pytest.mark.parametrize("protocol", ["auto", "packed"])
def test_explain_shows_descriptors_and_protocol(protocol):
    """Under the model's choice the statement's messages are persistent two-sided transfers
    (pgas.exec.persistent); a pinned protocol is the generic path's, with its predictions."""
    pg.config(protocol=protocol)
    A = pg.from_numpy(np.arange(40.0), dist=pg.Cyclic())
    B = pg.zeros(40, dist=pg.Block())
    text = pg.explain(lambda: B.__setitem__(slice(1, None), A[:-1]), locales=4)
    how = "two-sided" if protocol == "auto" else "predicted us"
    collective_verdict("LMADs +" in text and how in text and " run" in text and
                       ("persistent two-sided" in text) == (protocol == "auto"), text)


def test_calibration_measures_and_statements_load_it(tmp_path, monkeypatch):
    """pgas calibrate's measuring and fitting at this locale count; the stored file is what
    statements then load (each locale writes its own copy under its own cache dir here)."""
    import math

    from pgas.exec import calibration as calibrate
    from pgas.tools.calibrate import network as measuring

    meas = measuring.measure(reps=1, progress=False)
    figs = measuring.fit(meas)
    collective_verdict(all(math.isfinite(v) and v >= 0 for v in figs.values()) and 0 <= figs["overlap"] <= 1
                       and set(calibrate.OPTIONAL) <= set(figs), str(figs))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PGAS_CALIBRATION", raising=False)
    calibrate.save(calibrate.this_key(), figs, meas)
    calibrate.reset()
    try:
        model = calibrate.current()
        collective_verdict(model.source.startswith(str(tmp_path)) and model.figures() == figs, model.source)
        pg.config(protocol="auto")
        test_stmt.test_random_statements_match_numpy()      # whatever the measured model picks
    finally:
        calibrate.reset()


def test_bench_protocols_runs(tmp_path):
    from pgas.tools.bench import protocols

    status = protocols.main(["--lengths", "1,64", "--counts", "1,16", "--trials", "1", "--warmup", "0",
                             "--out", str(tmp_path / "p.json"), "--png", str(tmp_path / "p.png")])
    collective_verdict(status == 0, f"status {status}")


def test_bench_protocols_strip_sweep_runs(tmp_path):
    """pgas bench protocols --strips: every pinned count and the model's choice timed and
    correct, the summary's ratios present."""
    import json

    from pgas.tools.bench import protocols

    out = tmp_path / "s.json"
    status = protocols.main(["--strips", "24", "--trials", "1", "--warmup", "0", "--out", str(out),
                             "--png", str(tmp_path / "s.png")])
    ok = status == 0
    if comm.here() == 0:
        doc = json.load(open(out))
        ok &= [r["strips"] for r in doc["runs"]][:2] == ["auto", 1] and doc["summary"]["correct"]
        ok &= all(k in doc["summary"] for k in ("auto_over_no_strips", "auto_over_best_fixed", "load"))
    collective_verdict(ok, f"status {status}")


def test_bench_plan_overhead_parts(tmp_path):
    """pgas bench plan's planning overhead per kernel: every stage reported, finite."""
    import json
    import math

    from pgas import comm
    from pgas.tools.bench import plan

    out = tmp_path / "plan.json"
    status = plan.main(["--skip-scaling", "--kernels", "jacobi1D,mvt", "--kernel-steps", "1", "--trials", "1",
                        "--warmup", "0", "--reps", "2", "--halo-size", "16", "--out", str(out)])
    ok = status == 0
    if comm.here() == 0:
        doc = json.load(open(out))
        rows = doc["overhead"]["kernels"]
        ok &= [r["kernel"] for r in rows] == ["jacobi1D", "mvt"]
        ok &= all(set(r["parts_us_per_step"]) == {"trace", "lower", "plan", "fetch", "compute", "write", "sync"}
                  and all(math.isfinite(v) and v >= 0 for v in r["parts_us_per_step"].values())
                  and r["first_plan_us_per_statement"] > 0 for r in rows)
    collective_verdict(ok, f"status {status}")


def _attempt(f):
    """Run f on every locale; return (result, None) or (None, 'Type: message')."""
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the finding is the exception itself
        return None, f"{type(e).__name__}: {e}"


def data(shape, seed=0):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(float)


# ---------------------------------------------------------------------------
# 4. Protocol choice
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", ["auto", "packed", "pipelined", "bounding"])
def test_protocols_give_numpy(protocol):
    _, err = _attempt(lambda: pg.config(protocol=protocol))
    if err is not None:
        pytest.skip(err)
    try:
        for dist in [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]:
            G, H = data((13, 11), 1), data((13, 11), 2)
            A, B = pg.from_numpy(G, dist=dist), pg.from_numpy(H, dist=pg.Cyclic())
            C = pg.zeros((13, 11), dist=dist)
            C[1:-1, 2:] = A[2:, :-2] * B[:-2, 1:-1]
            want = np.zeros((13, 11))
            want[1:-1, 2:] = G[2:, :-2] * H[:-2, 1:-1]
            assert_matches(C, want)
            D = pg.zeros((11, 13), dist=dist)
            D[...] = A.T + B.T[:, ::-1]
            assert_matches(D, G.T + H.T[:, ::-1])
            F = pg.zeros(11, dist=dist)
            F[::-2] = A[3, ::-2] - B[::2, 4][:6]
            want = np.zeros(11)
            want[::-2] = G[3, ::-2] - H[::2, 4][:6]
            assert_matches(F, want)
    finally:
        pg.config()
