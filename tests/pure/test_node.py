"""What a locale decides from its node (:mod:`pgas.comm.node`): threads per locale and the
wait policy as functions of (locales on the node, cores), the ``PGAS_THREADS`` and
``PGAS_WAIT`` overrides, and, in jobs of their own, a bad or disagreeing ``PGAS_THREADS``
raising alike on every locale and 4 locales on fewer cores reported oversubscribed."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from pgas.comm import node

PGAS = [sys.executable, "-m", "pgas.tools.cli"]


@pytest.mark.parametrize("locales, cores, threads", [
    (1, 1, 1), (1, 2, 2), (2, 2, 1), (4, 2, 1), (16, 16, 1), (4, 16, 4), (3, 16, 5), (1, 64, 64), (8, 0, 1)])
def test_threads_are_the_cores_shared_out(locales, cores, threads):
    assert node.default_threads(locales, cores) == threads


@pytest.mark.parametrize("locales, cores, policy", [
    (1, 1, "yield"), (1, 2, "yield"), (2, 2, "yield"), (16, 16, "yield"), (3, 2, "nap"), (4, 2, "nap"),
    (17, 16, "nap"), (8, 64, "yield")])
def test_locales_wait_by_yielding_with_a_core_each_and_nap_when_oversubscribed(locales, cores, policy):
    assert node.wait_policy(locales, cores) == policy
    assert node.oversubscribed(locales, cores) == (policy == "nap")


def test_four_locales_on_two_cores_are_oversubscribed():
    at = node.decide(4, 2, env={})
    assert at.oversubscribed and at.wait == "nap" and at.threads == 1 and at.threads_from == "machine"
    at = node.decide(2, 2, env={})
    assert not at.oversubscribed and at.wait == "yield"


def test_the_environment_overrides_the_machine():
    at = node.decide(4, 2, env={"PGAS_THREADS": " 3 ", "PGAS_WAIT": "Spin"})
    assert (at.threads, at.threads_from, at.wait, at.wait_from) == (3, "PGAS_THREADS", "spin", "PGAS_WAIT")
    at = node.decide(2, 8, env={"PGAS_THREADS": "", "PGAS_WAIT": "auto"})
    assert (at.threads, at.threads_from, at.wait, at.wait_from) == (4, "machine", "yield", "machine")


@pytest.mark.parametrize("raw", ["0", "-2", "x", "1.5", "2 threads"])
def test_a_bad_thread_count_in_the_environment_raises(raw):
    with pytest.raises(ValueError, match="PGAS_THREADS must be a positive whole number"):
        node.decide(2, 2, env={"PGAS_THREADS": raw})


@pytest.mark.parametrize("raw", ["sleep", "0", "busy"])
def test_a_bad_wait_policy_in_the_environment_raises(raw):
    with pytest.raises(ValueError, match="PGAS_WAIT must be one of spin, yield, nap"):
        node.decide(2, 2, env={"PGAS_WAIT": raw})


def test_values_that_read_alike_agree():
    read = node.ENV["PGAS_THREADS"]
    assert read("02") == read("2") and read("0") == "0" and read("") == ""
    assert node.ENV["PGAS_WAIT"]("") == "auto"


# -- jobs of their own: the variables differ per rank, or the locale count is fixed --------------
PROG = """
import os
if {only_one} and os.environ.get("PMI_RANK") != "1":
    os.environ.pop({var!r}, None)
import pgas as pg
A = pg.zeros(8)
print("ran", pg.here, A.sum())
"""


def _job(tmp_path, env, n=2, only_one=False, var="PGAS_THREADS"):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROG.format(only_one=only_one, var=var)))
    return subprocess.run([*PGAS, "run", "-n", str(n), "--timeout", "60", str(path)], capture_output=True,
                          text=True, timeout=90, env={**os.environ, **env})


def _said(out: str, error: str) -> set[int]:
    said = {int(k) for k in re.findall(rf"\[locale (\d)\] {error}: pgas", out)}
    for got in re.findall(r"locales? ([\d, ]+) raised the same error", out):
        said |= {int(k) for k in got.split(",")}
    return said


def test_a_bad_thread_count_raises_alike_on_every_locale(tmp_path):
    r = _job(tmp_path, {"PGAS_THREADS": "many"})
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "ran" not in out, out
    assert "PGAS_THREADS must be a positive whole number (threads per locale), got 'many'" in out, out
    assert _said(out, "ValueError") == {0, 1}, out


def test_a_thread_count_set_on_one_locale_only_raises_on_every_locale(tmp_path):
    r = _job(tmp_path, {"PGAS_THREADS": "1"}, only_one=True)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "ran" not in out, out
    assert "PGAS_THREADS is '(unset)' on locales [0]; '1' on locales [1]" in out, out
    assert _said(out, "RuntimeError") == {0, 1}, out


def test_pgas_info_reports_four_locales_on_fewer_cores_oversubscribed(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PGAS_THREADS", "PGAS_WAIT")}
    r = subprocess.run([*PGAS, "run", "-n", "4", "--timeout", "60", "-m", "pgas.tools.cli", "info"],
                       capture_output=True, text=True, timeout=90, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    cores = len(node.affinity())
    line = next(s for s in r.stdout.splitlines() if s.startswith("node:"))
    assert f"4 locales on {cores} core" in line, r.stdout
    if cores < 4:
        assert "(oversubscribed)" in line, r.stdout
        assert "waits:        nap" in r.stdout and "threads:      1 per locale" in r.stdout, r.stdout
    else:
        assert "oversubscribed" not in line and "waits:        yield" in r.stdout, r.stdout
