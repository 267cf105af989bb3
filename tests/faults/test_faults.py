"""Hangs and locale deaths under ``pgas run``: each ends promptly (the watchdog, not the
bound), with a report naming the right locale, cause and line of the script, and leaves
no process behind.  Run without MPI (each case starts its own ``pgas run``):

    python -m pytest -q tests/faults
"""

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PGAS = [sys.executable, "-m", "pgas.tools.cli", "run"]
GUARD = ["--timeout", "25"]   # if the watchdog failed, --timeout (status 124) would end the job
BOUND = 45            # seconds: cases run 4 at a time on a small machine; each should take < 15


def line_of(script: str, tag: str) -> int:
    """The line of ``script`` marked ``# LINE tag``."""
    with open(os.path.join(HERE, script)) as f:
        for i, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# LINE {tag}"):
                return i
    raise LookupError(tag)


def leftovers(marker: str) -> list[str]:
    """Command lines of processes still running with ``marker`` among their arguments."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in args and state != "Z":
            found.append(" ".join(a.decode(errors="replace") for a in args))
    return found


def pgas_run(n: int, script: str, *args: str, opts=("--grace", "3"), env=None):
    """Run ``script`` under ``pgas run -n n`` (with ``env`` added to the environment); the finished
    process, after checking that it ended within the bound and left no process of the job behind."""
    marker = f"--marker={uuid.uuid4().hex}"
    guard = GUARD if "--timeout" not in opts else []
    cmd = [*PGAS, "-n", str(n), *guard, *opts, os.path.join(HERE, script), *args, marker]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=BOUND, cwd=HERE, env={**os.environ, **(env or {})})
    assert not _wait_gone(marker), f"processes left behind: {leftovers(marker)}\n{r.stderr}"
    return r


def _wait_gone(marker: str, wait: float = 5.0) -> list[str]:
    deadline = time.monotonic() + wait
    while (left := leftovers(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


# Every non-interactive case, started together (they mostly wait: for the grace period, a
# timeout, a sleeping locale) so the stage takes about as long as its slowest cases.
CASES = {   # the longest first
    "timeout": (2, "prog_stall.py", ("60",), ("--timeout", "15")),
    "unequal": (3, "prog_unequal.py", (), ("--grace", "3", "--hang-timeout", "8")),
    "hang_timeout": (2, "prog_stall.py", ("60",), ("--hang-timeout", "3")),
    "hang_default": (2, "prog_stall.py", ("60",), ("--grace", "3")),       # the default limit, from ENV
    "hang_polling": (2, "prog_print_one.py", (), ("--hang-timeout", "3")),
    **{f"one_locale_{m}": (2, "prog_one_locale.py", (m,), ("--grace", "3")) for m in ("item", "to_numpy", "sum")},
    "early_exit": (3, "prog_early_exit.py", (), ("--grace", "3")),
    **{f"die_{m}": (3, "prog_die.py", (m,), ("--grace", "3")) for m in ("os_exit", "sigkill", "segfault",
                                                                                "sigkill_statement")},
    "lines": (3, "prog_lines.py", (), ()),
    "lines_tagged": (3, "prog_lines.py", (), ("--tag",)),
    "one_locale_checked": (2, "prog_one_locale.py", ("sum",), ("--grace", "3")),
    "early_exit_checked": (3, "prog_early_exit.py", (), ("--grace", "3")),
}
#: Environment added for a case: the no-progress check is on by default (its limit, 600 s,
#: shortened here through the environment, as a site would change it without the flag); the
#: watchdog's reports of a collective made on some locales only are seen with collective
#: checking off (by default checking names the calls first: the ``_checked`` cases).
ENV = {"hang_default": {"PGAS_HANG_TIMEOUT": "3"}, "early_exit": {"PGAS_CHECK": "0"}, "hang_polling": {"PGAS_CHECK": "0"},
       **{f"one_locale_{m}": {"PGAS_CHECK": "0"} for m in ("item", "to_numpy", "sum")}}


@pytest.fixture(scope="module")
def ran():
    """Case name -> finished process, all cases run 4 at a time."""
    with ThreadPoolExecutor(4) as pool:
        futures = {name: pool.submit(pgas_run, n, script, *args, opts=opts, env=ENV.get(name))
                   for name, (n, script, args, opts) in CASES.items()}
        return {name: f.result() for name, f in futures.items()}


def assert_no_banner(r) -> None:
    out = r.stdout + r.stderr
    assert "YOU CAN IGNORE" not in out and "BAD TERMINATION" not in out, out


@pytest.mark.parametrize("mode", ["item", "to_numpy", "sum"])
def test_collective_on_one_locale_is_reported(ran, mode):
    r = ran[f"one_locale_{mode}"]
    assert r.returncode == 125, r.stderr
    assert "[pgas] the job hangs: locale 0 did not end" in r.stderr, r.stderr
    assert "[pgas] locale 1 reached the end of the script" in r.stderr, r.stderr
    assert f"[pgas] locale 0 waits at prog_one_locale.py:{line_of('prog_one_locale.py', mode)} " in r.stderr, r.stderr
    assert "in pgas:" in r.stderr
    assert_no_banner(r)


@pytest.mark.parametrize("case, calls", [
    ("one_locale_checked", ["locale 0 called A.sum() at prog_one_locale.py:{sum}",
                            "locale 1 called the end of the program"]),
    ("early_exit_checked", ["locales 0-1 called A.sum() at prog_early_exit.py:{wait}",
                            "locale 2 called the end of the program"])])
def test_collective_on_some_locales_is_a_mismatch_by_default(ran, case, calls):
    """With collective checking on (the default), the locales that went on and the one that
    ended agree at its exit that their calls differ, and every locale says so at once."""
    r = ran[case]
    assert r.returncode == 1, r.stderr
    lines = {"sum": line_of("prog_one_locale.py", "sum"), "wait": line_of("prog_early_exit.py", "wait")}
    assert "CollectiveMismatch: " + "; ".join(c.format(**lines) for c in calls) in r.stderr, r.stderr
    assert "[pgas] the job hangs" not in r.stderr, r.stderr
    assert_no_banner(r)


def test_early_sys_exit_is_reported(ran):
    r = ran["early_exit"]
    assert r.returncode == 125, r.stderr
    exit_line, wait_line = line_of("prog_early_exit.py", "exit"), line_of("prog_early_exit.py", "wait")
    assert f"[pgas] locale 2 called sys.exit(0) at prog_early_exit.py:{exit_line}\n" in r.stderr, r.stderr
    for k in (0, 1):
        assert f"[pgas] locale {k} waits at prog_early_exit.py:{wait_line} " in r.stderr, r.stderr
    assert_no_banner(r)


@pytest.mark.parametrize("mode, cause", [
    ("os_exit", "called os._exit(3) at prog_die.py:{line}"),
    # MPICH names the first process it saw end, which may be one it killed itself
    ("sigkill", "(was killed by SIGKILL|ended its process without ending its script .*killed by a signal)"),
    ("segfault", "crashed (Segmentation fault) at prog_die.py:{line}"),
    # the others wait inside a statement for its halo
    ("sigkill_statement", "(was killed by SIGKILL|ended its process without ending its script .*killed by a signal)"),
])
def test_dead_locale_ends_the_job_with_its_cause(ran, mode, cause):
    r = ran[f"die_{mode}"]
    assert r.returncode not in (0, 124, 125), r.stderr
    if not mode.startswith("sigkill"):
        cause = re.escape(cause.format(line=line_of("prog_die.py", mode)))
    assert re.search(rf"\[pgas\] locale 1 died: it {cause}", r.stderr), r.stderr
    if mode != "sigkill_statement":                  # (a receive from the dead locale may fail too)
        assert "locale 0 died" not in r.stderr and "locale 2 died" not in r.stderr, r.stderr
    assert_no_banner(r)


def test_timeout_reports_where_each_locale_waits(ran):
    r = ran["timeout"]
    assert r.returncode == 124, r.stderr
    assert "[pgas] the job timed out after 15 s" in r.stderr
    assert f"[pgas] locale 1 waits at prog_stall.py:{line_of('prog_stall.py', 'sleep')} " in r.stderr, r.stderr
    assert f"[pgas] locale 0 waits at prog_stall.py:{line_of('prog_stall.py', 'barrier')} " in r.stderr, r.stderr
    assert_no_banner(r)


def test_hang_timeout_reports_a_job_without_progress(ran):
    r = ran["hang_timeout"]
    assert r.returncode == 125, r.stderr
    assert "[pgas] the job made no progress for 3 s" in r.stderr, r.stderr
    assert f"[pgas] locale 1 waits at prog_stall.py:{line_of('prog_stall.py', 'sleep')} " in r.stderr, r.stderr
    assert_no_banner(r)


def test_no_progress_check_is_on_by_default(ran):
    r = ran["hang_default"]
    assert r.returncode == 125, r.stderr
    assert "[pgas] the job made no progress for 3 s (--hang-timeout or $PGAS_HANG_TIMEOUT" in r.stderr, r.stderr
    assert f"[pgas] locale 1 waits at prog_stall.py:{line_of('prog_stall.py', 'sleep')} " in r.stderr, r.stderr
    assert f"[pgas] locale 0 waits at prog_stall.py:{line_of('prog_stall.py', 'barrier')} " in r.stderr, r.stderr
    assert_no_banner(r)


def test_no_progress_while_every_locale_polls_in_the_library(ran):
    """Locale 0 prints (a gather) while locale 1 reduces, checking off: both wait in the
    library's polling loops, whose Python lines change at every look; that is no progress."""
    r = ran["hang_polling"]
    assert r.returncode == 125, r.stderr
    assert "[pgas] the job made no progress for 3 s" in r.stderr, r.stderr
    for k, mark in ((0, "print"), (1, "sum")):
        assert f"[pgas] locale {k} waits at prog_print_one.py:{line_of('prog_print_one.py', mark)} " in r.stderr, r.stderr
    assert_no_banner(r)


def test_watchdog_quiet_on_a_correct_job_with_unequal_work(ran):
    r = ran["unequal"]
    assert r.returncode == 0, r.stderr
    assert "unequal ok 780" in r.stdout
    assert "[pgas]" not in r.stderr, r.stderr


def test_ctrl_c_ends_every_locale():
    marker = f"--marker={uuid.uuid4().hex}"
    cmd = [*PGAS, "-n", "3", os.path.join(HERE, "prog_stall.py"), "60", "ready", marker]
    # a shell runs background jobs with SIGINT ignored, and Python keeps it so: give it back
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "[pgas] interrupted (Ctrl-C): ended all 3 locales" in err, err
    assert not _wait_gone(marker), leftovers(marker)


_LINE = re.compile(r"^(?:\[(\d)\] )?locale (\d) (?:line \d+ x+|err \d+ y+|part \d+(?: z)+) end$")


@pytest.mark.parametrize("tagged", [False, True], ids=["plain", "--tag"])
def test_lines_of_several_locales_stay_whole(ran, tagged):
    """Three locales print long lines to standard output and error at the same time (some
    in pieces): every line of ``pgas run``'s output is one locale's whole line (they were
    split and mixed mid-line), each starting with ``[k]`` under ``--tag``."""
    r = ran["lines_tagged" if tagged else "lines"]
    assert r.returncode == 0, r.stderr[-2000:]
    for stream, want in ((r.stdout, 3 * (400 + 8)), (r.stderr, 3 * 80)):
        lines = stream.splitlines()
        bad = [line[:120] for line in lines if not (m := _LINE.match(line)) or (m.group(1) is not None) != tagged
               or (tagged and m.group(1) != m.group(2))]
        assert not bad and len(lines) == want, (len(lines), bad[:5])
