"""The pgas command: launcher failures end the job promptly with the traceback
printed once; success exits 0; argument errors; info; the stderr filter."""

import doctest
import json
import os
import subprocess
import sys
import textwrap

import pytest

import pgas.tools.bench
import pgas.tools.launch.launcher
import pgas.tools.launch.watch
import pgas.tools.cli
from pgas.tools.cli import StderrFilter, UsageError, parse_run
from pgas.tools.launch.launcher import hang_timeout_default

PGAS = [sys.executable, "-m", "pgas.tools.cli"]


def pgas_cmd(*args, timeout=60):
    return subprocess.run([*PGAS, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def script(tmp_path):
    def write(body):
        path = tmp_path / "prog.py"
        path.write_text(textwrap.dedent(body))
        return str(path)
    return write


def test_run_failure_on_one_locale_aborts_with_one_tagged_traceback(script):
    path = script("""
        import pgas as pg
        pg.barrier()
        if pg.here == 1:
            raise ValueError("bad value on one locale")
        pg.barrier()                     # locale 0 would wait here forever without the abort
        """)
    r = pgas_cmd("run", "-n", "2", "--timeout", "50", path)
    assert r.returncode not in (0, 124), r.stderr
    assert r.stderr.count("Traceback (most recent call last)") == 1, r.stderr
    assert "[locale 1] Traceback" in r.stderr
    assert "[locale 1] ValueError: bad value on one locale" in r.stderr
    assert "runner.py" not in r.stderr and "runpy" not in r.stderr


def test_run_same_failure_on_every_locale_printed_once(script):
    path = script("""
        import pgas as pg
        pg.barrier()
        raise KeyError("everywhere")
        """)
    r = pgas_cmd("run", "-n", "3", "--timeout", "50", path)
    assert r.returncode not in (0, 124)
    assert r.stderr.count("Traceback (most recent call last)") == 1, r.stderr
    assert "KeyError: 'everywhere'" in r.stderr


def test_run_success_passes_arguments_and_exit_zero(script):
    path = script("""
        import sys
        import pgas as pg
        assert __name__ == "__main__"
        total = pg.comm.allreduce(pg.here, "sum")
        if pg.here == 0:
            print("args", sys.argv[1:], "sum", total)
        if "--exit0" in sys.argv:
            sys.exit(0)
        """)
    r = pgas_cmd("run", "-n", "3", path, "a", "--exit0")
    assert r.returncode == 0, r.stderr
    assert "args ['a', '--exit0'] sum 3" in r.stdout


def test_run_nonzero_exit_is_the_jobs_status(script):
    path = script("""
        import sys
        import pgas as pg
        pg.barrier()
        if pg.here == 1:
            sys.exit(3)
        pg.barrier()
        """)
    r = pgas_cmd("run", "-n", "2", "--timeout", "50", path)
    assert r.returncode == 3, r.stderr
    assert "[locale 1] exited with status 3" in r.stderr


def test_run_module_and_timeout(script):
    r = pgas_cmd("run", "-n", "2", "-m", "pgas.tools.bench")
    assert r.returncode != 0 and "usage: python -m pgas.tools.bench" in r.stderr
    path = script("import time\ntime.sleep(60)\n")
    r = pgas_cmd("run", "-n", "2", "--timeout", "2", path)
    assert r.returncode == 124 and "timed out" in r.stderr


def test_run_threads_sets_each_locales_thread_count(script):
    path = script("""
        import os
        import pgas as pg
        from pgas.exec import threads, workers
        pg.barrier()
        print("locale", pg.here, "env", os.environ["PGAS_THREADS"], "limit", threads.limit(), "kernels", workers.count())
        """)
    r = pgas_cmd("run", "-n", "2", "--threads", "3", path, timeout=120)
    assert r.returncode == 0, r.stderr
    for k in range(2):
        assert f"locale {k} env 3 limit 3 kernels 3" in r.stdout, r.stdout
    r = pgas_cmd("run", "-n", "1", "--threads", "2", "-m", "pgas", "info", timeout=120)
    assert r.returncode == 0 and "2 per locale (kernels, reductions, BLAS" in r.stdout, r.stdout + r.stderr


def test_info_runs():
    r = pgas_cmd("info")
    assert r.returncode == 0, r.stderr
    for word in ("MPI library", "mpi4py", "numpy", "python", "pgas", "mpiexec", "locales", "node:", "threads:",
                 "waits:"):
        assert word in r.stdout


@pytest.mark.parametrize("argv, expect", [
    (["-n", "4", "s.py", "-n", "x"], (4, None, 10.0, None, ["s.py", "-n", "x"])),
    (["--timeout", "5", "-n", "2", "-m", "mod", "a", "--help"], (2, 5.0, 10.0, None, ["-m", "mod", "a", "--help"])),
    (["-n", "1", "--timeout=0.5", "--grace", "3", "--hang-timeout=7", "s.py"], (1, 0.5, 3.0, 7.0, ["s.py"])),
    (["-n3", "s.py"], (3, None, 10.0, None, ["s.py"])),
    (["-n", "2", "--hang-timeout", "0", "s.py"], (2, None, 10.0, 0.0, ["s.py"])),
])
def test_parse_run(argv, expect):
    ns = parse_run(argv)
    assert (ns.n, ns.timeout, ns.grace, ns.hang_timeout, ns.target) == expect


@pytest.mark.parametrize("argv, words", [
    ([], "-n"), (["s.py"], "-n"), (["-n", "0", "s.py"], "-n"), (["-n", "x", "s.py"], "-n"),
    (["-n", "2"], "no script"), (["-n", "2", "-m"], "-m"), (["-n", "2", "--bogus", "s.py"], "--bogus"),
    (["-n", "2", "--timeout", "-1", "s.py"], "--timeout"), (["-n", "2", "--grace", "x", "s.py"], "--grace"),
    (["-n", "2", "--hang-timeout", "-1", "s.py"], "--hang-timeout"), (["-n", "2", "--threads", "0", "s.py"], "--threads"), (["-n", "2", "--hang-timeout", "x", "s.py"], "--hang"),
])
def test_parse_run_errors(argv, words):
    with pytest.raises(UsageError, match=words):
        parse_run(argv)


@pytest.mark.parametrize("env, expect", [(None, 600.0), ("45", 45.0), (" 0 ", 0.0), ("", 600.0)])
def test_hang_timeout_on_by_default(env, expect, monkeypatch):
    if env is None:
        monkeypatch.delenv("PGAS_HANG_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("PGAS_HANG_TIMEOUT", env)
    assert hang_timeout_default() == expect


@pytest.mark.parametrize("env", ["-5", "soon", "nan"])
def test_hang_timeout_from_the_environment_checked(env, monkeypatch):
    monkeypatch.setenv("PGAS_HANG_TIMEOUT", env)
    with pytest.raises(UsageError, match="PGAS_HANG_TIMEOUT"):
        hang_timeout_default()


@pytest.mark.parametrize("args, named", [
    (["run", "prog.py"], "-n"), (["bogus"], "bogus"), (["--bogus"], "--bogus"), (["run", "-n", "2", "--bogus", "x.py"], "--bogus"),
    (["bench", "no-such-benchmark"], "no-such-benchmark"), (["bench", "cg", "--bogus"], "--bogus"),
    (["bench", "cg", "--classes", "Z"], "Z"), (["info", "--bogus"], "--bogus"), (["bench", "stream", "-n", "0"], "-n"),
])
def test_usage_errors_exit_2_and_name_the_culprit(args, named, capsys):
    assert pgas.tools.cli.main(args) == 2
    err = capsys.readouterr().err
    assert named in err and "usage:" in err and "Traceback" not in err, err


def test_usage_error_from_the_command_line():
    r = pgas_cmd("bench", "cg", "--bogus")
    assert r.returncode == 2 and "--bogus" in r.stderr and r.stdout == "", r.stdout + r.stderr


HELP = [[], ["run"], ["info"], ["bench"], *(["bench", name] for name in sorted(pgas.tools.bench.BENCHMARKS))]


@pytest.mark.parametrize("cmd", HELP, ids=lambda c: " ".join(c) or "pgas")
def test_help_once_plain_and_complete(cmd, capsys, monkeypatch):
    """``--help`` on every command: exit 0, printed once (no MPI job is started for it),
    no reStructuredText markup, defaults shown."""
    monkeypatch.setattr(pgas.tools.cli, "launch", lambda *a, **k: pytest.fail("--help started a job"))
    assert pgas.tools.cli.main([*cmd, "--help"]) == 0
    out, err = capsys.readouterr()
    assert out.count("usage:") == 1 and err == "", out + err
    assert "``" not in out and ":func:" not in out and ":mod:" not in out, out
    if cmd[:1] == ["bench"] and len(cmd) == 2:
        assert "-n N" in out and "number of locales" in out, out
        for line in out.splitlines():
            if line.strip().startswith("--") and "help" not in line:
                # every option of a benchmark is described (its help may wrap to the next line)
                assert len(line.split(None, 2)) >= 2, line
    if cmd == ["run"]:
        for words in ("--timeout S", "--grace S", "--hang-timeout S", "default: no limit", "default 10", "124", "125"):
            assert words in out, words


def test_bench_help_once_from_the_command_line():
    r = pgas_cmd("bench", "stream", "--help")
    assert r.returncode == 0 and r.stdout.count("usage:") == 1 and r.stderr == "", r.stdout + r.stderr
    assert "-n N" in r.stdout and "--size" in r.stdout and "``" not in r.stdout


def test_bench_help_details(capsys):
    out = {}
    for name in ("cg", "stream", "stmt", "isx"):
        assert pgas.tools.cli.main(["bench", name, "--help"]) == 0
        out[name] = capsys.readouterr().out
    from pgas.tools.bench.kernels import KERNELS
    from pgas.tools.bench.nas_makea import CLASSES
    assert "classes S, W, A, B" in out["cg"] and f"from {', '.join(CLASSES)}" in out["cg"]
    assert "--size" in out["stream"] and "elements" in out["stream"]
    assert all(k in out["stmt"] for k in KERNELS)
    assert "--seed" in out["isx"] and "seed of the random keys" in out["isx"]


def test_version(capsys):
    assert pgas.tools.cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("pgas ")


def test_bench_list(capsys):
    assert pgas.tools.cli.main(["bench"]) == 0
    out = capsys.readouterr().out
    for name in pgas.tools.bench.BENCHMARKS:
        assert name in out


def test_mpiexec_override(monkeypatch):
    monkeypatch.setenv("PGAS_MPIEXEC", "mpirun --oversubscribe")
    assert pgas.tools.cli.mpiexec_command() == ["mpirun", "--oversubscribe"]
    monkeypatch.delenv("PGAS_MPIEXEC")
    assert os.path.basename(pgas.tools.cli.mpiexec_command()[0]).startswith("mpi")


def test_stderr_filter_keeps_distinct_tracebacks():
    f = StderrFilter()
    lines = ["[locale 2] Traceback\n", "[locale 2] E: a\n", "[locale 0] Traceback\n", "[locale 0] E: b\n",
             "[locale 3] Traceback\n", "[locale 3] E: a\n",
             "Abort(1) on node 2 (rank 2 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 2\n"]
    assert [out for line in lines for out in f.feed(line)] == []
    assert f.finish() == ["[locale 2] Traceback\n", "[locale 2] E: a\n", "[locale 0] Traceback\n",
                          "[locale 0] E: b\n", "[pgas] locale 3 raised the same error as locale 2\n"]


def test_stderr_filter_shows_mpi_abort_notice_when_nothing_else():
    f = StderrFilter()
    notice = "Abort(4) on node 1 (rank 1 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 4) - process 1\n"
    assert f.feed(notice) == [] and f.feed(notice) == []
    assert f.finish() == [notice]


@pytest.mark.parametrize("ended", [False, True], ids=["job running", "ended by the watchdog"])
def test_killed_notice_dropped_once_the_watchdog_ends_the_job(ended):
    """MPICH's "Killed (signal 9)" about the locales the watchdog killed is not printed once
    pgas has ended the job (its report says why), even in a line that does not start
    with it; before that, and other lines, pass."""
    import io
    import threading

    from pgas.tools.launch import launcher, watch

    src = [b"hello\n", b"YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n",
           b"partial YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n", b"bye\n"]
    ending = threading.Event()
    if ended:
        ending.set()
    dst = io.StringIO()
    launcher._pump(src, dst, watch.BannerFilter(), None, ending, threading.Lock())
    want = "hello\nbye\n" if ended else "hello\npartial YOUR APPLICATION TERMINATED WITH THE EXIT STRING: " \
        "Killed (signal 9)\nbye\n"
    assert dst.getvalue() == want, dst.getvalue()


def test_output_collector_writes_whole_lines(tmp_path):
    """pgas.tools.launch.output: two locales' streams written in pieces that split their
    lines arrive as whole lines, each under its locale and stream; a last line without
    its newline gets one."""
    import socket
    import time

    from pgas.tools.launch import output

    got = []
    c = output.Collector(str(tmp_path), lambda stream, k, lines: got.extend((stream, k, x) for x in lines))
    socks = []
    for k, stream in ((0, "out"), (1, "err")):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(tmp_path / output.SOCKET))
        s.sendall(f"{k} {stream}\n".encode())
        socks.append(s)
    for piece in (b"ab", b"c\nde", b"f\ng"):
        for s in socks:
            s.sendall(piece)
            time.sleep(0.01)
    for s in socks:
        s.close()
    deadline = time.monotonic() + 10
    while len(got) < 6 and time.monotonic() < deadline:
        time.sleep(0.02)
    c.join()
    c.close()
    for k, stream in ((0, "out"), (1, "err")):
        assert [x for st, kk, x in got if (st, kk) == (stream, k)] == ["abc\n", "def\n", "g\n"], got


@pytest.mark.parametrize("module", [pgas.tools.cli, pgas.tools.launch.launcher, pgas.tools.bench, pgas.tools.launch.watch])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0


def test_mpi_harness_aborts_the_job_on_a_one_locale_failure(tmp_path):
    """tests/mpi/harness.py (the conftest's hooks): a failure on locale 1 alone (locale 0 goes
    on to a collective) ends the job promptly, reported once, and the pass count reaches the runner."""
    here = os.path.dirname(os.path.abspath(__file__))
    harness = os.path.join(os.path.dirname(here), "mpi", "harness.py")
    (tmp_path / "conftest.py").write_text(open(harness).read())
    (tmp_path / "test_x.py").write_text(textwrap.dedent("""
        import pgas as pg

        def test_passes():
            pg.barrier()

        def test_fails_on_locale_1():
            assert pg.here != 1, "locale 1 disagrees"
            pg.barrier()
        """))
    counts = tmp_path / "counts.json"
    env = dict(os.environ, PGAS_TEST_COUNTS=str(counts))
    r = subprocess.run([*PGAS, "run", "-n", "2", "--timeout", "60", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--rootdir", str(tmp_path), str(tmp_path)], capture_output=True, text=True, env=env,
                       timeout=90, cwd=tmp_path)
    assert r.returncode not in (0, 124), r.stdout + r.stderr
    assert r.stderr.count("FAILED") == 1 and "[locale 1] FAILED" in r.stderr, r.stderr
    assert "locale 1 disagrees" in r.stderr
    assert '"passed": 1' in counts.read_text()


def test_bench_helpers_on_one_locale(tmp_path):
    calls = []
    t = pgas.tools.bench.time_trials(lambda: calls.append(1), trials=3, warmup=2)
    assert len(calls) == 5 and len(t.times) == 3 and 0 <= t.min <= t.median <= max(t.times)
    path = pgas.tools.bench.write_result("demo", {"value": t, "n": 3}, str(tmp_path / "r" / "demo.json"))
    data = json.loads(open(path).read())
    assert data["benchmark"] == "demo" and data["n"] == 3 and len(data["value"]["times"]) == 3
    assert data["environment"]["locales"] == 1
    with pytest.raises(ValueError):
        pgas.tools.bench.time_trials(lambda: None, trials=0)


def test_benchmarks_reject_options_they_do_not_use():
    """--trials / --warmup are rejected where a benchmark would ignore them (PolyBench's
    --trials was accepted and ignored once)."""
    from pgas.tools.bench import cg, domains, kernelrun, polybench, stmt
    for mod, bad in [(cg, "--warmup"), (polybench, "--warmup"),
                     (domains, "--trials"), (kernelrun, "--trials"), (kernelrun, "--warmup")]:
        with pytest.raises(SystemExit):
            mod.make_parser().parse_args([bad, "2"])
    assert polybench.make_parser().parse_args(["--trials", "2"]).trials == 2
    assert stmt.make_parser().parse_args([]).warmup == 3          # untimed steps before the timed ones
    assert stmt.make_parser().parse_args(["--warmup", "5"]).warmup == 5


@pytest.mark.parametrize("note", ["fatal", "exit", None])
def test_report_names_the_locale_that_died_by_itself_first(note):
    """Locales seen gone together (one listener round) may be seen in either order: the one
    that left a note of how it died (a crash dump, an ``os._exit`` note) is named as the
    cause even when the one MPI killed after it was seen first; without notes, seen order."""
    import os

    from pgas.tools.launch.watch import JobDir, death_status, explained, report
    job = JobDir(3)
    try:
        if note == "fatal":
            with open(os.path.join(job.path, "1.fatal"), "w") as f:
                f.write("Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n"
                        '  File "prog.py", line 16 in <module>\n')
        elif note == "exit":
            with open(os.path.join(job.path, "1.exit"), "w") as f:
                f.write("called os._exit(3) at prog.py:12\n")
        job.gone.update({0: 0, 1: 1})                   # locale 0 (killed by MPI) seen first
        lines = [x.strip() for x in report(job, "a locale died", [], status=139)]
        first = 1 if note else 0
        assert lines[1].startswith(f"[pgas] locale {first} died: it "), lines
        assert lines[2] == f"[pgas] locale {1 - first} was ended by MPI after locale {first} died", lines
        assert explained(job) == bool(note)
        assert death_status(job) == {"fatal": 139, "exit": 3, None: 1}[note]
    finally:
        job.close()
