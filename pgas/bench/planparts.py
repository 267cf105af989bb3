"""Planning overhead of the statement kernels, split into its parts (part of ``pgas bench plan``).

For each kernel of ``pgas bench stmt`` (:mod:`pgas.bench.kernels`), one time step
is run with the statement runtime's stages timed (each stage counted once, at
its outermost call):

- ``lower``: lowering a traced statement into the planner's terms
  (:func:`pgas.exec.lower.lower_view`, ``lower_ref`` for ``forall``);
- ``plan``: :func:`pgas.plan.plan_local` (a cache lookup once planned; the
  first-time plan on the first step, with the plan cache emptied);
- ``fetch``: starting and completing the transfers of the reads;
- ``compute``: evaluating the expression on the pieces;
- ``write``: the write-back (or accumulate) of the results;
- ``sync``: the rest of running a plan (the peer notices and window syncs);
- ``trace``: the rest of the step: building the lazy expressions in the
  kernel's Python code and the statement checks.

The issue's targets: describing and analysing a cached statement (``lower`` +
``plan``, per statement) at most 50 us; a first-time plan at most 2 ms.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from pgas import comm

#: (module, attribute) -> stage of the functions timed.
STAGES = {
    ("pgas.exec.statement", "lower_view"): "lower",
    ("pgas.exec.statement", "lower_ref"): "lower",
    ("pgas.exec.statement", "plan_local"): "plan",
    ("pgas.exec.group", "plan_local"): "plan",
    ("pgas.exec.statement", "run"): "run",
    ("pgas.exec.group", "run_together"): "run",
    ("pgas.exec.run", "_fetch"): "fetch",
    ("pgas.exec.run", "_get_elements"): "fetch",
    ("pgas.exec.run", "run_strips"): "fetch",
    ("pgas.exec.run", "evaluate"): "compute",
    ("pgas.exec.fuse", "evaluate"): "compute",
    ("pgas.exec.run", "_write"): "write",
    ("pgas.exec.run", "_accumulate"): "write",
}


class Stopwatch:
    """Seconds and calls per stage; nested calls of one stage count once."""

    def __init__(self) -> None:
        self.seconds: dict = {}
        self.calls: dict = {}
        self.longest: dict = {}
        self._depth: dict = {}

    def wrap(self, stage: str, fn):
        def timed(*a, **k):
            d = self._depth.get(stage, 0)
            if d:
                return fn(*a, **k)
            self._depth[stage] = 1
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                dt = time.perf_counter() - t0
                self._depth[stage] = 0
                self.seconds[stage] = self.seconds.get(stage, 0.0) + dt
                self.calls[stage] = self.calls.get(stage, 0) + 1
                self.longest[stage] = max(self.longest.get(stage, 0.0), dt)
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
    from pgas.exec import lower, transfer
    from pgas.plan import planner

    lower._memo.clear()
    planner._plan_local.cache_clear()
    transfer._choices.clear()


def kernel_parts(kernel, n: int, dist, steps: int) -> dict:
    """Collective: one kernel's per-step stage times (first step with an empty plan
    cache, then the median of ``steps`` cached steps per stage; the slowest locale's
    figures)."""
    state = kernel.setup(n, dist)
    comm.barrier()
    _forget_plans()
    first = Stopwatch()
    with timing(first):
        t0 = time.perf_counter()
        kernel.step(state, 0)
        first_total = time.perf_counter() - t0
    comm.barrier()
    runs = []                                   # (step seconds, stopwatch) per cached step
    for t in range(1, steps + 1):
        w = Stopwatch()
        with timing(w):
            t0 = time.perf_counter()
            kernel.step(state, t)
            runs.append((time.perf_counter() - t0, w))
    total = float(np.median([r[0] for r in runs]))          # medians: this machine may be shared
    per = {s: float(np.median([w.seconds.get(s, 0.0) for _, w in runs])) for s in STAGES.values()}
    stmts = max(first.calls.get("plan", 0), 1)
    parts = {"lower": per.get("lower", 0.0), "plan": per.get("plan", 0.0), "fetch": per.get("fetch", 0.0),
             "compute": per.get("compute", 0.0), "write": per.get("write", 0.0)}
    parts["sync"] = max(per.get("run", 0.0) - parts["fetch"] - parts["compute"] - parts["write"], 0.0)
    parts["trace"] = max(total - per.get("run", 0.0) - parts["lower"] - parts["plan"], 0.0)
    vals = [total, first_total, first.seconds.get("plan", 0.0), first.longest.get("plan", 0.0)]
    vals += [parts[k] for k in sorted(parts)]
    arr = np.array(comm.allreduce(np.array(vals), "max"))
    total, first_total, first_plan, first_longest = arr[:4]
    parts = dict(zip(sorted(parts), arr[4:].tolist()))
    return {"kernel": kernel.name, "n": n, "statements_per_step": stmts, "step_us": total * 1e6,
            "parts_us_per_step": {k: v * 1e6 for k, v in parts.items()},
            "cached_describe_us_per_statement": (parts["lower"] + parts["plan"]) / stmts * 1e6,
            "first_plan_us_per_statement": first_plan / stmts * 1e6, "first_plan_us_longest": first_longest * 1e6,
            "first_step_us": first_total * 1e6}


def measure(names, size: int, steps: int, dist) -> list[dict]:
    """Collective: :func:`kernel_parts` of each kernel named (``size`` 0: its test size)."""
    from pgas.bench import progress
    from pgas.bench.kernels import KERNELS

    rows = []
    for name in names:
        k = KERNELS[name]
        row = kernel_parts(k, size or k.tiny, dist, steps)
        rows.append(row)
        progress(f"{name}: cached {row['cached_describe_us_per_statement']:.0f} us/statement to describe, "
                 f"first plan {row['first_plan_us_per_statement']:.0f} us/statement")
    return rows
