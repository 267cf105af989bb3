"""``pgas bench polybench``: PolyBench/C 4.2.1 jacobi-2d, fdtd-2d and mvt (LARGE) as statements.

Each kernel is PolyBench's, written as whole-array statements on Block
distributed arrays (row blocks), with PolyBench's initial values and the same
operation order in every element, so a fused statement computes what the C
code computes:

- ``jacobi-2d`` (N = 1300, 500 steps): per step two 5-point sweeps,
  ``B = 0.2 (A + A_west + A_east + A_south + A_north)`` and back;
- ``fdtd-2d`` (1000 x 1200, 500 steps): the ``ey``, ``ex`` and ``hz`` updates;
- ``mvt`` (N = 2000): ``x1 += A y1`` and ``x2 += A^T y2`` (``pg.matmul``).

Each kernel runs untimed first (:data:`WARM` steps: ``fuse="auto"`` compiles
the statements' kernels), then timed ``--trials`` times (default 3), each run from
PolyBench's initial values (slowest locale); the median is reported, every trial is
in the JSON.  Verification (on locale 0):
the stencils' results must equal a NumPy run of the same statements exactly,
mvt's to 1e-12 (its sums are ordered differently from the C loops).  ``--steps``
shortens the stencils (the ratio to the C code is then per step).

``--reference DIR`` runs PolyBench's serial C (``DIR/pb_KERNEL``, built with
``-O3 -march=native -DPOLYBENCH_TIME -DLARGE_DATASET`` by
the reference build described in ``docs/benchmarks.md`` (Reference codes)) on locale 0 while the others wait,
once after each timed trial, and reports the median of the paired ratios (each
trial's time per step over the C run right after it) with every pair in the JSON.
"""

from __future__ import annotations

import os
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.exec import fuse
from pgas.tools.bench import choices, parser, print_table, progress, reference, write_result

KERNELS = ("jacobi-2d", "fdtd-2d", "mvt")
LARGE = {"jacobi-2d": (1300, 500), "fdtd-2d": ((1000, 1200), 500), "mvt": (2000, 1)}
LOCALES = 2
WARM = fuse.FUSE_AFTER          # untimed steps: enough for fuse="auto" to compile the kernels


def jacobi_init(n: int):
    i, j = np.meshgrid(np.arange(n, dtype=np.float64), np.arange(n, dtype=np.float64), indexing="ij")
    return (i * (j + 2) + 2) / n, (i * (j + 3) + 3) / n


def jacobi_step(A, B) -> None:
    """One time step of PolyBench's jacobi-2d on DistArrays or NumPy arrays alike."""
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def jacobi_steps(A, B, steps: int, step=jacobi_step) -> None:
    """PolyBench's jacobi-2d on DistArrays or NumPy arrays alike (``step``: :func:`jacobi_step`
    or its compiled form, ``pg.compile(jacobi_step)``)."""
    for _ in range(steps):
        step(A, B)


def fdtd_init(nx: int, ny: int, tmax: int):
    i, j = np.meshgrid(np.arange(nx, dtype=np.float64), np.arange(ny, dtype=np.float64), indexing="ij")
    return (i * (j + 1)) / nx, (i * (j + 2)) / ny, (i * (j + 3)) / nx, np.arange(tmax, dtype=np.float64)


def fdtd_step(ex, ey, hz, f) -> None:
    """One time step of PolyBench's fdtd-2d (``f``: ``fict[t]``)."""
    ey[0, :] = f
    ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
    ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
    hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def fdtd_steps(ex, ey, hz, fict, steps: int, step=fdtd_step) -> None:
    """PolyBench's fdtd-2d on DistArrays or NumPy arrays alike (``step``: :func:`fdtd_step` or
    its compiled form)."""
    for t in range(steps):
        step(ex, ey, hz, fict[t])


#: The steps of the stencils compiled by ``pg.compile`` (``--compiled``).
STEPS = {"jacobi-2d": jacobi_step, "fdtd-2d": fdtd_step}


def mvt_init(n: int):
    i = np.arange(n)
    A = (np.multiply.outer(i, i) % n).astype(np.float64) / n
    return A, (i % n) / n, ((i + 1) % n) / n, ((i + 3) % n) / n, ((i + 4) % n) / n


def _dist(G):
    return pg.from_numpy(G, dist=pg.Block())


def _timer(between=None):
    """``timed(fn)``: the seconds ``fn()`` takes on the slowest locale, then ``between()``."""
    def timed(fn) -> float:
        comm.barrier()
        t = time.perf_counter()
        fn()
        took = float(comm.allreduce(time.perf_counter() - t, "max"))
        if between is not None:
            between()
        return took
    return timed


def run_kernel(name: str, steps: int, verify: bool, sizes: dict = LARGE, trials: int = 1, between=None,
               compiled: bool = False) -> dict:
    """Collective: warm-up, ``trials`` timed runs (each from PolyBench's initial values)
    and verification of the last one, for one kernel (``sizes``: its problem size and
    PolyBench steps, LARGE's by default).  ``seconds`` is the median of the trials
    (slowest locale each), ``trial_seconds`` all of them; ``sums`` are the sums of the
    result arrays of the last trial (A, B; ex, ey, hz; x1, x2), to check other
    implementations' results by.  ``between``: called
    (collectively) after each trial, untimed: the reference's run beside it.  ``compiled``:
    the stencils' steps compiled by ``pg.compile`` (recorded in the warm-up, then replayed)."""
    times = []
    step = pg.compile(STEPS[name]) if compiled and name in STEPS else STEPS.get(name)
    _timed = _timer(between)
    if name == "jacobi-2d":
        n = sizes[name][0]
        GA, GB = jacobi_init(n)
        A, B = _dist(GA), _dist(GB)
        jacobi_steps(A, B, WARM, step)                         # warm-up: compiles the statements' kernels
        for _ in range(trials):
            A, B = _dist(GA), _dist(GB)
            times.append(_timed(lambda: jacobi_steps(A, B, steps, step)))
        got = [A.to_numpy(0), B.to_numpy(0)]
        want = lambda: (jacobi_steps(GA, GB, steps), [GA, GB])[1]     # noqa: E731
    elif name == "fdtd-2d":
        (nx, ny), tmax = sizes[name]
        init = fdtd_init(nx, ny, tmax)
        arrays = [_dist(G) for G in init[:3]]
        fdtd_steps(*arrays, init[3], WARM, step)
        for _ in range(trials):
            arrays = [_dist(G) for G in init[:3]]
            times.append(_timed(lambda: fdtd_steps(*arrays, init[3], steps, step)))
        got = [a.to_numpy(0) for a in arrays]
        want = lambda: (fdtd_steps(*init, steps), list(init[:3]))[1]    # noqa: E731
    else:
        n = sizes[name][0]
        GA, gx1, gx2, gy1, gy2 = mvt_init(n)
        A, x1, x2 = _dist(GA), _dist(gx1), _dist(gx2)
        y1, y2 = _dist(gy1), _dist(gy2)

        def mvt():
            x1[:] = x1 + pg.matmul(A, y1)
            x2[:] = x2 + pg.matmul(A.T, y2)
        for _ in range(WARM):
            mvt()
        for _ in range(trials):
            x1, x2 = _dist(gx1), _dist(gx2)
            times.append(_timed(mvt))
        got = [x1.to_numpy(0), x2.to_numpy(0)]
        want = lambda: [gx1 + GA @ gy1, gx2 + GA.T @ gy2]               # noqa: E731
    exact = name != "mvt"
    ok = True
    if verify and comm.here() == 0:                  # NumPy's run, once, on locale 0
        ok = all(np.array_equal(g, w) if exact else np.allclose(g, w, rtol=1e-12, atol=0)
                 for g, w in zip(got, want()))
    ok = comm.bcast(ok, 0)
    sums = comm.bcast([float(g.sum()) for g in got] if comm.here() == 0 else None, 0)
    return {"kernel": name, "compiled": compiled and name in STEPS, "steps": steps if name != "mvt" else 1, "seconds": float(np.median(times)),
            "trial_seconds": times, "verification": ("exact" if exact else "rtol 1e-12") if verify else "skipped",
            "verified": bool(ok), "sums": sums}


def run_reference(folder: str, name: str) -> dict:
    """Collective: PolyBench's serial C for ``name`` on locale 0 (LARGE, full steps)."""
    exe = os.path.join(folder if os.path.isdir(folder) else os.path.dirname(folder), f"pb_{name}")
    progress(f"reference: {exe}")
    res = reference.run([exe])
    return dict(res, seconds=reference.number(r"^\s*([0-9.]+)\s*$", res["stdout"].strip()))


def pair_ratios(r: dict, refs: list, full: int) -> None:
    """Add the reference's runs ``refs`` (one after each of ``r``'s trials, ``full`` steps
    each) to kernel result ``r``: ``reference`` (the last run, its ``seconds`` the median
    of the runs, ``trial_seconds`` all), ``trial_ratios`` (each trial's time per step
    over the run after it) and ``ratio_to_c``, their median: ratios of runs taken side
    by side, so that a change in the machine's load between a trial and the reference
    moves one ratio, not the figure."""
    secs = [x["seconds"] for x in refs]
    ok = [x for x in secs if x]
    r["reference"] = dict(refs[-1], seconds=float(np.median(ok)) if ok else None, trial_seconds=secs)
    pairs = [(t / r["steps"]) / (c / full) for t, c in zip(r["trial_seconds"], secs) if c]
    r["trial_ratios"] = pairs
    if pairs:
        r["ratio_to_c"] = float(np.median(pairs))


def compare_compiled(name: str, steps: int, verify: bool, trials: int, between=None) -> tuple[dict, dict]:
    """Collective: ``trials`` runs of stencil ``name`` plain and compiled, alternating (the
    first of each pair alternating too), as :func:`run_kernel` results; the compiled one with
    ``ratio_to_plain``, the median of each pair's compiled / plain ratio, and ``trial_ratios_to_plain``."""
    plain, comp = [], []
    for k in range(trials):
        order = (False, True) if k % 2 == 0 else (True, False)
        for c in order:
            (comp if c else plain).append(run_kernel(name, steps, verify and k == trials - 1, trials=1,
                                                     between=between, compiled=c))
    def merged(runs):
        times = [r["trial_seconds"][0] for r in runs]
        return dict(runs[-1], seconds=float(np.median(times)), trial_seconds=times,
                    verified=all(r["verified"] for r in runs))
    r, rc = merged(plain), merged(comp)
    pairs = [c / p for c, p in zip(rc["trial_seconds"], r["trial_seconds"])]
    rc["trial_ratios_to_plain"] = pairs
    rc["ratio_to_plain"] = float(np.median(pairs))
    return r, rc


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("polybench", __doc__.split("\n\n")[0], warmup=False)
    p.add_argument("--kernels", type=choices(KERNELS), default=list(KERNELS), metavar="LIST",
                   help=f"comma-separated from {', '.join(KERNELS)} (default all)")
    p.add_argument("--steps", type=int, default=None,
                   help="time steps of the stencils (default PolyBench LARGE's 500)")
    p.add_argument("--no-verify", action="store_true", help="skip the NumPy comparison")
    p.add_argument("--compiled", action="store_true",
                   help="also run the stencils with their steps compiled by pg.compile, trials alternating with "
                        "the plain ones; compiled / plain: the median of each pair's ratio")
    p.add_argument("--reference", default=None, metavar="DIR",
                   help="folder of PolyBench's serial binaries pb_KERNEL, run in the same job")
    p.set_defaults(trials=3)
    return p


def main(argv: list[str]) -> int:
    p = make_parser()
    args = p.parse_args(argv)
    rows, results = [], []
    for name in args.kernels:
        steps = args.steps or LARGE[name][1]
        progress(f"{name}: {steps if name != 'mvt' else 1} steps")
        refs: list = []
        between = (lambda: refs.append(run_reference(args.reference, name))) if args.reference else None
        if args.compiled and name in STEPS:
            r, rc = compare_compiled(name, steps, not args.no_verify, args.trials, between)
        else:
            r, rc = run_kernel(name, steps, not args.no_verify, trials=args.trials, between=between), None
        if refs:
            pair_ratios(r, refs[::2] if rc else refs, LARGE[name][1])
            if rc:
                pair_ratios(rc, refs[1::2], LARGE[name][1])
        for x in (r, rc) if rc else (r,):
            results.append(x)
            rows.append([name + (" compiled" if x["compiled"] else ""), x["steps"], x["seconds"],
                         x.get("reference", {}).get("seconds") or float("nan"), x.get("ratio_to_c", float("nan")),
                         x.get("ratio_to_plain", float("nan")), "yes" if x["verified"] else "NO"])
    ok = all(r["verified"] for r in results)
    path = write_result("polybench", {"kernels": results, "locales": pg.num_locales, "verified": ok}, args.out)
    if comm.here() == 0:
        print(f"PolyBench LARGE on {pg.num_locales} locales (pgas: median of {args.trials} trials; C serial at "
              "full LARGE, one run after each trial, median; pgas / C: median of each trial's time per step "
              "over the C run after it)")
    print_table(["kernel", "steps", "pgas s", "C s (LARGE)", "pgas / C", "compiled / plain", "verified"], rows)
    if comm.here() == 0:
        print(f"results written to {path}")
    return 0 if ok else 1
