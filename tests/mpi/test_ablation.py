"""The XL UPC ablation switches of ``pg.config`` (``privatise``, ``forall``, ``oneway``, and
``aggregate`` for ``update``): each changes what it claims (the counts of
``pg.comm_diagnostics``) and never a result; ``pgas bench ablation`` runs and writes JSON."""

import json

import numpy as np
import pytest
from util import collective_verdict

import pgas as pg
from pgas import comm
from pgas.exec import settings

SWITCHES = ("privatise", "forall", "oneway", "aggregate")


@pytest.fixture(autouse=True)
def _defaults():
    yield
    pg.config()


def _stencil(A, B):
    B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])


def _run_stencil(**kw):
    n = 23

    def _column(i):
        B[i, 0] = A[i - 1, 3] * 2

    A = pg.from_numpy(np.arange(n * n, dtype=np.float64).reshape(n, n) % 7, dist=pg.Cyclic())
    B = pg.zeros((n, n), dist=pg.Block())
    pg.config(protocol="packed", **kw)     # the generic path either way (the switches leave the fast ones)
    with pg.comm_diagnostics() as d:
        _stencil(A, B)
        pg.forall(range(1, n - 1), _column)
    out = B.to_numpy()
    pg.config()
    return out, d


def test_privatise_off_reads_own_elements_through_the_window():
    want, d0 = _run_stencil()
    got, d1 = _run_stencil(privatise=False)
    collective_verdict(np.array_equal(got, want), "privatise=False changed the result")
    collective_verdict(d0.local_window_accesses == 0, f"{d0.local_window_accesses} window accesses with it on")
    collective_verdict(d1.local_window_accesses > 0, "no local window access counted with privatise=False")
    collective_verdict(d1.messages == d0.messages, f"messages {d1.messages} vs {d0.messages}")
    collective_verdict(d1.affinity_tests == 0, "privatise=False ran affinity tests")


@pytest.mark.parametrize("fuse", ["auto", True])
def test_privatise_off_repeats_of_a_fused_statement_read_the_window_copies(fuse):
    """A repeated fused task does not reuse a row layout made for its window copies on the storage."""
    n = 64
    G = np.random.default_rng(2).standard_normal((n, n))
    pg.config(privatise=False, fuse=fuse)
    A = pg.from_numpy(G)
    W = G.copy()
    for _ in range(3):
        A[1:, :] = A[:-1, ::-1] * 2 + A[1:, :]
        W[1:, :] = W[:-1, ::-1] * 2 + W[1:, :]
    got = A.to_numpy()
    collective_verdict(np.array_equal(got, W), lambda: f"rows differ: {sorted(set(np.argwhere(got != W)[:, 0]))[:5]}")


def test_forall_off_tests_every_iteration_on_every_locale():
    n = 23
    want, d0 = _run_stencil()
    got, d1 = _run_stencil(forall=False)
    collective_verdict(np.array_equal(got, want), "forall=False changed the result")
    domain = (n - 2) ** 2 + (n - 2)                    # the statement's iterations, then the forall's
    P = pg.num_locales
    collective_verdict(d0.affinity_tests == 0, f"{d0.affinity_tests} affinity tests with forall on")
    collective_verdict(d1.affinity_tests == P * domain, f"{d1.affinity_tests} tests, want {P} x {domain}")
    collective_verdict(d1.affine_iterations == domain, f"{d1.affine_iterations} iterations passed, want {domain}")
    collective_verdict(d1.messages == d0.messages and d1.local_window_accesses == 0, "forall=False changed more")


def _updates(fine: bool, dtype, op: str, **kw):
    n = 29
    rng = np.random.default_rng(comm.here())
    idx = rng.integers(0, n, size=60)
    vals = rng.integers(0, 1 << 30, size=60).astype(dtype)
    T = pg.from_numpy(np.arange(n).astype(dtype), dist=pg.Cyclic())
    pg.config(**kw)
    with pg.comm_diagnostics() as d:
        if fine:
            for i, v in zip(idx.tolist(), vals.tolist()):
                T.update_one(i, v, op)
            pg.barrier()
        else:
            T.update(idx, vals, op)
    out = T.to_numpy()
    pg.config()
    remote = int(comm.allreduce(int(np.count_nonzero(T.layout.owners((idx,)) != comm.here())), "sum"))
    return out, d, remote


@pytest.mark.parametrize("op", ["xor", "add", "max"])
def test_oneway_off_update_one_is_a_get_and_a_compare_and_swap(op):
    want, d0, remote = _updates(True, np.int64, op)
    got, d1, _ = _updates(True, np.int64, op, oneway=False)
    collective_verdict(np.array_equal(got, want), "oneway=False changed update_one's result")
    collective_verdict(d0.messages == remote, f"one-way: {d0.messages} messages for {remote} remote updates")
    collective_verdict(d1.messages >= 2 * remote, f"round trips: {d1.messages} messages for {remote} remote updates")


@pytest.mark.parametrize("dtype,op", [(np.int64, "xor"), (np.int64, "add"), (np.float64, "add"),
                                      (np.int64, "replace"), (np.float64, "max")])
@pytest.mark.parametrize("switch", ["oneway", "aggregate"])
def test_update_with_a_switch_off_gives_the_same_result(dtype, op, switch):
    want, d0, remote = _updates(False, dtype, op)
    got, d1, _ = _updates(False, dtype, op, **{switch: False})
    collective_verdict(np.array_equal(got, want), f"{switch}=False changed update's result")
    P = pg.num_locales
    pairs = int(np.count_nonzero(d0.matrix))
    if switch == "oneway":                         # a get and a put per pair instead of one message
        collective_verdict(d1.messages == 2 * pairs, f"{d1.messages} messages, want 2 x {pairs}")
    else:                                          # a message per distinct remote target at most
        collective_verdict(pairs <= d1.messages <= remote, f"{d1.messages} messages ({pairs} pairs, {remote})")
    collective_verdict(P == 1 or d1.messages > d0.messages, "the switch sent no more messages")


def test_update_with_an_index_plan_and_oneway_off():
    n = 31
    idx = (np.arange(40) * (comm.here() + 3)) % n
    T = pg.zeros(n, dtype=np.int64, dist=pg.Block())
    plan = T.index_plan(idx)
    T.update(plan, idx + 1, "add")
    want = T.to_numpy()
    T[...] = 0
    pg.config(oneway=False)
    T.update(plan, idx + 1, "add")
    collective_verdict(np.array_equal(T.to_numpy(), want), "oneway=False with an index plan changed the result")


def test_bad_input_with_oneway_off_raises_everywhere():
    T = pg.zeros(8, dtype=np.int64, dist=pg.Block())
    pg.config(oneway=False)
    bad = np.array([0, 100 if comm.here() == pg.num_locales - 1 else 1])
    with pytest.raises(IndexError):
        T.update(bad, 1, "add")
    T.update(np.array([1]), 1, "add")             # every locale still in step
    collective_verdict(int(T[1]) == pg.num_locales, "update after the error")


def test_bench_ablation_tiny_writes_json(tmp_path):
    from pgas.tools.bench import ablation

    path = comm.bcast(str(tmp_path / "ablation.json"), 0)
    status = ablation.main(["--log2-table", "5", "--size", "512", "--trials", "1", "--stream-trials", "1",
                            "--warmup", "0", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        data = json.load(open(path))
        assert data["verified"] and set(data["results"]) == {"randomaccess", "stream"}
        ra, st = data["results"]["randomaccess"], data["results"]["stream"]
        assert set(ra) == {name for name, _ in ablation.configurations("both")}
        assert st["forall off"]["affinity_tests"] > 0 and st["all on"]["affinity_tests"] == 0
        assert st["privatise off"]["local_window_accesses"] > 0
        if pg.num_locales > 1:
            assert ra["oneway off"]["messages"] > ra["all on"]["messages"]
            assert ra["aggregate off"]["messages"] > ra["all on"]["messages"]
    collective_verdict(all(settings.get(s) for s in SWITCHES), "the bench left a switch off")


def test_bench_nas_cg_blocking_and_optimised_both_verify(tmp_path):
    from pgas.tools.bench import nas

    path = comm.bcast(str(tmp_path / "nas.json"), 0)
    status = nas.main(["--kernels", "cg", "--classes", "S", "--trials", "1", "--variants", "blocking,optimised",
                       "--out", path])
    collective_verdict(status == 0, f"status {status}")
    collective_verdict(settings.get("nonblocking"), "the variants left nonblocking off")
    if pg.here == 0:
        (row,) = json.load(open(path))["results"]
        assert row["variant"] == "optimised" and set(row["variants"]) == {"blocking", "optimised"}
        assert all(v["verified"] for v in row["variants"].values()) and row["optimised_over_blocking"] > 0


def test_scaling_upc_tables_are_weak_randomaccess_and_stream(tmp_path, monkeypatch, capsys):
    import os

    import pgas.tools.launch.launcher as launcher
    from pgas.tools.bench import scaling, upcpaper

    out = comm.bcast(str(tmp_path), 0)

    def fake_launch(n, argv, timeout):             # a job: every configuration, at a rate n times 1 locale's
        with open(argv[argv.index("--job") + 1]) as f, open(argv[argv.index("--out") + 1], "a") as w:
            for c in json.load(f):
                row = {**c, "locales": n, "impls": {"pgas": {"seconds": c["work"] / n / 1e6, "verified": True}}}
                w.write(json.dumps({"config": c, "row": row}) + "\n")
        return 0
    monkeypatch.setattr(launcher, "launch", fake_launch)
    monkeypatch.setattr(launcher, "under_launcher", lambda: False)
    ok, why = True, ""
    if pg.here == 0:                               # (no collective inside: the jobs are faked)
        try:
            status = scaling.main(["--locales", "1,2", "--upc-tables", "--size", "tiny",
                                   "--json", os.path.join(out, "t.json")])
            data = json.load(open(os.path.join(out, "t.json")))
            rows = data["upc_tables"]
            text = capsys.readouterr().out
            ok = (status == 0 and data["modes"] == ["weak"] and data["kernels"] == ["randomaccess", "stream"]
                  and [(r["kernel"], r["locales"]) for r in rows] == [("randomaccess", 1), ("randomaccess", 2),
                                                                       ("stream", 1), ("stream", 2)]
                  and all(abs(r["efficiency %"] - 100) < 1e-6 for r in rows)
                  and rows[1]["paper efficiency %"] == upcpaper.TABLE1[2][2] and "Tables 1" in text)
            why = f"status {status}, {rows}"
        except Exception as e:  # noqa: BLE001 - reported on every locale below
            ok, why = False, f"{type(e).__name__}: {e}"
    collective_verdict(ok, why)
