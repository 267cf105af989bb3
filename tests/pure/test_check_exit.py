"""Collective checking at the end of a program: a locale left in a collective that the
others never made gets ``pg.CollectiveMismatch`` (the job fails at once, no hang)."""

import os
import subprocess
import sys
import textwrap

PGAS = [sys.executable, "-m", "pgas.tools.cli"]


def run(tmp_path, body: str, check: str):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(body))
    env = dict(os.environ, PGAS_CHECK=check)
    return subprocess.run([*PGAS, "run", "-n", "2", "--timeout", "60", str(path)], capture_output=True,
                          text=True, timeout=90, env=env)


def test_read_on_one_locale_at_the_end(tmp_path):
    r = run(tmp_path, """
        import pgas as pg
        A = pg.zeros((3, 4))
        if pg.here == 0:
            print(A[1, 2])
        """, "1")
    assert r.returncode != 0
    assert "CollectiveMismatch: locale 0 called A[1, 2] at prog.py:5; locale 1 called the end of the program" in r.stderr


def test_correct_program_ends_normally(tmp_path):
    r = run(tmp_path, """
        import pgas as pg
        A = pg.arange(6)
        x, total = A[1], A.sum()
        if pg.here == 1:
            print(x, total)
        """, "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "15"]
