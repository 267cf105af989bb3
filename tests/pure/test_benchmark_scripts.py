"""The scripts in ``benchmarks/`` run, at tiny sizes, under ``pgas run`` at 2 locales: a
benchmark that anyone can rerun must not rot between the sessions that measure with it.
Only what the scripts report that does not depend on time is checked."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_script(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "pgas.tools.cli", "run", "-n", "2", "--timeout", "120", *args]
    res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res


def test_stencil_overhead_compiled_runs_every_step_by_kept_kernel_calls(tmp_path):
    out = tmp_path / "compiled.json"
    run_script(tmp_path, str(ROOT / "benchmarks" / "stencil_overhead.py"), "--n", "16", "--reps", "2",
               "--compiled", "--json", str(out))
    got = json.loads(out.read_text())
    assert got["locales"] == 2
    steps = got["steps"]
    assert set(steps) == {"jacobi-2d step", "fdtd-2d step"}
    # every statement but fdtd's row fill (a kept fill: a copy, no kernel) replays by kept kernel calls
    assert steps["jacobi-2d step"]["statements_by_kept_calls"] == 2
    assert steps["fdtd-2d step"]["statements_by_kept_calls"] == 3
    for x in steps.values():
        assert all(x[f"{h}_fastest_us"] > 0 for h in ("plain", "compiled", "unmerged", "kernels"))


def test_median_benchmark_finds_numpys_median_and_quantiles(tmp_path):
    out = tmp_path / "median.json"
    run_script(tmp_path, str(ROOT / "benchmarks" / "median.py"), "--n", "5001", "--reps", "2", "--json", str(out))
    got = json.loads(out.read_text())
    assert got["locales"] == 2 and got["n"] == 5001 and got["equal_to_numpy"] is True
    assert all(got[k] > 0 for k in ("pgas_median_s", "numpy_median_s", "median_ratio", "quantile9_ratio"))


def test_stmt_scaling_counts_the_comm_layers_collectives(tmp_path):
    """A sort makes collective calls (its splitters' gather, at least the barrier the script
    counts): the profile's count finds them in the comm modules that define them."""
    out = tmp_path / "scaling.jsonl"
    run_script(tmp_path, str(ROOT / "benchmarks" / "stmt_scaling.py"), "--what", "sort", "--n", "200",
               "--reps", "2", "--json", str(out))
    got = json.loads(out.read_text().splitlines()[0])
    assert got["P"] == 2 and got["colls"] >= 1, got


def test_replay_calls_counts_python_calls_per_replayed_statement(tmp_path):
    out = tmp_path / "calls.json"
    run_script(tmp_path, str(ROOT / "benchmarks" / "replay_calls.py"), "--n", "16", "--warmup", "20", "--calls", "5",
               "--json", str(out))
    got = json.loads(out.read_text())
    assert got["locales"] == 2 and set(got["steps"]) == {"jacobi-2d", "fdtd-2d"}
    for x in got["steps"].values():
        assert x["calls_per_statement"] > 0 and x["slow"] == 0
        assert x["fast"] == x["statements"] * (x["replays"])


def test_alloc_sync_counts_one_collective_per_new_array(tmp_path):
    out = tmp_path / "alloc.json"
    run_script(tmp_path, str(ROOT / "benchmarks" / "alloc_sync.py"), "--n", "256", "--calls", "2", "--json", str(out))
    got = json.loads(out.read_text())
    assert got["locales"] == 2
    rows = got["per_call"]
    for what in ("pg.empty(n)", "A + B", "A.copy()"):
        assert rows[what]["collectives"] == 1 and rows[what]["windows"] == 0, (what, rows[what])
    assert rows["np.quantile(Q, [.1, .5, .9])"]["messages"] > 0


def test_step_chain_times_chained_and_unchained_steps_alike(tmp_path):
    out = tmp_path / "chain.json"
    run_script(tmp_path, str(ROOT / "benchmarks" / "step_chain.py"), "--n", "24", "--steps", "2", "--trials", "1",
               "--json", str(out))
    got = json.loads(out.read_text())
    assert got["locales"] == 2 and set(got["kernels"]) == {"jacobi-2d", "fdtd-2d"}
    assert all(k["bit_identical"] for k in got["kernels"].values()), got


def test_check_cost_counts_calls_with_checking_off_and_folded(tmp_path):
    out = tmp_path / "check.json"
    run_script(tmp_path, str(ROOT / "benchmarks" / "check_cost.py"), "--n", "16", "--warmup", "5", "--calls", "5",
               "--rounds", "0", "--json", str(out))
    got = json.loads(out.read_text())
    assert got["locales"] == 2 and got["statements"]
    # folded checking adds calls (the fold of each call) and never removes any
    assert all(x["calls_auto"] >= x["calls_off"] for x in got["statements"].values()), got
