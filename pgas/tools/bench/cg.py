"""``pgas bench cg``: NAS Parallel Benchmarks CG (classes S, W, A, B) on distributed vectors.

The matrix is NAS's own (``makea``, :mod:`pgas.tools.bench.nas_makea`); its rows and
every vector are Block-distributed over the locales.  Each locale generates
the matrix (deterministic) and keeps its rows.  The sparse matrix-vector
product ``q = A p`` reads the entries of ``p`` its rows need through one
aggregated gather whose index plan is made once (inspector) and reused by
every product (executor: one message per locale pair, values only).

The CG iteration is NAS's (:func:`~pgas.tools.bench.nas_makea.conj_grad`: the same
operations on the same values), scheduled for two synchronisations per step
where a literal transcription has three (:meth:`DistCSR.cg_steps`):

- ``q = A p`` and the local part of ``p.q`` are one compiled pass; one reduction;
- ``z += alpha p``, ``r -= alpha q`` and the local part of ``r.r`` are one pass; the
  reduction of ``r.r`` is started (:func:`pgas.comm.iallreduce`) and the entries
  of ``r`` the product needs are gathered while it runs (their latencies overlap);
- ``p = r + beta p`` is made for this locale's part and, from the gathered ``r``,
  for the entries of ``p`` it reads (the same arithmetic as at their owners, so
  the same values: no gather of ``p``).

Under ``pg.config(nonblocking=False)`` (the Berkeley UPC paper's blocking baseline,
``pgas bench nas --kernels cg --variants blocking,optimised``) the reduction of
``r.r`` is waited for before the gather starts: every communication completes
before the next begins, nothing overlaps; the values are the same.

Local passes are compiled loops (numba), each sum in NPB's order; without numba
(or with ``pg.config(fuse=False)``) NumPy does them.  The three dot products
that end an outer step go in one reduction, as NPB does for two of them.
Verification: ``|zeta - official| / official <= 1e-10``.  Mop/s uses NAS's
operation count.

``--reference DIR`` runs NPB 3.4 CG (MPI) from ``DIR/cg.CLASS.x`` (as built by
the reference build described in ``docs/benchmarks.md`` (Reference codes); a path to one of them names its folder too) for
each class, in the same job with as many processes as locales (a power of
two, NPB's rule); its Mop/s is reported beside pgas's.
"""

from __future__ import annotations

import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.exec import settings
from pgas.tools.bench import choices, parser, print_table, progress, write_result
from pgas.tools.bench.nas_makea import CLASSES, csr_matvec, makea, power_iterations, verified


class DistCSR:
    """This locale's rows of a CSR matrix, with the gather plan for the columns they touch."""

    def __init__(self, rowstr, colidx, a, n: int) -> None:
        self.vec = pg.zeros(n, dtype=np.float64, dist=pg.Block(), name="p")
        lo = int(self.vec.layout.owned(comm.here())[0][0]) if self.vec.local.size else 0
        hi = lo + self.vec.local.size
        s, e = int(rowstr[lo]), int(rowstr[hi])
        self.rowstr = rowstr[lo:hi + 1] - s
        cols = colidx[s:e]
        self.a = a[s:e]
        self.needed = np.unique(cols)
        self.pos = np.searchsorted(self.needed, cols)
        self.plan = self.vec.index_plan(self.needed)
        # the compiled loops' copies: unsigned indices spare numba's negative-index
        # arithmetic on every access (measured 1.6 -> 1.1 ns per nonzero, class S)
        self.urowstr, self.upos = self.rowstr.astype(np.uint64), self.pos.astype(np.uint32)
        self.r = pg.zeros(n, dtype=np.float64, dist=pg.Block(), name="r")
        self.nnz = int(comm.allreduce(len(self.a), "sum"))

    def matvec(self, p_local: np.ndarray) -> np.ndarray:
        """Collective: this locale's part of ``A @ p`` from its part of ``p`` (each row's
        sum in NPB's order by a compiled loop when numba is there: :func:`local_matvec`)."""
        self.vec.local[...] = p_local
        if kernels() is _NumPyKernels:
            return csr_matvec(self.rowstr, self.pos, self.a, self.vec.gather(self.plan))
        return local_matvec(self.urowstr, self.upos, self.a, self.vec.gather(self.plan))

    @staticmethod
    def dot(u: np.ndarray, v: np.ndarray) -> float:
        """Collective: the global dot product of two distributed vectors' local parts."""
        return float(comm.allreduce(float(u @ v), "sum"))

    @staticmethod
    def dots(*pairs) -> list:
        """Collective: several :meth:`dot` products in one reduction (the same values)."""
        return [float(x) for x in comm.allreduce(np.array([float(u @ v) for u, v in pairs]), "sum")]

    def cg_steps(self, x: np.ndarray, cgitmax: int = 25):
        """Collective: :func:`~pgas.tools.bench.nas_makea.conj_grad`'s steps on this locale's part
        of ``x``: ``(z, x - A z)``, two synchronisations per step (see the module's text).
        The iterates are those of NAS's loop: the same operations on the same values, the
        local sums in NPB's order when compiled."""
        k = kernels()
        rows, pos = (self.rowstr, self.pos) if k is _NumPyKernels else (self.urowstr, self.upos)
        n = x.size
        z, p, q, r = np.zeros(n), x.copy(), np.empty(n), self.r.local
        r[...] = x
        pending = comm.iallreduce(k.dot(r, r), "sum")
        ph = self.r.gather(self.plan)                 # the entries of p = r this locale reads
        rho = float(pending.wait())
        pq = k.matvec_dot(rows, pos, self.a, ph, p, q)
        overlap = settings.get("nonblocking")        # False: the blocking baseline, no overlap
        for it in range(cgitmax):
            alpha = rho / float(comm.allreduce(pq, "sum"))
            pending = comm.iallreduce(k.update_zr(alpha, p, q, z, r), "sum")
            if not overlap:
                rho0, rho = rho, float(pending.wait())
            rh = self.r.gather(self.plan)
            if overlap:
                rho0, rho = rho, float(pending.wait())
            if it + 1 < cgitmax:                      # p = r + beta p, here and for the entries
                pq = k.step(rho / rho0, r, p, rh, ph, rows, pos, self.a, q)   # read here; q = A p
        return z, x - self.matvec(z)


_SRC = """
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def matvec_into(rowstr, pos, a, p, out):
    # Two rows at a time: their sums are independent chains (each in NPB's order), so
    # one's additions run while the other's wait.  Unsigned indices (rowstr, pos) skip
    # numba's negative-index arithmetic.
    nrow = rowstr.size - 1
    i = 0
    while i + 1 < nrow:
        k0 = rowstr[i]
        e0 = rowstr[i + 1]
        e1 = rowstr[i + 2]
        m = min(e0 - k0, e1 - e0)
        t0 = 0.0
        t1 = 0.0
        for j in range(m):
            t0 = t0 + a[k0 + j] * p[pos[k0 + j]]
            t1 = t1 + a[e0 + j] * p[pos[e0 + j]]
        for k in range(k0 + m, e0):
            t0 = t0 + a[k] * p[pos[k]]
        for k in range(e0 + m, e1):
            t1 = t1 + a[k] * p[pos[k]]
        out[i] = t0
        out[i + 1] = t1
        i += 2
    if i < nrow:
        t = 0.0
        for k in range(rowstr[i], rowstr[i + 1]):
            t = t + a[k] * p[pos[k]]
        out[i] = t


@njit(cache=True, nogil=True, error_model="numpy")
def matvec(rowstr, pos, a, p):
    out = np.empty(rowstr.size - 1)
    matvec_into(rowstr, pos, a, p, out)
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def matvec_dot(rowstr, pos, a, ph, p, q):
    matvec_into(rowstr, pos, a, ph, q)
    s = 0.0
    for i in range(q.size):
        s = s + p[i] * q[i]
    return s


@njit(cache=True, nogil=True, error_model="numpy")
def step(beta, r, p, rh, ph, rowstr, pos, a, q):
    axpy(beta, r, p)
    axpy(beta, rh, ph)
    return matvec_dot(rowstr, pos, a, ph, p, q)


@njit(cache=True, nogil=True, error_model="numpy")
def update_zr(alpha, p, q, z, r):
    s = 0.0
    for i in range(z.size):
        z[i] = z[i] + alpha * p[i]
        r[i] = r[i] - alpha * q[i]
        s = s + r[i] * r[i]
    return s


@njit(cache=True, nogil=True, error_model="numpy")
def axpy(beta, r, p):
    for i in range(p.size):
        p[i] = r[i] + beta * p[i]


@njit(cache=True, nogil=True, error_model="numpy")
def dot(u, v):
    s = 0.0
    for i in range(u.size):
        s = s + u[i] * v[i]
    return s
"""
_compiled = []


class _NumPyKernels:
    """:func:`kernels` without numba: the same operations by NumPy (its sums in its own order)."""

    @staticmethod
    def matvec_dot(rowstr, pos, a, ph, p, q):
        q[...] = csr_matvec(rowstr, pos, a, ph)
        return float(p @ q)

    @staticmethod
    def update_zr(alpha, p, q, z, r):
        z += alpha * p
        r -= alpha * q
        return float(r @ r)

    @staticmethod
    def axpy(beta, r, p):
        p[...] = r + beta * p

    @staticmethod
    def step(beta, r, p, rh, ph, rowstr, pos, a, q):
        _NumPyKernels.axpy(beta, r, p)
        _NumPyKernels.axpy(beta, rh, ph)
        return _NumPyKernels.matvec_dot(rowstr, pos, a, ph, p, q)

    @staticmethod
    def dot(u, v):
        return float(u @ v)


def kernels():
    """The local passes of :meth:`DistCSR.cg_steps` (``matvec_dot``, ``update_zr``, ``axpy``,
    ``step`` (two ``axpy`` then ``matvec_dot``, one call), ``dot``): compiled loops summing in NPB's order when numba is there and
    ``pg.config(fuse=...)`` is not False, else NumPy (:class:`_NumPyKernels`)."""
    if not _compiled:
        from pgas.exec import fuse, fusecode
        _compiled.append(fusecode.load_module(_SRC, "cg") if fuse.load_numba() is not None else None)
    if _compiled[0] is None or settings.get("fuse") is False:
        return _NumPyKernels
    return _compiled[0]


def local_matvec(rowstr, pos, a, p) -> np.ndarray:
    """``A @ p`` for CSR rows (``pos`` indexes ``p``): a compiled loop summing each row
    in NPB's order (``sum = sum + a(k) * p(colidx(k))``) when numba is there and
    ``pg.config(fuse=...)`` is not False, else :func:`~pgas.tools.bench.nas_makea.csr_matvec`
    (NumPy, its sums in NumPy's order)."""
    k = kernels()
    return csr_matvec(rowstr, pos, a, p) if k is _NumPyKernels else k.matvec(rowstr, pos, a, p)


def run_class(name: str, trials: int) -> dict:
    """Collective: set up, warm up (NAS's untimed iteration) and time class ``name``."""
    cls = CLASSES[name]
    t0 = time.perf_counter()
    A = DistCSR(*makea(cls), cls.na)
    setup = float(comm.allreduce(time.perf_counter() - t0, "max"))
    n_local = A.vec.local.size
    power_iterations(cls, A.matvec, A.dot, n_local, 1, A.dots, A.cg_steps)
    with pg.comm_diagnostics() as d:
        A.matvec(np.ones(n_local))
    times, zeta, rnorm = [], 0.0, 0.0
    for _ in range(trials):
        comm.barrier()
        t = time.perf_counter()
        zeta, rnorm = power_iterations(cls, A.matvec, A.dot, n_local, cls.niter, A.dots, A.cg_steps)
        times.append(float(comm.allreduce(time.perf_counter() - t, "max")))
    best = min(times)
    return {"kernel": "cg", "class": name, "na": cls.na, "nonzeros": A.nnz, "niter": cls.niter, "setup_seconds": setup,
            "seconds": best, "times": times, "mops": cls.mops(best), "mops_per_locale": cls.mops(best) / pg.num_locales,
            "zeta": zeta, "zeta_official": cls.zeta, "relative_error": abs(zeta - cls.zeta) / cls.zeta,
            "rnorm": rnorm, "verified": verified(cls, zeta),
            "matvec_messages": d.messages, "matvec_bytes": d.bytes,
            "matvec_max_messages_per_pair": int(d.matrix.max(initial=0))}


def run_reference(path: str, name: str) -> dict:
    """Collective: NPB CG class ``name`` (MPI) at this job's process count; its Mop/s."""
    from pgas.tools.bench.nas import run_npb
    return run_npb(path, "cg", name)


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("cg", __doc__.split("\n\n")[0], warmup=False)
    p.add_argument("--classes", type=choices(CLASSES), default=["S", "W"], metavar="LIST",
                   help=f"comma-separated NAS classes from {', '.join(CLASSES)} (default S,W)")
    p.add_argument("--reference", default=None, metavar="DIR",
                   help="folder of NPB 3.4 CG MPI binaries cg.CLASS.x, run in the same job for comparison")
    p.set_defaults(trials=3)
    return p


def main(argv: list[str]) -> int:
    p = make_parser()
    args = p.parse_args(argv)
    results = []
    for c in args.classes:
        progress(f"class {c}: {args.trials} trials")
        results.append(run_class(c, args.trials))
    ok = all(r["verified"] for r in results)
    for r in results:
        if args.reference:
            r["reference"] = run_reference(args.reference, r["class"])
            ok = ok and r["reference"]["verified"]
    path = write_result("cg", {"classes": results, "verified": ok}, args.out)
    extra = (lambda r: [r["reference"]["mops"], r["mops"] / r["reference"]["mops"] if r["reference"]["mops"]
                        else float("nan")]) if args.reference else (lambda r: [])
    print_table(["class", "na", "seconds", "Mop/s", "zeta", "rel. error", "verified", "msgs/matvec"]
                + (["NPB Mop/s", "pgas / NPB"] if args.reference else []),
                [[r["class"], r["na"], r["seconds"], r["mops"], r["zeta"], r["relative_error"],
                  "SUCCESSFUL" if r["verified"] else "UNSUCCESSFUL", r["matvec_messages"], *extra(r)] for r in results])
    if comm.here() == 0:
        print(f"results written to {path}")
    return 0 if ok else 1
