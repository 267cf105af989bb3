"""Harness for multi-locale tests, run as ``mpiexec -n N python -m pytest tests/mpi tests/fuzz``
(``tests/run_mpi.py`` does this through ``pgas run``).  ``tests/mpi/conftest.py`` and
``tests/fuzz/conftest.py`` both load it, so one module (and one count of results) serves both.

- Hypothesis draws the same examples on every locale (profile ``mpi``:
  derandomised, no database, no deadline), so collective tests stay in step.
- With several locales, any failing test, error or collection error is
  printed tagged ``[locale k]`` and the whole job is aborted at once: a
  failure can never leave another locale waiting in a collective.  (``pgas
  run`` prints identical reports from several locales once.)  With one
  locale nothing can hang, so pytest reports failures as usual.
- Only locale 0 writes pytest's normal terminal output.
- With ``$PGAS_CHECK=1`` (``tests/run_mpi.py --check``) every collective call is
  checked, so a test whose locales disagree about the next collective raises
  ``pg.CollectiveMismatch`` on every locale instead of hanging.  It is off by
  default: on this 2-core machine it made tests/mpi about 70 % slower at 2 locales.
- With ``$PGAS_TEST_COUNTS`` set, locale 0 keeps ``{"passed", "failed",
  "skipped"}`` in that JSON file, updated after every test, for the runner.
"""

import json
import os
import sys

import pytest
from _pytest.terminal import TerminalWriter
from hypothesis import HealthCheck, settings

# Message-count tests check the packed protocol's one message per (locale, array);
# tests/mpi/test_protocols.py runs "auto" and the others explicitly, and
# tests/run_mpi.py runs the whole suite under "auto" (the library's default, with
# its two-sided statements, pgas.exec.persistent) at some locale counts.  No machine's
# calibration file changes what the suite does.
os.environ.setdefault("PGAS_PROTOCOL", "packed")
os.environ.setdefault("PGAS_CALIBRATION", "none")

import pgas as pg  # noqa: E402
from pgas import comm  # noqa: E402
from pgas.exec import settings as _engine_settings  # noqa: E402

_engine_settings.config()            # the defaults above, even if pgas was imported before

settings.register_profile("mpi", derandomize=True, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], print_blob=False,
                          report_multiple_bugs=False)
settings.load_profile("mpi")

_counts = {"passed": 0, "failed": 0, "skipped": 0}


def _save_counts() -> None:
    path = os.environ.get("PGAS_TEST_COUNTS")
    if path and comm.here() == 0:
        with open(path, "w") as f:
            json.dump(_counts, f)


def _abort_with(title: str, text: str) -> None:
    """Print ``title`` and ``text`` tagged with this locale, then end the job."""
    me = comm.here()
    lines = [title, *text.rstrip("\n").split("\n")]
    sys.stderr.write("".join(f"[locale {me}] {line}\n" for line in lines))
    comm.abort(1)


@pytest.hookimpl(trylast=True)
@pytest.fixture
def fused(monkeypatch):
    """Every task that can be fused run by a compiled kernel (the *_fused.py suites)."""
    monkeypatch.setenv("PGAS_FUSE", "1")           # pg.config() (the tests' resets) keeps fuse=True
    pg.config()
    yield
    monkeypatch.undo()
    pg.config()


@pytest.fixture(params=["dense", "sparse"])
def exchange_kind(request, monkeypatch):
    """Exchanges (:func:`pgas.comm.exchange`) as they run at this locale count (``dense``: up to
    DENSE_MAX locales every pair messages) or as beyond DENSE_MAX (``sparse``: only non-empty
    parts, ended by a consensus)."""
    if request.param == "sparse":
        monkeypatch.setattr(sys.modules["pgas.comm.exchange"], "DENSE_MAX", 1)
    return request.param


@pytest.fixture
def folding():
    """Collective call checking in its default, folding mode (``check="auto"``: calls folded
    into a running hash, compared at the next call that reaches every locale), whatever
    ``PGAS_CHECK`` the run has; the settings restored after."""
    pg.config(check="auto")
    try:
        yield
    finally:
        pg.config()


def pytest_configure(config):
    if comm.here() != 0:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter._tw = TerminalWriter(open(os.devnull, "w"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and comm.num_locales() > 1:
        _counts["failed"] += 1
        _save_counts()
        _abort_with(f"FAILED {report.nodeid} ({report.when})", report.longreprtext)
    return report


def pytest_collectreport(report):
    if report.failed and comm.num_locales() > 1:
        _abort_with(f"ERROR collecting {report.nodeid}", report.longreprtext)


def pytest_runtest_logreport(report):
    if report.failed:
        _counts["failed"] += 1
    elif report.skipped:
        _counts["skipped"] += 1
    elif report.when == "call":
        _counts["passed"] += 1
    else:
        return
    _save_counts()
