"""Environment variables that change how statements are planned (``PGAS_PROTOCOL``,
``PGAS_AGGREGATE``, ``PGAS_CHECK``) must read alike on every locale: otherwise every
locale raises the same error when the library starts, instead of planning a
statement differently and hanging.  Needs its own job: the variables differ per rank."""

import subprocess
import sys
import textwrap

PGAS = [sys.executable, "-m", "pgas.tools.cli"]

PROG = """
import os
if os.environ.get("PMI_RANK") == "1":
    os.environ[{var!r}] = {value!r}
import pgas as pg
A = pg.zeros(8)
A[1:] = A[:-1] + 1
print("ran", pg.here, A.to_numpy().sum())
"""


def _run(tmp_path, var, value, n=2):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROG.format(var=var, value=value)))
    return subprocess.run([*PGAS, "run", "-n", str(n), "--timeout", "60", str(path)], capture_output=True,
                          text=True, timeout=90)


def test_a_protocol_set_on_one_locale_only_raises_on_every_locale(tmp_path):
    r = _run(tmp_path, "PGAS_PROTOCOL", "packed", n=3)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "ran" not in out, out
    assert "PGAS_PROTOCOL is '(unset)' on locales [0, 2]; 'packed' on locales [1]" in out, out
    import re
    said = {int(k) for k in re.findall(r"\[locale (\d)\] RuntimeError: pgas: settings", out)}
    for got in re.findall(r"locales ([\d, ]+) raised the same error", out):
        said |= {int(k) for k in got.split(",")}
    assert said == {0, 1, 2}, out


def test_values_that_read_alike_are_accepted(tmp_path):
    r = _run(tmp_path, "PGAS_AGGREGATE", "yes")        # unset reads as on, like "yes"
    assert r.returncode == 0 and r.stdout.count("ran") == 2, r.stdout + r.stderr
    r = _run(tmp_path, "PGAS_AGGREGATE", "off")
    assert r.returncode != 0 and "PGAS_AGGREGATE is" in r.stdout + r.stderr, r.stdout + r.stderr
