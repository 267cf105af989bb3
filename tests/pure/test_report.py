"""The benchmark report and plots build from a small saved JSON alone; ownership maps
and footprints match the paper's Figures 1-3 and 6 and the planner; the CLI pieces."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from pgas.tools.bench import report, suite
from pgas.tools.bench.kernelrun import make_parser
from pgas.tools.cli import main as cli_main
from pgas.layout import Block, BlockCyclic, Cyclic
from pgas.plan import plan_local
from pgas.plan.draw import footprints, ownership, ownership_text
from pgas.tools.show import jacobi_statement


def _run(study, kernel, dist, block, locales, mode, msgs, secs, n=100, correct=True):
    return {"study": study, "kernel": kernel, "n": n, "dist": dist, "block": block, "locales": locales,
            "mode": mode, "steps": 2, "messages_per_step": float(msgs), "bytes_per_step": 8.0 * msgs * 10,
            "elements_per_message": 10.0 if msgs else 0.0, "max_elements_per_message": 16.0 if msgs else 0.0,
            "seconds_per_step": secs, "correct": correct,
            "max_rel_error": 0.0 if correct else 0.5}


def small_results():
    runs = []
    for k, (bm, am) in {"jacobi1D": (400, 4), "pascal": (1600, 16)}.items():
        for d, b in (("Block", None), ("Cyclic", None), ("BlockCyclic", 4)):
            runs += [_run("kernels", k, d, b, 4, "baseline", bm, 0.2), _run("kernels", k, d, b, 4, "aggregated", am, 0.1),
                     _run("kernels", k, d, b, 4, "auto", am, 0.05)]
        for P in (1, 2, 4):
            for d, b in (("Cyclic", None), ("BlockCyclic", 4)):
                runs += [_run("strong", k, d, b, P, "baseline", 0 if P == 1 else bm, 0.2),
                         _run("strong", k, d, b, P, "aggregated", 0 if P == 1 else am, 0.1)]
        for n in (50, 100, 200):
            runs += [_run("weak", k, "Cyclic", None, 4, "baseline", 4 * n, 0.2, n=n),
                     _run("weak", k, "Cyclic", None, 4, "aggregated", 4, 0.1, n=n)]
        for b in (1, 4, 16):
            runs += [_run("blocksize", k, "BlockCyclic", b, 4, "baseline", bm // b, 0.2),
                     _run("blocksize", k, "BlockCyclic", b, 4, "aggregated", am, 0.1)]
        for P in (16, 64, 1024):
            runs.append({"study": "planned", "kernel": k, "n": 1000, "dist": "Cyclic", "block": None, "locales": P,
                         "mode": "aggregated", "statements": 2, "messages": 2 * P, "elements_moved": 2000,
                         "elements_per_message": 1000 / P, "exact": P <= 64})
    runs.append({"study": "planned", "kernel": "mvt", "n": 10, "dist": "Cyclic", "block": None, "locales": 16,
                 "mode": "aggregated", "error": "TraceError: cannot explain"})
    runs.append(_run("kernels", "mvt", "Cyclic", None, 4, "aggregated", 1, 0.1, correct=False))
    return {"benchmark": "suite", "environment": {"host": "test", "cpus": 2}, "preset": "small", "locales": 4,
            "steps": 2, "runs": runs, "failures": []}


@pytest.fixture
def saved(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(small_results()))
    return tmp_path


def test_markdown_tables_ratios_and_geometric_means(saved):
    files = report.build(str(saved), plots=False)
    assert files == [str(saved / "report.md")]
    md = (saved / "report.md").read_text()
    for title in ("Figure 11", "Figure 12", "Figure 13", "Strong scaling", "Weak scaling", "Block size",
                  "planning alone"):
        assert title in md
    # Cyclic aggregated messages: 4/400 and 16/1600 -> geometric mean 0.01; auto time 0.05/0.2 = 0.25
    row = next(line for line in md.splitlines() if line.startswith("| **geometric mean**") and "0.01" in line)
    assert row.count("0.01") >= 3 and "0.25" not in row
    assert "Cyclic aggregated: messages x0.01, time x0.5" in md and "Cyclic auto: messages x0.01, time x0.25" in md
    assert "| 1024 locales |" in md and "2048 (0.9766)" in md
    assert "planning mvt on 16 locales failed: TraceError" in md
    # the wrong run is named at the top and left out of the tables
    fig11 = md[md.index("## Figure 11"):md.index("## Figure 13")]
    assert "Cyclic max | Cyclic mean" in fig11 and "| 16 | 10 |" in fig11      # the largest message, then the mean
    assert "WARNING: 1 of" in md and "mvt n=100 Cyclic aggregated" in md
    assert "| mvt | 100 |" not in md and "| mvt | 10 | Cyclic | error |" in md


def test_ratios_pair_with_the_matching_baseline_only():
    runs = small_results()["runs"]
    pairs = report.paired(runs)
    strong = [p for p in pairs if p["study"] == "strong"]
    assert {p["message_ratio"] for p in strong if p["locales"] == 1} == {None}        # baseline sent nothing
    assert all(math.isclose(p["time_ratio"], 0.5) for p in strong)
    assert not [p for p in pairs if p["kernel"] == "mvt"]                               # wrong, and no baseline
    assert math.isnan(report.geomean([None, 0.0]))


def test_plots_are_written_from_the_json_and_are_non_trivial(saved):
    pytest.importorskip("matplotlib")
    files = report.build(str(saved))
    pngs = [f for f in files if f.endswith(".png")]
    names = {os.path.basename(f) for f in pngs}
    assert {"fig12_time.png", "fig13_messages.png", "strong_pascal.png", "weak_jacobi1D.png",
            "blocksize_pascal.png", "planned_messages.png"} <= names
    for f in pngs:
        data = open(f, "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, f
    md = (saved / "report.md").read_text()
    assert all(f"![{n}]({n})" in md for n in names)


def test_report_command(saved, capsys):
    assert cli_main(["report", str(saved), "--no-plots"]) == 0
    assert "report.md" in capsys.readouterr().out
    assert cli_main(["report", str(saved / "missing")]) == 1
    assert "no results at" in capsys.readouterr().err
    (saved / "bad.json").write_text("[1, 2]")
    assert cli_main(["report", str(saved / "bad.json")]) == 1
    assert "holds no benchmark runs" in capsys.readouterr().err


def test_missing_matplotlib_gives_a_clear_error(saved, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(report.PlotsUnavailable, match=r"pip install 'pgas\[plot\]'"):
        report.build(str(saved))
    assert not (saved / "report.md").exists()


def test_ownership_maps_are_the_papers_figures_1_to_3():
    b, c, bc = (ownership(d.bind((8, 8), 4)) for d in (Block(), Cyclic(), BlockCyclic(2)))
    i, j = np.indices((8, 8))
    assert np.array_equal(b, 2 * (i // 4) + j // 4)
    assert np.array_equal(c, 2 * (i % 2) + j % 2)
    assert np.array_equal(bc, 2 * ((i // 2) % 2) + (j // 2) % 2)
    assert ownership_text(Cyclic().bind((6,), 3)) == "0 1 2 0 1 2"
    with pytest.raises(ValueError, match="1-D and 2-D"):
        ownership(Block().bind((2, 2, 2), 2))


@pytest.mark.parametrize("dist", [Cyclic(), Block(), BlockCyclic(2)])
def test_footprints_are_figure_6_and_agree_with_the_planner(dist):
    n, P = 8, 4
    stmt = jacobi_statement(n)
    lay = (dist.bind((n, n), P),) * 2
    total = 0
    for r in range(P):
        fps = footprints(stmt, lay, r, names=["B", "A"])
        union = {}
        for f in fps:
            for q, idx in f["remote"].items():
                union.setdefault(q, set()).update(map(tuple, idx.tolist()))
                assert all(ownership(lay[1])[tuple(e)] == q for e in idx)
        lp = plan_local(stmt, lay, 0, r)
        assert {m.peer for m in lp.fetches} == set(union)
        assert lp.moved == sum(len(s) for s in union.values())
        total += sum(len(f["remote"]) for f in fps)
        if dist == Cyclic() and r == 3:
            assert [sum(len(i) for i in f["remote"].values()) for f in fps] == [9] * 4
    if dist == Cyclic():
        assert total == 16            # Figure 6: 16 remote gets of nine elements each


def test_show_prints_maps_and_footprints(capsys):
    assert cli_main(["show"]) == 0
    out = capsys.readouterr().out
    assert "Cyclic, 8x8 on 4 locales:\n0 1 0 1 0 1 0 1\n2 3 2 3" in out
    assert "A[i, j - 1]: 9 elements fetched from locale 2\n" in out
    # the four accesses' elements travel in one message from each of locales 1 and 2
    assert "in all: locale 3 moves 24 elements in 2 messages" in out
    assert cli_main(["show", "--locale", "9"]) == 2
    assert "--locale must be in 0..3" in capsys.readouterr().err


def test_show_writes_pngs(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert cli_main(["show", "--out", str(tmp_path), "--dist", "blockcyclic"]) == 0
    for name in ("ownership.png", "footprints.png"):
        assert (tmp_path / name).stat().st_size > 10_000


def test_bench_run_and_suite_arguments(capsys):
    args = make_parser().parse_args(["jacobi2D,pascal", "--dist", "CYCLIC,blockcyclic", "--locales", "3",
                                     "--size", "tiny", "--mode", "baseline"])
    assert (args.kernel, args.dist, args.n, args.mode) == (["jacobi2D", "pascal"], ["Cyclic", "BlockCyclic"], 3,
                                                          ["baseline"])
    for bad, msg in ((["nokernel"], "unknown kernel nokernel"), (["mvt", "--dist", "diagonal"], "unknown distribution"),
                     (["mvt", "--size", "huge"], "whole number"), (["mvt", "--block", "0"], "must be >= 1")):
        assert cli_main(["bench", "run", *bad]) == 2
        assert msg in capsys.readouterr().err
    assert cli_main(["bench", "suite", "--studies", "kernels,nope"]) == 2
    assert "unknown study nope" in capsys.readouterr().err
    assert cli_main(["bench", "list"]) == 0
    listing = capsys.readouterr().out
    assert "kernels (pgas bench run KERNEL" in listing and "jacobi2D" in listing and "suite" in listing


def test_suite_configurations_cover_every_figure():
    jobs = suite.configs("small", 3, ["jacobi2D", "mvt"], list(suite.STUDIES))
    assert sorted(jobs) == [1, 2, 3]
    allc = [c for cs in jobs.values() for c in cs]
    assert {c["study"] for c in allc} == set(suite.STUDIES) - {"blocksize"}     # no 1-D kernel asked for
    kern = [c for c in jobs[3] if c["study"] == "kernels"]
    assert len(kern) == 2 * 3 * 3 and {c["mode"] for c in kern} == {"baseline", "aggregated", "auto"}
    assert all(c["kernel"] == "jacobi2D" for c in allc if c["study"] in ("strong", "weak", "planned"))
    assert {c["locales"] for c in jobs[1] if c["study"] == "planned"} == {16, 64, 256, 1024}


def test_suite_driver_runs_jobs_merges_and_reports(tmp_path):
    out = subprocess.run([sys.executable, "-m", "pgas.tools.cli", "bench", "suite", "--out", str(tmp_path), "--locales", "2",
                          "--kernels", "jacobi1D", "--studies", "kernels,strong", "--steps", "1", "--no-plots",
                          "--timeout", "240"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "results.json").read_text())
    runs = data["runs"]
    assert {r["locales"] for r in runs} == {1, 2} and data["failures"] == [] and len(runs) == 9 + 4 + 4
    assert all(r["correct"] for r in runs)
    assert {r["messages_per_step"] for r in runs if r["locales"] == 1} == {0.0}
    md = (tmp_path / "report.md").read_text()
    assert f"All {len(runs)} measured runs matched their NumPy reference." in md and "### jacobi1D" in md


def test_strong_scaling_axis_ticks_whole_locale_counts(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from pgas.tools.bench import figures

    ticks = []
    monkeypatch.setattr(figures, "_save", lambda fig, outdir, name, names: ticks.extend(
        [t.get_text() for t in ax.get_xticklabels()] for ax in fig.axes))
    pairs = [{"study": "strong", "mode": "aggregated", "kernel": "jacobi2D", "dist": "Cyclic", "locales": P,
              "message_ratio": 0.1, "time_ratio": 0.5, "elements_per_message": 10.0 * P} for P in (1, 2, 3)]
    figures._lines(pairs, "strong", "locales", "locales", str(tmp_path), [])
    assert ticks == [["1", "2", "3"], ["1", "2", "3"]]
