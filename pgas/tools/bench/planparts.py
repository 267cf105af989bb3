"""Planning overhead of the statement kernels, split into its parts (part of ``pgas bench plan``).

For each kernel of ``pgas bench stmt`` (:mod:`pgas.tools.bench.kernels`), one time step
is run with the statement runtime's stages timed (each stage counted once, at
its outermost call):

- ``lower``: lowering a traced statement into the planner's terms
  (:func:`pgas.array.lowering.lower_view`, ``lower_ref`` for ``forall``);
- ``plan``: :func:`pgas.plan.plan_local` (a cache lookup once planned; the
  first-time plan on the first step, with the plan cache emptied; none for a
  statement repeated on the same arrays by two-sided transfers, which runs as
  recorded, :func:`pgas.exec.persistent.rerun`);
- ``fetch``: starting and completing the transfers of the reads;
- ``compute``: evaluating the expression on the pieces;
- ``write``: the write-back (or accumulate) of the results;
- ``sync``: the rest of running a plan (the peer notices and window syncs);
- ``trace``: the rest of the step: building the lazy expressions in the
  kernel's Python code and the statement checks.

The issue's targets: describing and analysing a cached statement (``lower`` +
``plan``, per statement) at most 50 us; a first-time plan at most 2 ms.  The first
step is repeated (``cold`` times, every plan cache emptied before each, the
planner's memoised parts too), and each figure is given as the median over the
trials and as their least (the figure load on a shared machine inflates least).
The first plans are also timed in the locale's own CPU time (``first_plan_cpu_*``,
medians): the planner's work without the time a locale waits for a core, which
on an oversubscribed machine is most of the wall time of a cold step.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from pgas import comm

#: (module, attribute) -> stage of the functions timed.
STAGES = {
    ("pgas.array.statements", "lower_view"): "lower",
    ("pgas.array.statements", "lower_ref"): "lower",
    ("pgas.array.statements", "plan_local"): "plan",
    ("pgas.exec.statement", "plan_local"): "plan",
    ("pgas.exec.group", "plan_local"): "plan",
    ("pgas.exec.statement", "run"): "run",
    ("pgas.exec.persistent", "rerun"): "run",
    ("pgas.exec.group", "run_together"): "run",
    ("pgas.exec.run", "_fetch"): "fetch",
    ("pgas.exec.run", "_get_elements"): "fetch",
    ("pgas.exec.run", "run_strips"): "fetch",
    ("pgas.exec.run", "evaluate"): "compute",
    ("pgas.exec.strip", "evaluate"): "compute",
    ("pgas.exec.fuse", "evaluate"): "compute",
    ("pgas.exec.run", "write_results"): "write",
    ("pgas.exec.run", "accumulate_results"): "write",
}


class Stopwatch:
    """Seconds and calls per stage; nested calls of one stage count once."""

    def __init__(self) -> None:
        self.seconds: dict = {}
        self.calls: dict = {}
        self.longest: dict = {}
        self.cpu: dict = {}                   # the calling thread's CPU seconds (no time waiting for a core)
        self.longest_cpu: dict = {}
        self._depth: dict = {}

    def wrap(self, stage: str, fn):
        def timed(*a, **k):
            d = self._depth.get(stage, 0)
            if d:
                return fn(*a, **k)
            self._depth[stage] = 1
            c0, t0 = time.thread_time(), time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                dt, dc = time.perf_counter() - t0, time.thread_time() - c0
                self._depth[stage] = 0
                self.seconds[stage] = self.seconds.get(stage, 0.0) + dt
                self.calls[stage] = self.calls.get(stage, 0) + 1
                self.longest[stage] = max(self.longest.get(stage, 0.0), dt)
                self.cpu[stage] = self.cpu.get(stage, 0.0) + dc
                self.longest_cpu[stage] = max(self.longest_cpu.get(stage, 0.0), dc)
        return timed


@contextmanager
def timing(watch: Stopwatch):
    """Time the :data:`STAGES` into ``watch`` while inside."""
    import importlib

    saved = []
    try:
        for (mod, name), stage in STAGES.items():
            m = importlib.import_module(mod)
            fn = getattr(m, name, None)
            if fn is not None:
                saved.append((m, name, fn))
                setattr(m, name, watch.wrap(stage, fn))
        yield watch
    finally:
        for m, name, fn in reversed(saved):
            setattr(m, name, fn)


def _forget_plans() -> None:
    """Empty every cache a first plan fills: the lowering memo, the plan cache, the
    protocol choices, and the planner's memoised parts (so a first plan is timed cold)."""
    import importlib
    import pkgutil

    import pgas.plan
    from pgas.array import lowering as lower
    from pgas.exec import persistent, transfer

    persistent.clear()                           # recorded statements (replayed without planning)
    lower._memo.clear()
    transfer.clear_choices()
    for info in pkgutil.iter_modules(pgas.plan.__path__):
        mod = importlib.import_module(f"pgas.plan.{info.name}")
        for fn in list(vars(mod).values()):
            if callable(getattr(fn, "cache_clear", None)) and getattr(fn, "__module__", None) == mod.__name__:
                fn.cache_clear()


def _cold_step(kernel, state, t: int) -> tuple[float, Stopwatch]:
    """Collective: step ``t`` with every plan cache emptied first: (seconds, stopwatch)."""
    comm.barrier()
    _forget_plans()
    w = Stopwatch()
    with timing(w):
        t0 = time.perf_counter()
        kernel.step(state, t)
        return time.perf_counter() - t0, w


def kernel_parts(kernel, n: int, dist, steps: int, cold: int = 3) -> dict:
    """Collective: one kernel's per-step stage times: ``cold`` first steps, each with every
    plan cache emptied, then ``steps`` cached steps; per stage the median over the
    steps (and, as ``*_min``, the least: the figure load on a shared machine inflates
    least), the slowest locale's figures."""
    state = kernel.setup(n, dist)
    firsts = [_cold_step(kernel, state, t) for t in range(max(cold, 1))]
    comm.barrier()
    runs = []                                   # (step seconds, stopwatch) per cached step
    for t in range(len(firsts), len(firsts) + steps):
        w = Stopwatch()
        with timing(w):
            t0 = time.perf_counter()
            kernel.step(state, t)
            runs.append((time.perf_counter() - t0, w))
    total = float(np.median([r[0] for r in runs]))          # medians: this machine may be shared
    per = {s: float(np.median([w.seconds.get(s, 0.0) for _, w in runs])) for s in STAGES.values()}
    stmts = max(firsts[0][1].calls.get("plan", 0), 1)
    describe = [(w.seconds.get("lower", 0.0) + w.seconds.get("plan", 0.0)) / stmts for _, w in runs]
    first_plan = [w.seconds.get("plan", 0.0) / stmts for _, w in firsts]
    first_long = [w.longest.get("plan", 0.0) for _, w in firsts]
    first_cpu = [w.cpu.get("plan", 0.0) / stmts for _, w in firsts]
    first_long_cpu = [w.longest_cpu.get("plan", 0.0) for _, w in firsts]
    parts = {"lower": per.get("lower", 0.0), "plan": per.get("plan", 0.0), "fetch": per.get("fetch", 0.0),
             "compute": per.get("compute", 0.0), "write": per.get("write", 0.0)}
    parts["sync"] = max(per.get("run", 0.0) - parts["fetch"] - parts["compute"] - parts["write"], 0.0)
    parts["trace"] = max(total - per.get("run", 0.0) - parts["lower"] - parts["plan"], 0.0)
    vals = [total, float(np.median([f[0] for f in firsts])), float(np.median(first_plan)), min(first_plan),
            float(np.median(first_long)), min(first_long), float(np.median(describe)), min(describe),
            float(np.median(first_cpu)), float(np.median(first_long_cpu))]
    vals += [parts[k] for k in sorted(parts)]
    arr = np.array(comm.allreduce(np.array(vals), "max"))
    total, first_total, fp_med, fp_min, fl_med, fl_min, d_med, d_min, fc_med, flc_med = arr[:10]
    parts = dict(zip(sorted(parts), arr[10:].tolist()))
    return {"kernel": kernel.name, "n": n, "statements_per_step": stmts, "step_us": total * 1e6,
            "parts_us_per_step": {k: v * 1e6 for k, v in parts.items()},
            "cached_describe_us_per_statement": d_med * 1e6, "cached_describe_us_per_statement_min": d_min * 1e6,
            "first_plan_us_per_statement": fp_med * 1e6, "first_plan_us_per_statement_min": fp_min * 1e6,
            "first_plan_us_longest": fl_med * 1e6, "first_plan_us_longest_min": fl_min * 1e6,
            "first_plan_cpu_us_per_statement": fc_med * 1e6, "first_plan_cpu_us_longest": flc_med * 1e6,
            "cold_trials": len(firsts), "first_step_us": first_total * 1e6}


def measure(names, size: int, steps: int, dist, cold: int = 3) -> list[dict]:
    """Collective: :func:`kernel_parts` of each kernel named (``size`` 0: its test size)."""
    from pgas.tools.bench import progress
    from pgas.tools.bench.kernels import KERNELS

    rows = []
    for name in names:
        k = KERNELS[name]
        row = kernel_parts(k, size or k.tiny, dist, steps, cold)
        rows.append(row)
        progress(f"{name}: cached {row['cached_describe_us_per_statement']:.0f} us/statement to describe, "
                 f"first plan {row['first_plan_us_per_statement']:.0f} us/statement")
    return rows
