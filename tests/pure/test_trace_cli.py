"""``pgas trace DIR`` on a recorded timeline: the summary's parts add up to each statement's
time, ``--json`` and ``--png``, a clear error without matplotlib or without a trace, and
``PGAS_TRACE=DIR`` recording a whole job (one short 2-locale run)."""

import json
import os
import subprocess
import sys

import pytest

import pgas.plan.draw
from pgas.comm import trace as recorder
from pgas.tools import trace
from pgas.tools.cli import main

PGAS = [sys.executable, "-m", "pgas.tools.cli"]


def _row(k, shift):
    """Locale ``k``'s spans (seconds, on locale 0's clock): two runs of one statement, then a
    reduction outside; its clock's offset to locale 0's and that offset's error bound."""
    ev = []
    for r in range(2):
        t = 0.01 * r + shift
        ev += [("plan", "plan (cache hit)", t + 0.0001, t + 0.0002, None),
               ("pack", "pack sends", t + 0.0002, t + 0.0003, None),
               ("mpi", "MPI_Startall", t + 0.0003, t + 0.00035, None),
               ("kernel", "fused kernel", t + 0.0004, t + 0.0010, None),
               ("wait", f"recv from {1 - k} (data)", t + 0.0010, t + 0.0030, {"peers": [1 - k], "what": ["data"]}),
               ("stmt", "job.py:7 B[1:-1] = A[:-2] + A[2:]", t, t + 0.0035, {"kind": "assign"})]
    ev.append(("mpi", "MPI_Allreduce (sum)", 0.03, 0.031, {"site": "job.py:9 s = A.sum()"}))
    return {"locale": k, "events": ev, "offset": 0.25 * k, "error": 3e-5 * k, "host": "here"}


@pytest.fixture
def recorded(tmp_path):
    recorder.write(str(tmp_path / "trace.json"), [_row(0, 0.0), _row(1, 0.0005)], 2)
    return tmp_path


def test_summary_parts_add_up_and_name_the_critical_path(recorded):
    s = trace.summarise(trace.load(str(recorded)))
    st = s["statements"]["job.py:7 B[1:-1] = A[:-2] + A[2:]"]
    assert st["runs"] == 2 and set(st["locales"]) == {"0", "1"}
    for k, r in st["locales"].items():
        assert abs(sum(r[p] for p in trace.PARTS) - r["total"]) <= 1e-6 * r["total"] + 1e-3
        assert r["waits"] == {f"recv from {1 - int(k)} (data)": pytest.approx(4000.0)}
        assert r["kernel"] == pytest.approx(1200.0) and r["python"] == pytest.approx(2 * 650.0)
    assert st["last_to_arrive"] == {"1": 2}                    # locale 1 entered 0.5 ms later, twice
    assert "job.py:9 s = A.sum(): MPI_Allreduce (sum)" in s["outside"]["0"]["spans"]
    events, clocks = trace.read(str(recorded))
    assert clocks == {"offset_us": {0: 0.0, 1: 250000.0}, "error_us": {0: 0.0, 1: 30.0}}
    assert trace.summarise(events, clocks)["clock"] == {"max_error_us": 30.0, "locale": 1}


def test_cli_text_json_and_png(recorded, tmp_path, capsys):
    assert main(["trace", str(recorded)]) == 0
    text = capsys.readouterr().out
    assert "job.py:7" in text and "critical path" in text and "recv from 1 (data)" in text
    assert text.startswith("2 locales on locale 0's clock, to within 0.030 ms (the largest error bound, locale 1)")
    assert main(["trace", str(recorded), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["locales"] == [0, 1]
    pytest.importorskip("matplotlib")
    png = tmp_path / "t.png"
    assert main(["trace", str(recorded), "--png", str(png)]) == 0
    assert png.stat().st_size > 1000


def test_cli_clear_errors(recorded, tmp_path, capsys, monkeypatch):
    assert main(["trace", str(tmp_path / "nothing")]) == 1
    assert "no trace" in capsys.readouterr().out

    def missing():
        raise pgas.plan.draw.MissingMatplotlib("plots need matplotlib, which is not installed: pip install 'pgas[plot]'")
    monkeypatch.setattr(pgas.plan.draw, "pyplot", missing)
    assert main(["trace", str(recorded), "--png", str(tmp_path / "t.png")]) == 1
    assert "pip install 'pgas[plot]'" in capsys.readouterr().out


def test_environment_records_a_whole_job(tmp_path):
    prog = tmp_path / "job.py"
    prog.write_text("import numpy as np\nimport pgas as pg\n"
                    "A = pg.from_numpy(np.arange(64.0))\nB = pg.zeros(64)\n"
                    "for _ in range(3):\n    B[1:-1] = A[:-2] + A[2:]\n"
                    "print(float(B.sum()))\n")
    env = dict(os.environ, PGAS_TRACE=str(tmp_path / "tr"))
    r = subprocess.run([*PGAS, "run", "-n", "2", "--timeout", "120", str(prog)], capture_output=True, text=True,
                       timeout=180, env=env)
    assert r.returncode == 0, r.stderr
    s = trace.summarise(trace.load(str(tmp_path / "tr")))
    assert s["locales"] == [0, 1]
    assert [st["runs"] for name, st in s["statements"].items() if name.startswith("job.py:6 ")] == [3]
    r = subprocess.run([*PGAS, "trace", str(tmp_path / "tr")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "job.py:6 B[1:-1] = A[:-2] + A[2:]" in r.stdout
