"""``pgas bench papers`` (the "Reproducing the papers" page's pgas column) runs at its tiny size
on 2 locales and writes a row, with a command, for every figure and table of the five papers."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_papers_tiny(tmp_path):
    out = tmp_path / "papers"
    cmd = [sys.executable, "-m", "pgas.tools.cli", "bench", "papers", "-n", "2", "--size", "tiny", "--out", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    data = json.loads((out / "papers.json").read_text())
    assert data["benchmark"] == "papers" and data["size"] == "tiny" and data["locales"] == 2
    ran = {n for n, r in data["runs"].items() if r["status"] is not None}
    assert {"pshift", "stmt", "nas", "protocols", "randomaccess", "stream", "isx"} <= ran
    assert all(data["runs"][n]["status"] == 0 for n in ran)
    assert list(data["papers"]) == ["modulo-unrolling", "polyshift", "loops", "xlupc", "isx"]
    for paper, items in data["papers"].items():
        assert items, paper
        for row in items:
            assert row["command"].startswith(("pgas ", "PGAS_")) and row["paper"] and row["pgas"], row
            assert "unreadable" not in row["pgas"], row
    items = [r["item"] for r in data["papers"]["polyshift"]]
    for want in ("Table 1 ", "Table 2 ", "Table 3 ", "Table 4 ", "Eq. (1)", "Figure 8 ", "Figure 9 ", "Figure 10 ",
                 "Figure 11 "):
        assert any(i.startswith(want) for i in items), want
    pshift = json.loads((out / "pshift.json").read_text())
    assert pshift["fits"]["eq1"]["pshift"]["params"]["T0"] is not None
    text = (out / "papers.md").read_text()
    assert "## Polyshift Tables 1-4 beside the paper's" in text and "| 4 | 0.221 | 0.058 |" in text
