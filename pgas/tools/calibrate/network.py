"""Measuring the network model's figures (``pgas calibrate``; the model is :mod:`pgas.exec.calibration`).

Every locale measures at once against the next locale (``r + 1 mod P``), as the
paper's profiles with all processors of a node active, and each figure is the
slowest locale's (an allreduce max).  Measured: the round-trip latency of one
element (``latency``, also the per-element path's ``element``), the start-up
overhead of a non-blocking get by burst length and payload ``o(b, S)``, the
gap per byte of one large get, a grid of region length x region count (every
other block of ``length``) for pipelined gets (one per region), packed gets
(one derived datatype, built as the runtime builds it) and bounding reads (one
get of the interval, twice the payload, and a local gather), and for writes
pipelined and packed puts (``put_pipelined``, ``put_packed``), which the
automatic choice interpolates (:class:`pgas.exec.calibration.Grid`), and from
which the pipelined (``issue``, with ``gap`` from the large get) and packed (``packed_fixed``,
``packed_run``, ``packed_gap``) figures are fitted by least squares, the local
gather rate (``copy_gap``), and for strip-mining (:mod:`pgas.plan.overlap`) NumPy's
add rate per element (``compute``), the fixed cost of a tiny task (``task``), what
one more strip costs a real statement (``strip``, :mod:`pgas.tools.calibrate.statements`; the
default at one locale), and
how much of a large non-blocking get overlaps a compute of the same length
(``overlap``, the least over the locales), and for the owner choice what one
remote write-back (an accumulate) costs a real statement beyond its transfer
(``writeback``, :func:`pgas.tools.calibrate.statements.writeback`; the default at one locale).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from pgas.comm import process, runtime
from pgas.comm.window import Window

LENGTHS = (1, 4, 16, 64, 256, 1024, 4096)    # region length, elements (float64)
COUNTS = (1, 4, 16, 64, 256, 1024)           # regions per transfer
MAX_ELEMENTS = 1 << 20                       # grid points moving more are skipped
BURSTS = (1, 8, 64)
PAYLOADS = (8, 1024, 16384)              # bytes
GRID_PROTOCOLS = ("pipelined", "packed", "bounding", "put_pipelined", "put_packed")


class _Progress:
    """tqdm's bar on locale 0 when tqdm is installed (``pip install pgas[progress]``),
    else one line per tenth."""

    def __init__(self, total: int, show: bool) -> None:
        self.total, self.done, self.show, self.bar = total, 0, show, None
        if show:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, desc="pgas calibrate", unit="step", file=sys.stderr)
            except ImportError:
                pass

    def step(self, what: str) -> None:
        self.done += 1
        if not self.show:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(what, refresh=False)
            self.bar.update(1)
        elif self.done * 10 // self.total != (self.done - 1) * 10 // self.total or self.done == self.total:
            print(f"[calibrate] {100 * self.done // self.total:3d}% {what}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _median_time(fn, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def measure(reps: int = 5, progress: bool = True) -> dict:
    """Collective: the raw measurements (seconds; the slowest locale's) as a dict."""
    MPI = process.mpi()
    comm = runtime.comm()
    me, P = comm.Get_rank(), comm.Get_size()
    target = (me + 1) % P
    shape = [(L, C) for L in LENGTHS for C in COUNTS if L * C <= MAX_ELEMENTS]
    n = 2 * max(L * C for L, C in shape)
    win = MPI.Win.Allocate(n * 8, 8, comm=comm)
    mem = np.frombuffer(win.tomemory(), dtype=np.float64)
    mem[:] = 1.0
    win.Lock_all()
    comm.Barrier()
    D = MPI.DOUBLE
    steps = 6 + len(BURSTS) * len(PAYLOADS) + len(shape)
    bar = _Progress(steps, progress and me == 0)
    out: dict = {}
    try:
        one = np.empty(1)

        def get1():
            win.Get([one, D], target, [0, 1, D])
            win.Flush(target)
        for _ in range(20):
            get1()
        out["latency"] = _median_time(get1, 20 * reps)
        bar.step("latency")
        big = np.empty(n // 2)

        def getbig():
            win.Get([big, D], target, [0, len(big), D])
            win.Flush(target)
        out["big_bytes"] = big.nbytes
        out["big"] = _median_time(getbig, reps)
        bar.step("bandwidth")
        o = {}
        for b in BURSTS:
            for S in PAYLOADS:
                k = S // 8
                bufs = np.empty(b * k)

                def issue():
                    for j in range(b):
                        win.Get([bufs[j * k:(j + 1) * k], D], target, [j * k, k, D])
                tot = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    issue()
                    t1 = time.perf_counter()
                    win.Flush(target)
                    tot.append(t1 - t0)
                o[f"{b},{S}"] = float(np.median(tot)) / b
                bar.step(f"o(b={b}, S={S})")
        out["o"] = o
        out["grid"] = _grid(shape, target, n, reps, bar)
        scratch = np.random.default_rng(0).random(n)
        idx = np.arange(0, n, 2)
        dst = np.empty(len(idx))
        out["copy"] = _median_time(lambda: np.take(scratch, idx, out=dst), reps)
        out["copy_bytes"] = dst.nbytes
        bar.step("local gather")
        x = np.ones(1 << 20)
        out["add"] = _median_time(lambda: np.add(x, x, out=x), reps)
        out["add_elements"] = x.size
        bar.step("compute rate")
        out["task"] = _median_time(_tiny_task(), 20 * reps)
        bar.step("task overhead")
        out.update(_overlap(win, target, big, x, out["add"], reps))
        bar.step("overlap")
    finally:
        bar.close()
        comm.Barrier()
        win.Unlock_all()
        win.Free()
    return _slowest(comm, out)


def _tiny_task():
    """A stand-in for the fixed cost of computing one task (two strided views of a
    buffer, a multiply, a broadcast, a reduction) on one element."""
    buf = np.ones(4)

    def task():
        a = np.ndarray((1, 1), dtype=buf.dtype, buffer=buf, offset=0, strides=(8, 8))
        b = np.ndarray((1, 1), dtype=buf.dtype, buffer=buf, offset=8, strides=(8, 8))
        v = np.broadcast_to(np.multiply(a, b), (1, 1))
        np.add.reduce(v, axis=(1,), keepdims=True)
        np.empty(1)
    return task


def _overlap(win, target: int, big: np.ndarray, x: np.ndarray, t_add: float, reps: int) -> dict:
    """How much of a large non-blocking get proceeds while this locale computes, every
    locale at once (as in a strip-mined statement): the get alone, a compute of about
    the same length alone, and the two together (the get started, then the compute,
    then the wait); ``overlap = (get + compute - together) / min(get, compute)``,
    clipped to [0, 1]."""
    MPI = process.mpi()
    comm = runtime.comm()
    D = MPI.DOUBLE

    def get():
        win.Rget([big, D], target, [0, len(big), D]).Wait()
        win.Flush(target)
    t_get = _median_time(get, reps)
    r = max(1, round(t_get / max(t_add, 1e-9)))

    def compute():
        for _ in range(r):
            np.add(x, x, out=x)

    def both():
        req = win.Rget([big, D], target, [0, len(big), D])
        compute()
        req.Wait()
        win.Flush(target)
    ts = {"get": [], "compute": [], "both": []}
    for _ in range(reps):                       # alternated, every locale together
        for k, f in (("get", get), ("compute", compute), ("both", both)):
            comm.Barrier()
            t0 = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t0)
    g, c, b = (float(np.median(ts[k])) for k in ("get", "compute", "both"))
    eta = min(1.0, max(0.0, (g + c - b) / max(min(g, c), 1e-12)))
    return {"overlap_get": g, "overlap_compute": c, "overlap_both": b,
            "overlap": comm.allreduce(eta, op=MPI.MIN)}


def _together(fn) -> float:
    """Seconds of ``fn()`` started on every locale at once: the slowest locale's."""
    comm = runtime.comm()
    comm.Barrier()
    t0 = time.perf_counter()
    fn()
    return comm.allreduce(time.perf_counter() - t0, op=process.mpi().MAX)


def _grid(shape, target: int, n: int, reps: int, bar) -> list:
    """Times of the three protocols over the grid, through the runtime's own window
    calls (so their Python overheads count as they do in statements): each the median
    over ``reps`` of the slowest locale's time, every locale starting together."""
    w = Window(n, np.float64, key=("pgas-calibrate", n))
    w.local[:] = 1.0
    w.sync()
    runtime.comm().Barrier()
    grid = []
    try:
        for L, C in shape:
            buf = np.empty(L * C)
            regions = ((0, (C, L) if L > 1 else (C,), (2 * L, 1) if L > 1 else (2,)),)
            offs, lens = np.arange(C, dtype=np.int64) * 2 * L, np.full(C, L, dtype=np.int64)
            gather = (np.arange(C)[:, None] * 2 * L + np.arange(L)).ravel()

            def pipelined():
                w.get_runs(target, offs, lens, buf)
                w.flush(target)

            def packed():
                w.get_regions(target, regions, buf, flush=False)
                w.flush(target)

            def bounding():                     # a fresh scratch buffer, as the runtime's
                span = np.empty(2 * L * C - L)
                w.get_runs(target, offs[:1], np.array([len(span)]), span)
                w.flush(target)
                np.take(span, gather, out=buf)

            def put_pipelined():                # writes: one put per run, as write-backs go
                w.put_runs(target, offs, lens, buf)
                w.flush(target)

            def put_packed():
                w.put_regions(target, regions, buf, flush=False)
                w.flush(target)
            fns = {"pipelined": pipelined, "packed": packed, "bounding": bounding,
                   "put_pipelined": put_pipelined, "put_packed": put_packed}
            ts = {k: [] for k in fns}
            for f in fns.values():
                f()
            for _ in range(reps):                   # alternated, so that noise hits all alike
                for k, f in fns.items():
                    ts[k].append(_together(f))
            grid.append({"length": L, "count": C, "bytes": 8 * L * C,
                         **{k: float(np.median(v)) for k, v in ts.items()}})
            bar.step(f"grid {L}x{C}")
    finally:
        runtime.comm().Barrier()
        w.free()
    return grid


def _slowest(comm, out: dict) -> dict:
    """Each timing replaced by its maximum over the locales."""
    flat = [out["latency"], out["big"], out["copy"], out["add"], out["task"]] + list(out["o"].values()) + \
        [g[p] for g in out["grid"] for p in GRID_PROTOCOLS]
    MPI = process.mpi()
    arr = np.array(flat)
    comm.Allreduce(MPI.IN_PLACE, arr, op=MPI.MAX)
    vals = iter(arr.tolist())
    for k in ("latency", "big", "copy", "add", "task"):
        out[k] = next(vals)
    out["o"] = {k: next(vals) for k in out["o"]}
    for g in out["grid"]:
        for p in GRID_PROTOCOLS:
            g[p] = next(vals)
    return out


def fit(meas: dict) -> dict:
    """The model figures fitted to measurements (least squares, clipped to be non-negative)."""
    L = meas["latency"]
    gap = max((meas["big"] - L) / meas["big_bytes"], 1e-13)
    grid = meas["grid"]
    cnt = np.array([g["count"] for g in grid], dtype=float)
    nb = np.array([g["bytes"] for g in grid], dtype=float)
    pipe = np.array([g["pipelined"] for g in grid]) - L
    pack = np.array([g["packed"] for g in grid]) - L
    w = 1.0 / np.maximum(np.array([g["pipelined"] for g in grid]), 1e-7)     # relative error
    (issue,), *_ = np.linalg.lstsq((cnt * w)[:, None], (pipe - nb * gap) * w, rcond=None)
    w2 = 1.0 / np.maximum(np.array([g["packed"] for g in grid]), 1e-7)
    (fixed, run, kgap), *_ = np.linalg.lstsq(np.c_[np.ones_like(cnt), cnt, nb] * w2[:, None], pack * w2, rcond=None)
    small = [v for k, v in meas["o"].items() if k.endswith(",8")]
    figs = {"latency": L, "issue": float(max(issue, min(small) if small else 1e-7, 1e-8)),
            "gap": float(gap), "packed_fixed": float(max(fixed, 0.0)),
            "packed_run": float(max(run, 1e-10)), "packed_gap": float(max(kgap, 1e-13)),
            "copy_gap": float(max(meas["copy"] / meas["copy_bytes"], 1e-13)), "element": L,
            "compute": float(max(meas["add"] / meas["add_elements"], 1e-13)), "task": float(meas["task"]),
            "strip": float(meas.get("strip_overhead", 5e-5)),
            "overlap": float(meas["overlap"])}
    figs["writeback"] = _writeback(meas, figs)
    return figs


def _writeback(meas: dict, f: dict) -> float:
    """The ``writeback`` figure, its transfers priced as the owner choice prices them
    (the owner choice's weights in :mod:`pgas.exec.statement`, 8-byte elements)."""
    from pgas.exec.calibration import DEFAULTS

    from .statements import writeback

    per_element = 8 * min(f["packed_gap"], f["gap"])
    per_message = f["latency"] + min(f["packed_fixed"], f["issue"])
    return float(writeback(meas, per_element, per_message, DEFAULTS["writeback"]))


def main(argv=None) -> int:
    """``python -m pgas.tools.calibrate.network [--reps R] [--out PATH]`` under a launcher: measure,
    fit and store (one writer per host)."""
    import argparse
    import socket

    from pgas.exec import calibration as model

    from . import statements

    p = argparse.ArgumentParser(prog="pgas calibrate")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    meas = measure(args.reps)
    meas.update(statements.measure(args.reps))       # the per-strip cost, through the statement runtime
    meas.update(statements.measure_writeback(args.reps))
    figs = fit(meas)
    comm = runtime.comm()
    me = comm.Get_rank()
    host = socket.gethostname()
    hosts = comm.allgather(host)
    key = model.key(host, process.library_version(), comm.Get_size(), model.transport())
    if hosts.index(host) == me:
        path = model.save(key, figs, meas, args.out)
        if me == 0:
            print(f"pgas calibrate: {comm.Get_size()} locales, {time.perf_counter() - t0:.1f} s; wrote {path}")
            for k, v in figs.items():
                print(f"  {k:13} {v:.3e}")
    comm.Barrier()
    model.reset()
    return 0


if __name__ == "__main__":
    sys.exit(main())
