"""``pgas bench stream``: EP STREAM (copy, scale, add, triad) on Block-distributed arrays.

Three float64 arrays of ``n`` elements per locale (default 2^23: 64 MiB each,
far larger than a last-level cache), ``a = 1, b = 2, c = 0`` at the start;
each trial runs ``c = a; b = s c; c = a + b; a = b + s c`` (``s = 3``).
Every kernel is owner-computes with no messages: copy, scale and add are
whole-array ufuncs on the DistArrays (``np.add(A, B, out=C)``), triad is
strip-mined over the local part so ``s c`` stays in cache (one pass over
memory, like C); ``triad_2pass`` is the plain two-ufunc triad for contrast;
``triad_stmt`` is the triad as one statement, ``A[:] = B[:] + s * C[:]``, run by
the statement engine (one fused kernel pass storing in place when numba is
installed, see :mod:`pgas.exec.fuse`; NumPy calls otherwise).
Times are per kernel, the slowest locale's, best over the trials after the
warm-up; bandwidth counts the bytes STREAM counts (2 or 3 arrays).

Verification, as in the UPC paper: every locale reads ``num_locales`` random
elements of each array (one-sided gets, mostly remote) and compares them with
the values the recurrence gives; every locale also checks its whole part.

The C reference (``pgas/tools/bench/c/stream.c``, compiled with ``gcc -O3
-march=native`` at run time) runs as one process per locale at the same
size, all at once; its bandwidth is the sum over the processes.  With
``--reference PATH`` McCalpin's ``stream_mpi`` (``stream_mpi_npP`` from
the reference build described in ``docs/benchmarks.md`` (Reference codes), built for P processes) runs in the same job with
as many processes as locales; its best rates are reported beside pgas's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench import parser, print_table, progress, reference, write_result

SCALAR = 3.0
KERNELS = ("copy", "scale", "add", "triad", "triad_2pass", "triad_stmt")
WORDS = {"copy": 2, "scale": 2, "add": 3, "triad": 3, "triad_2pass": 3, "triad_stmt": 3}
STRIP = 1 << 16                                   # elements per strip: 512 KiB, fits in L2
C_SOURCE = os.path.join(os.path.dirname(__file__), "c", "stream.c")


def triad(A, B, C, s: float, tmp: np.ndarray) -> None:
    """``A = B + s C`` on each locale's part, strip by strip (``tmp`` holds one strip)."""
    a, b, c = A.local, B.local, C.local
    for lo in range(0, a.size, STRIP):
        hi = min(lo + STRIP, a.size)
        t = tmp[:hi - lo]
        np.multiply(c[lo:hi], s, out=t)
        np.add(b[lo:hi], t, out=a[lo:hi])


def kernels(A, B, C, tmp):
    """The kernels in trial order, as (name, function)."""
    return [("copy", lambda: np.positive(A, out=C)),
            ("scale", lambda: np.multiply(C, SCALAR, out=B)),
            ("add", lambda: np.add(A, B, out=C)),
            ("triad", lambda: triad(A, B, C, SCALAR, tmp)),
            ("triad_2pass", lambda: (np.multiply(C, SCALAR, out=A), np.add(A, B, out=A))),
            ("triad_stmt", lambda: A[:].__setitem__(slice(None), B[:] + SCALAR * C[:]))]


def expected(trials: int) -> tuple[float, float, float]:
    """The values of ``a, b, c`` after ``trials`` rounds (triad_2pass and triad_stmt recompute
    the same ``a``)."""
    a, b, c = 1.0, 2.0, 0.0
    for _ in range(trials):
        c = a
        b = SCALAR * c
        c = a + b
        a = b + SCALAR * c
    return a, b, c


def verify(arrays, want, samples: int) -> dict:
    """Collective: sampled one-sided reads and a full local check against ``want``."""
    rng = np.random.default_rng(comm.here())
    pg.barrier()
    n = arrays[0].size
    idx = rng.integers(0, n, size=samples)
    sampled = sum(int(arr.get(int(i)) != w) for arr, w in zip(arrays, want) for i in idx)
    local = sum(int(np.count_nonzero(arr.local != w)) for arr, w in zip(arrays, want))
    sampled, local = int(comm.allreduce(sampled, "sum")), int(comm.allreduce(local, "sum"))
    return {"sampled_reads": samples * len(arrays) * pg.num_locales, "sampled_errors": sampled,
            "full_errors": local, "verified": sampled == 0 and local == 0}


def run_pgas(n: int, trials: int, warmup: int) -> tuple[dict, dict]:
    """Collective: best seconds per kernel (slowest locale) and the verification."""
    P = pg.num_locales
    A = pg.full(n * P, 1.0, dist=pg.Block(), name="a")
    B = pg.full(n * P, 2.0, dist=pg.Block(), name="b")
    C = pg.full(n * P, 0.0, dist=pg.Block(), name="c")
    tmp = np.empty(min(STRIP, max(n, 1)))
    times = {k: [] for k in KERNELS}
    for t in range(warmup + trials):
        for name, fn in kernels(A, B, C, tmp):
            comm.barrier()
            t0 = time.perf_counter()
            fn()
            dt = float(comm.allreduce(time.perf_counter() - t0, "max"))
            if t >= warmup:
                times[name].append(dt)
    return {k: min(v) for k, v in times.items()}, verify((A, B, C), expected(warmup + trials), P)


def compile_c(dest_dir: str) -> str | None:
    """Build the C reference (locale 0 only); the binary's path, or None without gcc."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        return None
    exe = os.path.join(dest_dir, "stream_c")
    subprocess.run([gcc, "-O3", "-march=native", "-o", exe, C_SOURCE], check=True, capture_output=True)
    return exe


def run_c(n: int, trials: int) -> dict | None:
    """Collective: the C reference on every locale at once; best seconds per kernel per process."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = None
        if comm.here() == 0:
            try:
                exe = compile_c(tmp)
            except (OSError, subprocess.CalledProcessError):
                exe = None
        exe = comm.bcast(exe, 0)
        if exe is None:
            return None
        comm.barrier()
        out = subprocess.run([exe, str(n), str(trials + 1)], capture_output=True, text=True)
        res = json.loads(out.stdout) if out.returncode == 0 else None
        results = comm.allgather(res)
        comm.barrier()
    if any(r is None for r in results):
        return None
    return {"per_process": results, "errors": sum(r["errors"] for r in results)}


def run_reference(path: str) -> dict:
    """Collective: McCalpin's stream_mpi at this job's process count; its best rates (GB/s)."""
    progress(f"reference: {path}")
    res = reference.run([reference.mpiexec(), "-n", pg.num_locales, path])
    out = res["stdout"]
    rates = {k.lower(): reference.number(rf"{k}:\s+([0-9.]+)", out) for k in ("Copy", "Scale", "Add", "Triad")}
    size = reference.number(r"Array size per MPI rank = ([0-9]+)", out)
    return dict(res, gb_per_s={k: v / 1e3 for k, v in rates.items() if v is not None},
                elements_per_process=int(size) if size else None,
                validates="Solution Validates" in out)


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("stream", __doc__.split("\n\n")[0])
    p.add_argument("--size", "--n", dest="size", type=int, default=1 << 23, metavar="ELEMENTS",
                   help="float64 elements per array per locale (default 2^23 = 64 MiB per array; "
                        "--n is a deprecated spelling)")
    p.add_argument("--no-c", action="store_true", help="skip the C reference (compiled with cc at first use)")
    p.add_argument("--reference", default=None, metavar="PATH",
                   help="McCalpin's stream_mpi binary built for this many processes (stream_mpi_npP)")
    p.set_defaults(trials=10)
    return p


def main(argv: list[str]) -> int:
    p = make_parser()
    args = p.parse_args(argv)
    P, n = pg.num_locales, args.size
    progress(f"pgas kernels {', '.join(KERNELS)}: {args.trials} trials")
    best, check = run_pgas(n, args.trials, args.warmup)
    gbs = {k: WORDS[k] * 8 * n * P / best[k] / 1e9 for k in KERNELS}
    if not args.no_c:
        progress("C reference")
    c = None if args.no_c else run_c(n, args.trials)
    c_gbs = ({k: sum(WORDS[k] * 8 * n / r[k] for r in c["per_process"]) / 1e9 for k in KERNELS if k in c["per_process"][0]}
             if c else {})
    rows = [[k, gbs[k], gbs[k] / P, c_gbs.get(k, float("nan")), gbs[k] / c_gbs[k] if k in c_gbs else
             (gbs[k] / c_gbs["triad"] if k.startswith("triad_") and c_gbs else float("nan"))] for k in KERNELS]
    ref = run_reference(args.reference) if args.reference else None
    ref_gbs = ref["gb_per_s"] if ref else {}
    for row in rows:
        base = ref_gbs.get(row[0], ref_gbs.get("triad") if row[0].startswith("triad") else None)
        row += [base or float("nan"), gbs[row[0]] / base if base else float("nan")]
    ok = check["verified"] and (c is None or c["errors"] == 0) and (ref is None or ref["validates"])
    path = write_result("stream", {
        "elements_per_locale": n, "bytes_per_array_per_locale": 8 * n, "trials": args.trials,
        "best_seconds": best, "gb_per_s": gbs, "gb_per_s_per_locale": {k: v / P for k, v in gbs.items()},
        "verification": check, "c_reference": c, "c_gb_per_s": c_gbs,
        "ratio_to_c": {k: gbs[k] / c_gbs[k] for k in c_gbs}, "reference": ref,
        "ratio_to_reference": {r[0]: r[-1] for r in rows if ref}, "verified": ok}, args.out)
    if comm.here() == 0:
        print(f"STREAM: {n} float64 per array per locale, {P} locales; C reference: "
              f"{'%d processes' % P if c else 'not run'}")
    print_table(["kernel", "GB/s", "GB/s/locale", "C GB/s", "pgas / C", "McCalpin GB/s", "pgas / McCalpin"], rows)
    if comm.here() == 0 and ref:
        print(f"McCalpin stream_mpi: {ref['argv'][-1]}, {pg.num_locales} processes, "
              f"{ref['elements_per_process']} float64 per array per process")
    if comm.here() == 0:
        print(f"verification: {'passed' if ok else 'FAILED'} ({check['sampled_reads']} sampled reads); "
              f"results written to {path}")
    return 0 if ok else 1
