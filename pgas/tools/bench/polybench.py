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


def jacobi_steps(A, B, steps: int) -> None:
    """PolyBench's jacobi-2d on DistArrays or NumPy arrays alike."""
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def fdtd_init(nx: int, ny: int, tmax: int):
    i, j = np.meshgrid(np.arange(nx, dtype=np.float64), np.arange(ny, dtype=np.float64), indexing="ij")
    return (i * (j + 1)) / nx, (i * (j + 2)) / ny, (i * (j + 3)) / nx, np.arange(tmax, dtype=np.float64)


def fdtd_steps(ex, ey, hz, fict, steps: int) -> None:
    """PolyBench's fdtd-2d on DistArrays or NumPy arrays alike."""
    for t in range(steps):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


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


def run_kernel(name: str, steps: int, verify: bool, sizes: dict = LARGE, trials: int = 1, between=None) -> dict:
    """Collective: warm-up, ``trials`` timed runs (each from PolyBench's initial values)
    and verification of the last one, for one kernel (``sizes``: its problem size and
    PolyBench steps, LARGE's by default).  ``seconds`` is the median of the trials
    (slowest locale each), ``trial_seconds`` all of them; ``sums`` are the sums of the
    result arrays of the last trial (A, B; ex, ey, hz; x1, x2), to check other
    implementations' results by.  ``between``: called
    (collectively) after each trial, untimed: the reference's run beside it."""
    times = []
    _timed = _timer(between)
    if name == "jacobi-2d":
        n = sizes[name][0]
        GA, GB = jacobi_init(n)
        A, B = _dist(GA), _dist(GB)
        jacobi_steps(A, B, WARM)                               # warm-up: compiles the statements' kernels
        for _ in range(trials):
            A, B = _dist(GA), _dist(GB)
            times.append(_timed(lambda: jacobi_steps(A, B, steps)))
        got = [A.to_numpy(0), B.to_numpy(0)]
        want = lambda: (jacobi_steps(GA, GB, steps), [GA, GB])[1]     # noqa: E731
    elif name == "fdtd-2d":
        (nx, ny), tmax = sizes[name]
        init = fdtd_init(nx, ny, tmax)
        arrays = [_dist(G) for G in init[:3]]
        fdtd_steps(*arrays, init[3], WARM)
        for _ in range(trials):
            arrays = [_dist(G) for G in init[:3]]
            times.append(_timed(lambda: fdtd_steps(*arrays, init[3], steps)))
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
    return {"kernel": name, "steps": steps if name != "mvt" else 1, "seconds": float(np.median(times)),
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


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("polybench", __doc__.split("\n\n")[0], warmup=False)
    p.add_argument("--kernels", type=choices(KERNELS), default=list(KERNELS), metavar="LIST",
                   help=f"comma-separated from {', '.join(KERNELS)} (default all)")
    p.add_argument("--steps", type=int, default=None,
                   help="time steps of the stencils (default PolyBench LARGE's 500)")
    p.add_argument("--no-verify", action="store_true", help="skip the NumPy comparison")
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
        r = run_kernel(name, steps, not args.no_verify, trials=args.trials, between=between)
        if refs:
            pair_ratios(r, refs, LARGE[name][1])
        results.append(r)
        rows.append([name, r["steps"], r["seconds"], r.get("reference", {}).get("seconds") or float("nan"),
                     r.get("ratio_to_c", float("nan")), "yes" if r["verified"] else "NO"])
    ok = all(r["verified"] for r in results)
    path = write_result("polybench", {"kernels": results, "locales": pg.num_locales, "verified": ok}, args.out)
    if comm.here() == 0:
        print(f"PolyBench LARGE on {pg.num_locales} locales (pgas: median of {args.trials} trials; C serial at "
              "full LARGE, one run after each trial, median; pgas / C: median of each trial's time per step "
              "over the C run after it)")
    print_table(["kernel", "steps", "pgas s", "C s (LARGE)", "pgas / C", "verified"], rows)
    if comm.here() == 0:
        print(f"results written to {path}")
    return 0 if ok else 1
