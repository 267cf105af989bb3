"""``pgas bench run`` and the suite's jobs at small sizes: every run verified against
NumPy, message counts consistent across modes, a wrong result never reported as
correct; explain's plot and planned message counts (no timings asserted).

Also: ``--resume`` after a cut-short line."""

import dataclasses
import json
import os

import numpy as np
import pytest
from util import collective_verdict

import pgas as pg
from pgas import comm
from pgas.tools.bench import kernelrun, suite
from pgas.tools.bench.kernels import KERNELS
from pgas.tools.bench.measure import measure, planned


def test_bench_run_tiny_verifies_every_distribution_and_mode(tmp_path):
    path = comm.bcast(str(tmp_path / "run.json"), 0)
    status = kernelrun.main(["jacobi1D,jacobi2D", "--dist", "block,cyclic,blockcyclic", "--block", "2",
                             "--size", "tiny", "--steps", "1", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    ok, why = True, ""
    if pg.here == 0:
        rows = json.load(open(path))["runs"]
        assert len(rows) == 2 * 3 * 3 and all(r["correct"] and r["study"] == "kernels" for r in rows)
        by = {(r["kernel"], r["dist"], r["mode"]): r for r in rows}
        for (k, d, m), r in by.items():
            base = by[(k, d, "baseline")]
            if pg.num_locales == 1:
                ok &= r["messages_per_step"] == 0
            elif m != "baseline":
                ok &= 0 < r["messages_per_step"] <= base["messages_per_step"]
                ok &= r["bytes_per_step"] <= base["bytes_per_step"] * 4
            if not ok:
                why = f"{k} {d} {m}: {r['messages_per_step']} messages vs baseline {base['messages_per_step']}"
                break
        assert by[("jacobi1D", "BlockCyclic", "aggregated")]["block"] == 2
    collective_verdict(ok, why)


def test_a_wrong_result_is_marked_and_fails_the_run():
    k = KERNELS["pascal"]

    def off_by_one(n, steps):
        want = k.reference(n, steps)
        want["A"][-1] += 1
        return want

    bad = dataclasses.replace(k, reference=off_by_one)
    row = measure(bad, k.tiny, "Cyclic", None, "aggregated", 1)
    collective_verdict(not row["correct"] and row["max_rel_error"] > 0, f"wrong result not caught: {row}")
    good = measure(k, k.tiny, "Cyclic", None, "auto", 1)
    collective_verdict(good["correct"] and good["max_rel_error"] == 0, f"{good}")


def test_suite_job_runs_measured_and_planned_configurations(tmp_path):
    out = comm.bcast(str(tmp_path), 0)
    jobs = suite.configs("small", pg.num_locales, ["folding"], ["kernels", "planned"])
    mine = [c for c in jobs.get(pg.num_locales, []) if c["study"] == "kernels"][:3]
    mine += [dict(c, n=KERNELS["folding"].tiny) for c in jobs[1] if c["study"] == "planned"][:2]
    path = os.path.join(out, "job.json")
    if pg.here == 0:
        os.makedirs(os.path.join(out, "raw"), exist_ok=True)
        json.dump(mine, open(path, "w"))
    comm.barrier()
    status = suite.run_job(path, os.path.join(out, "raw", "job.jsonl"), 1)
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        with open(os.path.join(out, "raw", "job.jsonl"), "a") as f:
            f.write('{"config": {"cut short')          # a job killed mid-line: skipped
        done, rows = suite.load_rows(os.path.join(out, "raw", "job.jsonl"))
        assert done == mine
        assert [r["study"] for r in rows] == ["kernels"] * 3 + ["planned"] * 2
        assert all(r["correct"] for r in rows[:3])
        assert [(r["locales"], r["exact"], r["messages"] > 0) for r in rows[3:]] == [(16, True, True), (64, True, True)]


def test_planned_counts_match_a_measured_run_at_this_locale_count():
    k = KERNELS["jacobi2D"]
    if pg.num_locales == 1:
        pytest.skip("no messages on one locale")
    ran = measure(k, 16, "Cyclic", None, "aggregated", 1)
    plan = planned(k, 16, "Cyclic", None, pg.num_locales)
    collective_verdict(ran["messages_per_step"] == plan["messages"], f"measured {ran}, planned {plan}")


def test_explain_plot_draws_the_statements_footprints(tmp_path):
    pytest.importorskip("matplotlib")
    out = comm.bcast(str(tmp_path), 0)
    A = pg.from_numpy(np.arange(64.0).reshape(8, 8), dist=pg.Cyclic())
    B = pg.zeros((8, 8), dist=pg.Cyclic())

    def step():
        B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
        A[1:, :] = B[:-1, :]

    png = os.path.join(out, f"fp-{pg.here}.png")
    text = pg.explain(step, locales=4, locale=3, plot=png)
    ok = "all 4 locales: 8 messages" in text and os.path.getsize(png) > 10_000
    collective_verdict(ok, text)
    with pytest.raises(ValueError, match="locale=7 is not one of the 4"):
        pg.explain(step, locales=4, locale=7, plot=png)


def test_show_a_kernel_step(capsys):
    from pgas.tools.cli import main as cli_main

    status = cli_main(["show", "--kernel", "fdtd-2d", "--size", "8", "--locales", "4", "--locale", "1"])
    out = capsys.readouterr().out
    ok = status == 0 and "Cyclic, 8x8 on 4 locales" in out and out.count("statement:") == 4 and "plan: locale 1" in out
    collective_verdict(ok, out[-2000:])


P = pg.num_locales


me = pg.here


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
