"""``pgas bench memory``: peak resident memory per locale of each constructor and of the first
run of stencil statements, as a multiple of the locale's data.

Each case runs in the same job, one after the other: the pool of released windows
is emptied (so no case reuses an earlier one's memory), the process's peak resident
set is reset (Linux: ``/proc/self/clear_refs``), the case runs, and the new peak
over the resident set just before it is read.  The *multiple* is that peak, plus
the case's arrays that were already resident (a statement's operands), over the
locale's data (the bytes of every array the case makes or uses on this locale):
1.0 is no memory beyond the data, 2.0 a full-size temporary; ``empty`` touches no
page of its window (0.0).  The *own* multiple leaves out the pages of other
locales' windows that the case mapped by reading them through shared memory
(:func:`own`): counted in the resident set, allocated by their owners.  The
largest multiples over the locales are reported.

Cases: the constructors (``empty``, ``zeros``, ``ones``, ``full`` of a scalar and of a
broadcast row, the ``*_like`` family, ``arange``, ``eye``, ``linspace``,
``fromfunction``, ``from_numpy``, ``from_local``, ``load`` of a C- and of a
Fortran-ordered file, the random generators, ``redistribute``) on ``--size`` x
``--size`` float64 (``arange``, ``linspace``: ``size**2`` elements), and the first
run of three statements on two such arrays (Jacobi's 4-point update, its copy
back, the 5-point update of the README) and of three ``forall`` loops (a reduction
over an ignored loop variable, ``s[i] += A[i, j] * B[i, j]``; a clipped domain, the
upper triangle ``B[i, j] = A[i, j] * 2 + 1``; an inspector-planned ``B[i, j] =
a[i + j] * 2 + 1``), with ``pg.config(fuse="auto")``: the NumPy path, with or
without numba.

``--fill FRACTION`` runs instead a few Jacobi steps on two float64 arrays whose
total is ``FRACTION`` of the node's memory (:mod:`pgas.tools.bench.memoryfill`).
"""

from __future__ import annotations

import ctypes
import gc
import os
import shutil
import tempfile

import numpy as np

import pgas as pg
from pgas import comm
from pgas.comm import window
from pgas.tools.bench import choices, memoryfill, parser, print_table, progress, write_result

LOCALES = 2


def _status(field: str) -> int:
    """A ``/proc/self/status`` figure in bytes (``VmRSS``, ``VmHWM``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(f"/proc/self/status has no {field}")


def resident() -> int:
    """This process's resident set now, in bytes."""
    return _status("VmRSS")


def peak() -> int:
    """This process's peak resident set since the last :func:`reset_peak`, in bytes."""
    return _status("VmHWM")


def reset_peak() -> None:
    """Reset the peak resident set to the current one (Linux 4.0 and later); OSError elsewhere."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def supported() -> bool:
    """True if this system lets a process reset and read its peak resident set."""
    try:
        reset_peak()
        peak()
    except OSError:
        return False
    return True


def drain() -> None:
    """Collective: free every released window now (the pool keeps none), and give the
    C heap's free memory back to the system (glibc's ``malloc_trim``), so that a case's
    memory is its own, not a reused window's nor heap memory an earlier case freed
    (which stays resident, and would hide a temporary that reuses it)."""
    gc.collect()
    limit = window.POOL_LIMIT
    window.POOL_LIMIT = 0
    try:
        window.collect()
    finally:
        window.POOL_LIMIT = limit
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc():
    try:
        lib = ctypes.CDLL(None)
        lib.malloc_trim                              # glibc only
    except (OSError, AttributeError):
        return None
    return lib


_LIBC = _libc()


def measure(fn) -> tuple:
    """Collective: ``(fn(), peak growth, shared growth)``: the peak resident set while
    ``fn`` ran above the resident set just before it, and how much the resident shared
    memory grew meanwhile (see :func:`own`), in bytes."""
    drain()
    comm.barrier()
    reset_peak()
    base, shared = resident(), _status("RssShmem")
    out = fn()
    return out, peak() - base, _status("RssShmem") - shared


def own(grown: int, shared: int, made: int = 0) -> int:
    """The peak growth less the pages of other locales' windows that this locale mapped:
    the growth of its shared memory beyond the ``made`` bytes of its own new windows.
    MPI's windows on a node are shared memory, and reading a neighbour's (a column halo,
    a redistribution) maps the neighbour's pages into the reader's resident set (with the
    kernel's fault-around, whole rows of them), counted there though the reader
    allocated nothing."""
    return grown - max(0, shared - made)


def _nbytes(*arrays) -> int:
    return sum(a.store.storage.nbytes for a in arrays)


def _import_numba() -> None:
    """Import numba (if installed), whose start-up a fused kernel's first use (a clipped
    ``forall`` loads one cached on disk) would otherwise count in that case's peak."""
    try:
        import numba  # noqa: F401
    except ImportError:
        pass


def constructors(n: int, path: str) -> dict:
    """Collective: name -> ``(make, inputs)``: a function making the case's array and the
    NumPy inputs held (already resident) while it runs."""
    shape = (n, n)
    row = np.arange(n, dtype=np.float64)
    return {
        "empty": lambda: pg.empty(shape),
        "zeros": lambda: pg.zeros(shape),
        "ones": lambda: pg.ones(shape),
        "full": lambda: pg.full(shape, 2.5),
        "full (broadcast row)": lambda: pg.full(shape, row),
        "arange": lambda: pg.arange(n * n, dtype=np.float64),
        "random": lambda: pg.random.default_rng(1).random(shape),
        "random (Cyclic)": lambda: pg.random.default_rng(1).random(shape, dist=pg.Cyclic()),
        "standard_normal": lambda: pg.random.default_rng(1).standard_normal(shape),
        "integers": lambda: pg.random.default_rng(1).integers(0, 1000, shape),
        "load": lambda: pg.load(path),
        "load (Fortran order)": lambda: pg.load(fortran_path(path)),
        "eye": lambda: pg.eye(n),
        "linspace": lambda: pg.linspace(0.0, 1.0, n * n),
        "fromfunction": lambda: pg.fromfunction(lambda i, j: i * 0.5 + j, shape),
    }


def fortran_path(path: str) -> str:
    """The Fortran-ordered ``.npy`` file beside ``path`` that the ``load (Fortran order)`` case reads."""
    return path[:-len(".npy")] + "-fortran.npy"


def save_inputs(path: str, n: int, which) -> None:
    """Collective: the files the load cases read (the Fortran-ordered one written by locale 0
    through a memory map, a column at a time)."""
    if "load" in which:
        pg.save(path, pg.full((n, n), 1.5))
    if "load (Fortran order)" in which and comm.here() == 0:
        f = np.lib.format.open_memmap(fortran_path(path), "w+", np.float64, (n, n), fortran_order=True)
        for j in range(n):
            f[:, j] = 1.5 + j
        f.flush()
        del f
    comm.barrier()


def run_cases(n: int, which: list, path: str) -> list:
    """Collective: one row per case: data, peak and own peak (MiB) and their multiples of
    the data (the largest over the locales)."""
    rows = []
    made = constructors(n, path)
    me = comm.here()

    def row(case, data, got, made=0, before=0):
        """``got``: what :func:`measure` gave; ``made``: this locale's new window bytes;
        ``before``: the case's data already resident."""
        _, grown, shared = got
        raw, mine = grown + before, own(grown, shared, made) + before
        big = comm.allreduce(np.array([data, raw, mine], dtype=np.int64), "max")
        mult = comm.allreduce(np.array([raw / max(data, 1), mine / max(data, 1)]), "max")
        rows.append({"case": case, "data_mib": big[0] / 2**20, "peak_mib": big[1] / 2**20,
                     "own_peak_mib": big[2] / 2**20, "multiple": float(mult[0]), "own_multiple": float(mult[1])})
        progress(f"{case}: {mult[0]:.3f} x data ({mult[1]:.3f} less other locales' pages)")

    for case, make in made.items():
        if case in which:
            got = measure(make)
            row(case, _nbytes(got[0]), got, _nbytes(got[0]))
            del got
    like = {"zeros_like": pg.zeros_like, "ones_like": pg.ones_like, "empty_like": pg.empty_like,
            "full_like": lambda a: pg.full_like(a, 3.0)}
    if any(k in which for k in like) or "redistribute" in which:
        src = pg.zeros((n, n))
        for case, fn in like.items():
            if case in which:
                got = measure(lambda: fn(src))
                row(case, _nbytes(got[0]), got, _nbytes(got[0]))
                del got
        if "redistribute" in which:
            got = measure(lambda: src.redistribute(pg.Cyclic()))
            row("redistribute (Block to Cyclic)", _nbytes(src, got[0]), got, _nbytes(got[0]), _nbytes(src))
            del got
        del src
    if "from_numpy" in which:
        g = np.ones((n, n))
        got = measure(lambda: pg.from_numpy(g))
        row("from_numpy", _nbytes(got[0]), got, _nbytes(got[0]))
        del got, g
    if "from_local" in which:
        shape = pg.Block().bind((n, n), comm.num_locales()).local_shape(me)
        block = np.ones(shape)
        got = measure(lambda: pg.from_local(block, (n, n)))
        row("from_local", _nbytes(got[0]), got, _nbytes(got[0]))
        del got, block
    stmts = {
        "jacobi 4-point": lambda A, B: B.__setitem__((slice(1, -1), slice(1, -1)), 0.25 * (
            A[1:-1, :-2] + A[1:-1, 2:] + A[:-2, 1:-1] + A[2:, 1:-1])),
        "copy back": lambda A, B: A.__setitem__((slice(1, -1), slice(1, -1)), B[1:-1, 1:-1]),
        "5-point (README)": lambda A, B: B.__setitem__((slice(1, -1), slice(1, -1)), 0.2 * (
            A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])),
    }
    for case, stmt in stmts.items():
        if case in which:
            A, B = pg.ones((n, n)), pg.zeros((n, n))
            got = measure(lambda: stmt(A, B))
            row(f"{case}, first run", _nbytes(A, B), got, 0, _nbytes(A, B))
            del A, B
    for case, (make, body) in foralls(n).items():
        if case in which:
            arrays = make()
            got = measure(lambda: body(*arrays))
            row(f"{case}, first run", _nbytes(*arrays), got, 0, _nbytes(*arrays))
            del arrays
    return rows


def foralls(n: int) -> dict:
    """name -> ``(make, run)``: the arrays a ``forall`` case uses, and the case on them."""
    def reduction(s, A, B):                      # a row's products summed: a reduction over j
        def body(i, j):
            s[i] += A[i, j] * B[i, j]
        pg.forall((range(n), range(n)), body)

    def clipped(A, B):                           # the upper triangle: a clipped domain
        pg.forall((range(n), lambda i: range(i, n)), lambda i, j: B.__setitem__((i, j), A[i, j] * 2 + 1))

    def inspected(a, B):                         # a[i + j]: not separable, planned by the inspector
        pg.forall((range(n), range(n)), lambda i, j: B.__setitem__((i, j), a[i + j] * 2 + 1))

    two = lambda: (pg.ones((n, n)), pg.zeros((n, n)))           # noqa: E731
    return {
        "forall reduction": (lambda: (pg.zeros(n),) + two(), reduction),
        "forall clipped": (two, clipped),
        "forall inspected": (lambda: (pg.ones(2 * n), pg.zeros((n, n))), inspected),
    }


CASES = ["empty", "zeros", "ones", "full", "full (broadcast row)", "zeros_like", "ones_like", "empty_like",
         "full_like", "arange", "eye", "linspace", "fromfunction", "from_numpy", "from_local", "load",
         "load (Fortran order)", "random", "random (Cyclic)", "standard_normal", "integers", "redistribute",
         "jacobi 4-point", "copy back", "5-point (README)", "forall reduction",
         "forall clipped", "forall inspected"]


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("memory", __doc__.split("\n\n")[0], trials=False, warmup=False)
    p.add_argument("--size", type=int, default=4096,
                   help="rows and columns of each float64 array (default 4096: 128 MiB)")
    p.add_argument("--cases", type=choices(CASES), default=CASES, metavar="LIST",
                   help="comma-separated cases (default all): " + ", ".join(CASES))
    p.add_argument("--fill", type=float, default=None, metavar="FRACTION",
                   help="instead of the cases: Jacobi steps on two float64 arrays taking FRACTION of the node's "
                        "memory (MemTotal), each locale's peak resident set against its data")
    p.add_argument("--steps", type=int, default=2, help="Jacobi steps with --fill (default 2)")
    return p


def fill(fraction: float, steps: int, out) -> None:
    """Collective: ``--fill``: :func:`pgas.tools.bench.memoryfill.run`, reported."""
    got = memoryfill.run(fraction, steps, _status, reset_peak, progress)
    print_table(["locale", "data MiB", "resident before MiB", "peak MiB", "(peak - before) / data"],
                [[r["locale"], f"{r['data_mib']:.1f}", f"{r['before_mib']:.1f}", f"{r['peak_mib']:.1f}",
                  f"{r['growth_over_data']:.3f}"] for r in got["rows"]])
    progress(f"{got['steps']} steps on {got['side']} x {got['side']}, values "
             + ("checked" if got["values_checked"] else "WRONG"))
    progress(f"results in {write_result('memory-fill', {'locales': comm.num_locales(), **got}, out)}")


def main(argv=None) -> None:
    args = make_parser().parse_args(argv)
    if not supported():
        raise SystemExit("pgas bench memory needs Linux's /proc/self/clear_refs to reset the peak resident set")
    pg.config(fuse="auto")
    if args.fill is not None:
        if not 0 < args.fill < 1:
            raise SystemExit(f"--fill takes a fraction of the node's memory between 0 and 1, got {args.fill}")
        return fill(args.fill, args.steps, args.out)
    startup = measure(_import_numba)[1]
    progress(f"numba's import (made once per process, before the cases): {startup / 2**20:.1f} MiB")
    tmp = comm.bcast(tempfile.mkdtemp(prefix="pgas-memory-") if comm.here() == 0 else None, 0)
    path = os.path.join(tmp, "a.npy")
    try:
        save_inputs(path, args.size, args.cases)
        rows = run_cases(args.size, args.cases, path)
    finally:
        comm.barrier()
        if comm.here() == 0:
            shutil.rmtree(tmp, ignore_errors=True)
    print_table(["case", "data MiB", "peak MiB", "x data", "own peak MiB", "own x data"],
                [[r["case"], f"{r['data_mib']:.1f}", f"{r['peak_mib']:.1f}", f"{r['multiple']:.3f}",
                  f"{r['own_peak_mib']:.1f}", f"{r['own_multiple']:.3f}"] for r in rows])
    out = write_result("memory", {"size": args.size, "locales": comm.num_locales(), "rows": rows}, args.out)
    progress(f"results in {out}")
