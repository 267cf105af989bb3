"""``pgas bench scaling`` at tiny sizes: a job runs every kernel in both modes and verifies
each implementation; the sweep combines the jobs' rows into its JSON (speedup and efficiency
against the smallest count), table and plot; bad arguments are refused before any job starts.
No timings asserted."""

import json
import os

import pytest
from util import collective_verdict

import pgas as pg
from pgas import comm
from pgas.tools.bench import scaling

P = pg.num_locales
me = pg.here


def _configs():
    return [dict(kernel=k, mode=m, **scaling.problem(k, "tiny", m, P)) for k in scaling.KERNELS for m in scaling.MODES]


def test_a_job_runs_every_kernel_in_both_modes_and_verifies_each(tmp_path):
    out = comm.bcast(str(tmp_path), 0)
    todo = _configs()
    path, raw = os.path.join(out, "job.json"), os.path.join(out, "job.jsonl")
    if me == 0:
        json.dump(todo, open(path, "w"))
    comm.barrier()
    status = scaling.run_job(path, raw, 1, None)
    collective_verdict(status == 0, f"status {status}")
    ok, why = True, ""
    if me == 0:
        from pgas.tools.bench.suite import load_rows

        done, rows = load_rows(raw)
        ok &= done == todo
        for c, r in zip(done, rows):
            impls = {"pgas", "hand_mpi4py"} if c["kernel"] in ("jacobi2d", "fdtd2d") else {"pgas"}
            good = (r["locales"] == P and set(r["impls"]) == impls and {**r, "impls": None} == {**c, "locales": P,
                    "impls": None} and all(i["verified"] is True and i["seconds"] > 0 for i in r["impls"].values()))
            if not good:
                ok, why = False, f"{c}: {r}"
                break
        summary = scaling.summarise(rows)
        ok &= len(summary) == sum(len(r["impls"]) for r in rows)
        ok &= all(e["speedup"] == e["efficiency"] == 1.0 for e in summary)      # one count: its own base
    collective_verdict(ok, why)


def test_the_sweep_combines_the_jobs_into_json_table_and_plot(tmp_path, monkeypatch, capsys):
    import pgas.tools.launch.launcher as launcher

    out = comm.bcast(str(tmp_path), 0)

    def fake_launch(n, argv, timeout):             # a job: every configuration, n times faster than 1 locale
        with open(argv[argv.index("--job") + 1]) as f, open(argv[argv.index("--out") + 1], "a") as w:
            for c in json.load(f):
                row = {**c, "locales": n, "impls": {"pgas": {"seconds": c["work"] / n, "verified": True}}}
                w.write(json.dumps({"config": c, "row": row}) + "\n")
        return 0 if n < 4 else 3
    monkeypatch.setattr(launcher, "launch", fake_launch)
    monkeypatch.setattr(launcher, "under_launcher", lambda: False)
    # the plot only once: the sweep runs on locale 0 alone, whatever the count (and drawing takes seconds)
    png = os.path.join(out, "s.png") if P == 1 and pytest.importorskip("matplotlib") else None
    ok, why = True, ""
    if me == 0:                                    # (no collective inside: the jobs are faked)
        try:
            status = scaling.main(["--locales", "4,1,2", "--kernels", "stream,matmul", "--size", "tiny",
                                   "--json", os.path.join(out, "s.json")] + (["--png", png] if png else []))
            data = json.load(open(os.path.join(out, "s.json")))
            text = capsys.readouterr().out
            eff = {(e["mode"], e["kernel"], e["locales"]): round(e["efficiency"], 9) for e in data["summary"]}
            ok = (status == 1 and data["benchmark"] == "scaling" and data["locales"] == [1, 2, 4]
                  and data["modes"] == ["strong", "weak"] and len(data["runs"]) == 12 and not data["verified"]
                  and data["failures"] == ["the job on 4 locale(s) ended with status 3"]
                  and set(eff.values()) == {1.0} and len(eff) == 12 and "efficiency" in text
                  and (png is None or os.path.getsize(png) > 10_000))
            why = f"status {status}, {data}, {text}"
        except Exception as e:  # noqa: BLE001 - reported on every locale below
            ok, why = False, f"{type(e).__name__}: {e}"
    collective_verdict(ok, why)


@pytest.mark.parametrize("argv, message", [
    (["--locales", "0,2"], "locale counts >= 1"),
    (["--locales", "two"], "comma-separated whole numbers"),
    (["--kernels", "jacobi2d,lu"], "unknown lu"),
    (["--size", "huge"], "invalid choice"),
    (["--reference", "/nonexistent"], "no executable jacobi2d_mpi"),
    (["-n", "4", "--locales", "1,2"], "not both"),
    (["-n", "0"], "must be >= 1"),
])
def test_bad_arguments_are_refused_before_any_job(argv, message, monkeypatch, capsys):
    import pgas.tools.launch.launcher as launcher

    monkeypatch.setattr(launcher, "under_launcher", lambda: False)
    monkeypatch.setattr(launcher, "launch", lambda *a: pytest.fail("a job was started"))
    with pytest.raises(SystemExit):
        scaling.main(argv)
    err = capsys.readouterr().err
    collective_verdict(message in err, err)
