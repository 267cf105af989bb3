"""Benchmarks, run with ``pgas bench NAME [-n N] [options]``; never timed tests.

Each benchmark is a module with ``main(argv)`` (and optionally ``LOCALES``, the
locale count ``pgas bench`` starts when not given ``-n``; 4 if absent),
registered in :data:`BENCHMARKS`.  Outside an MPI launcher ``pgas bench NAME``
starts the job itself (``pgas run -n N -m pgas.tools.bench NAME ...``); under one it
runs in place.  Results go to ``results/NAME.json`` (or ``--out PATH``) as JSON,
written by locale 0, and are printed as a table.

This module holds the shared pieces: :func:`parser` (the common options),
:func:`time_trials` (warm-up, then timed trials separated by barriers),
:func:`write_result`, :func:`print_table`, :func:`choices` (comma-separated
options), :func:`progress` (a line per step on locale 0) and :class:`ProgressBar`.
A module with ``DRIVER = True`` (``pgas bench suite``, ``pgas bench scaling``) is run outside MPI and
starts its own jobs.  Each module's
``make_parser()`` builds its parser without touching MPI, so ``pgas bench NAME``
checks arguments and prints ``--help`` once, before starting the job.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass

from pgas import comm

#: Benchmark name -> module path; the module defines ``main(argv)``.
BENCHMARKS: dict[str, str] = {
    "latency": "pgas.tools.bench.latency",
    "randomaccess": "pgas.tools.bench.randomaccess",
    "cg": "pgas.tools.bench.cg",
    "nas": "pgas.tools.bench.nas",
    "stream": "pgas.tools.bench.stream",
    "isx": "pgas.tools.bench.isx",
    "stmt": "pgas.tools.bench.stmt",
    "plan": "pgas.tools.bench.plan",
    "matmul": "pgas.tools.bench.matmul",
    "sort": "pgas.tools.bench.sortbench",
    "io": "pgas.tools.bench.iobench",
    "redist": "pgas.tools.bench.redist",
    "run": "pgas.tools.bench.kernelrun",
    "suite": "pgas.tools.bench.suite",
    "scaling": "pgas.tools.bench.scaling",
    "pshift": "pgas.tools.bench.pshift",
    "protocols": "pgas.tools.bench.protocols",
    "polybench": "pgas.tools.bench.polybench",
    "domains": "pgas.tools.bench.domains",
    "soak": "pgas.tools.bench.soak",
    "memory": "pgas.tools.bench.memory",
    "ablation": "pgas.tools.bench.ablation",
    "papers": "pgas.tools.bench.papers",
}


def load(name: str):
    """The module of benchmark ``name``; ``KeyError`` naming the known ones if there is none."""
    if name not in BENCHMARKS:
        raise KeyError(f"no benchmark {name!r}; known: {', '.join(sorted(BENCHMARKS))}")
    return importlib.import_module(BENCHMARKS[name])


def run(name: str, argv: list[str]) -> int:
    """Run benchmark ``name`` in this job with ``argv``; returns an exit status."""
    status = load(name).main(list(argv))
    return 0 if status is None else int(status)


def plain(text: str) -> str:
    """``text`` without reStructuredText markup, for ``--help``.

    >>> plain("``pgas bench cg``: NAS CG (:mod:`pgas.tools.bench.nas_makea`), ``n`` keys")
    'NAS CG (pgas.tools.bench.nas_makea), n keys'
    """
    text = re.sub(r"^``pgas bench [\w-]+``:\s*", "", text.strip())
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text)
    return " ".join(text.replace("``", "").split())


def parser(name: str, description: str, trials: bool = True, warmup: bool = True) -> argparse.ArgumentParser:
    """An argument parser for benchmark ``name`` with the options every benchmark takes:
    ``-n`` (the locale count ``pgas bench`` starts), ``--trials`` and ``--warmup`` (only
    where the benchmark uses them: ``trials`` / ``warmup`` False leaves them out, so
    argparse rejects them instead of ignoring them) and ``--out``.
    ``description`` may be a docstring's first paragraph (its markup is removed)."""
    p = argparse.ArgumentParser(prog=f"pgas bench {name}", description=plain(description),
                                epilog="Results are written as JSON and printed as a table on locale 0.")
    module = importlib.import_module(BENCHMARKS[name]) if name in BENCHMARKS else None
    p.add_argument("-n", type=_positive, default=None, metavar="N",
                   help=f"number of locales to start (default {getattr(module, 'LOCALES', 4)}); "
                        "under pgas run or mpiexec the job's locales are used instead")
    if trials:
        p.add_argument("--trials", type=_positive, default=5, metavar="T", help="timed trials (default %(default)s)")
    if warmup:
        p.add_argument("--warmup", type=_nonnegative, default=1, metavar="W", help="untimed warm-up runs (default %(default)s)")
    p.add_argument("--out", default=None, metavar="PATH", help=f"JSON result path (default results/{name}.json)")
    return p


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _nonnegative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def choices(names) -> "callable":
    """An argparse ``type`` for a comma-separated subset of ``names``: returns the list,
    or names the unknown items and the choices.

    >>> choices(["a", "b"])("b,a")
    ['b', 'a']
    """
    names = list(names)

    def parse(text: str) -> list[str]:
        items = [s for s in text.split(",") if s]
        bad = [s for s in items if s not in names]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(bad) or 'empty list'}; choose from {', '.join(names)}")
        return items
    return parse


def progress(message: str) -> None:
    """Print one progress line (``[bench] message``) on locale 0, to standard error."""
    if comm.here() == 0:
        print(f"[bench] {message}", file=sys.stderr, flush=True)


class ProgressBar:
    """A progress bar on locale 0 (``tqdm`` when installed, ``pip install 'pgas[bench]'``;
    otherwise one ``[bench] k/N what`` line per step), nothing on the other locales.

    >>> bar = ProgressBar(2, "runs", enabled=False)
    >>> bar.step("first"); bar.step("second"); bar.close(); bar.done
    2
    """

    def __init__(self, total: int, desc: str = "", enabled: bool | None = None) -> None:
        self.total, self.desc, self.done = int(total), desc, 0
        self.enabled = comm.here() == 0 if enabled is None else enabled
        self._bar = None
        if self.enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                pass
            else:
                self._bar = tqdm(total=self.total, desc=desc, file=sys.stderr, leave=True,
                                 dynamic_ncols=True, mininterval=0.5)

    def step(self, what: str = "") -> None:
        """Count one finished step (``what`` names it)."""
        self.done += 1
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(what[:40], refresh=False)
            self._bar.update(1)
        else:
            print(f"[bench] {self.desc} {self.done}/{self.total} {what}".rstrip(), file=sys.stderr, flush=True)

    def close(self) -> None:
        """End the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@dataclass(frozen=True)
class Timing:
    """Seconds per trial (each the slowest locale's time when collective) and their summary."""

    times: tuple[float, ...]

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    def summary(self) -> dict:
        """``{"min", "median", "mean", "times"}`` in seconds, for JSON."""
        return {"min": self.min, "median": self.median, "mean": self.mean, "times": list(self.times)}


def time_trials(fn, trials: int = 5, warmup: int = 1, collective: bool = True) -> Timing:
    """Call ``fn()`` ``warmup`` times untimed, then ``trials`` times timed, with a
    barrier before each call.  With ``collective`` (every locale calls this) a
    trial's time is the slowest locale's; otherwise this locale's own."""
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    for _ in range(warmup):
        comm.barrier()
        fn()
    times = []
    for _ in range(trials):
        comm.barrier()
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        times.append(float(comm.allreduce(dt, "max")) if collective else dt)
    return Timing(tuple(times))


def environment() -> dict:
    """Where a result was measured: locales, MPI library, Python and host."""
    import numpy

    return {"locales": comm.num_locales(), "mpi": comm.library_version(), "mpi4py": comm.mpi4py_version(),
            "numpy": numpy.__version__, "python": platform.python_version(), "host": platform.node(),
            "cpus": os.cpu_count(), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "argv": sys.argv}


def environment_plain() -> dict:
    """Where a result was measured, without starting MPI (for drivers that start jobs)."""
    import numpy

    return {"numpy": numpy.__version__, "python": platform.python_version(), "host": platform.node(),
            "cpus": os.cpu_count(), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "argv": sys.argv}


def write_result(name: str, data: dict, out: str | None = None) -> str:
    """Write ``{"benchmark": name, "environment": ..., **data}`` as JSON (locale 0 only);
    returns the path, ``results/NAME.json`` unless ``out`` is given."""
    path = out or os.path.join("results", f"{name}.json")
    if comm.here() == 0:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump({"benchmark": name, "environment": environment(), **data}, f, indent=2, default=_plain)
            f.write("\n")
    return path


def _plain(obj):
    """JSON form of NumPy scalars and dataclasses."""
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)
    raise TypeError(f"cannot write {type(obj).__name__} as JSON")


def format_table(headers: list[str], rows: list[list]) -> str:
    """A plain text table; floats get 4 significant digits.

    >>> print(format_table(["op", "us"], [["get", 3.14159], ["raw get", 12]]))
    op       us
    -------  -----
    get      3.142
    raw get  12
    """
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def _cell(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def print_table(headers: list[str], rows: list[list]) -> None:
    """Print :func:`format_table` on locale 0."""
    if comm.here() == 0:
        print(format_table(headers, rows), flush=True)
