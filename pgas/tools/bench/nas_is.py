"""NAS IS (integer sort, NPB 3.4) on a Block-distributed key array: NPB's keys, ranking and verification.

The keys are NPB's: key ``g`` is ``int(MAX_KEY / 4 * (r1 + r2 + r3 + r4))`` for the
``4g+1``-th to ``4g+4``-th numbers of NPB's ``randlc`` sequence (seed 314159265),
made by each locale for the part of the global array it owns
(:mod:`pgas.tools.bench.nas_rand`).  One ranking (NPB's ``rank``), ISx-style:

1. the iteration's two altered keys are written (``keys[it] = it``,
   ``keys[it + 10] = MAX_KEY - it``) and the five test keys read;
2. each locale groups its keys by bucket (``key >> (MAX_KEY_LOG_2 - NUM_BUCKETS_LOG_2)``,
   a counting sort, compiled when numba is there) and one reduction sums the
   bucket counts (the test keys ride along, as in NPB);
3. the buckets are split into runs of about ``TOTAL_KEYS / P`` keys, one run per
   locale (NPB's rule), and one all-to-all exchange sends each run's keys to its locale;
4. each locale counts its keys (``np.bincount``) and sums the counts: the rank of key
   ``k`` is the keys of lower runs plus the running count below ``k``.

Verification is NPB's: partial (the five test keys' ranks against NPB's values,
shifted by the iteration as NPB's ``rank`` shifts them, every iteration) and full
(after the last iteration each locale places its keys at their ranks and checks
they are in order, and each locale's least key is not below its left neighbour's
greatest).  Mop/s = 10 x TOTAL_KEYS / seconds / 10^6 (NPB's count, "keys ranked").
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

import pgas as pg
from pgas import comm
from pgas.array import counting
from pgas.exec import settings
from pgas.tools.bench import nas_rand

MAX_ITERATIONS = 10


@dataclass(frozen=True)
class ISClass:
    """One NPB IS class: sizes (log2) and the partial verification's keys and ranks."""

    name: str
    total_keys_log2: int
    max_key_log2: int
    buckets_log2: int
    test_index: tuple
    test_rank: tuple

    @property
    def total_keys(self) -> int:
        return 1 << self.total_keys_log2

    @property
    def max_key(self) -> int:
        return 1 << self.max_key_log2

    def expected_rank(self, i: int, iteration: int) -> int:
        """NPB's test rank of test key ``i`` at ``iteration`` (its per-class shifts)."""
        r, it = self.test_rank[i], iteration
        up = {"S": i <= 2, "W": i < 2, "A": i <= 2, "B": i in (1, 2, 4), "C": i <= 2}[self.name]
        d = {"W": it - 2 if up else it, "A": it - 1}.get(self.name, it)
        return r + d if up else r - d

    def mops(self, seconds: float) -> float:
        return MAX_ITERATIONS * self.total_keys / seconds / 1e6


CLASSES = {
    "S": ISClass("S", 16, 11, 9, (48427, 17148, 23627, 62548, 4431), (0, 18, 346, 64917, 65463)),
    "W": ISClass("W", 20, 16, 10, (357773, 934767, 875723, 898999, 404505), (1249, 11698, 1039987, 1043896, 1048018)),
    "A": ISClass("A", 23, 19, 10, (2112377, 662041, 5336171, 3642833, 4250760), (104, 17523, 123928, 8288932, 8388264)),
    "B": ISClass("B", 25, 21, 10, (41869, 812306, 5102857, 18232239, 26860214),
                 (33422937, 10244, 59149, 33135281, 99)),
    "C": ISClass("C", 27, 23, 10, (44172927, 72999161, 74326391, 129606274, 21736814),
                 (61147, 882988, 266290, 133997595, 133525895)),
}


def make_keys(cls: ISClass, lo: int, n: int) -> np.ndarray:
    """Keys ``lo .. lo + n - 1`` of NPB's sequence (``create_seq``), as int32."""
    r = nas_rand.stream(nas_rand.jump(nas_rand.SEED, 4 * lo), 4 * n).reshape(n, 4)
    x = ((r[:, 0] + r[:, 1]) + r[:, 2]) + r[:, 3]
    return (float(cls.max_key // 4) * x).astype(np.int32)


_SRC = """
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def bucket(keys, shift, nb):
    # NPB's bucket sort: the count per bucket (key >> shift), then the keys placed by bucket
    counts = np.zeros(nb, dtype=np.int64)
    for i in range(keys.size):
        counts[keys[i] >> shift] += 1
    ptr = np.empty(nb, dtype=np.int64)
    s = 0
    for b in range(nb):
        ptr[b] = s
        s += counts[b]
    out = np.empty_like(keys)
    for i in range(keys.size):
        b = keys[i] >> shift
        out[ptr[b]] = keys[i]
        ptr[b] += 1
    return out, counts


@njit(cache=True, nogil=True, error_model="numpy")
def ranks(keys, min_key, size):
    # NPB's ranking: each key's population, then their running sum
    c = np.zeros(size, dtype=np.int64)
    for i in range(keys.size):
        c[keys[i] - min_key] += 1
    below = np.empty(size, dtype=np.int64)
    s = 0
    for v in range(size):
        s += c[v]
        below[v] = s
    return c, below
"""
_compiled = []


def compiled():
    """NPB's bucket sort and ranking as compiled loops (``bucket``, ``ranks``) when numba is
    there and ``pg.config(fuse=...)`` is not False, else None (NumPy and
    :func:`pgas.array.counting.group_keys` do them)."""
    if not _compiled:
        from pgas.exec import fuse, fusecode
        _compiled.append(fusecode.load_module(_SRC, "nas_is") if fuse.load_numba() is not None else None)
    return None if settings.get("fuse") is False else _compiled[0]


class Ranker:
    """The distributed key array of one class and NPB's ranking of it."""

    def __init__(self, cls: ISClass) -> None:
        self.cls = cls
        self.keys = pg.zeros(cls.total_keys, dtype=np.int32, dist=pg.Block(), name="keys")
        self.lo = int(self.keys.layout.owned(comm.here())[0][0]) if self.keys.local.size else 0
        self.original = make_keys(cls, self.lo, self.keys.local.size)
        self.keys.local[...] = self.original
        self.nb = 1 << cls.buckets_log2
        self.shift = cls.max_key_log2 - cls.buckets_log2
        self.last = None

    def _set(self, g: int, value: int) -> None:
        """``keys[g] = value`` where this locale owns ``g`` (NPB's rank 0 alters its own keys)."""
        if self.lo <= g < self.lo + self.keys.local.size:
            self.keys.local[g - self.lo] = value

    def rank(self, iteration: int) -> int:
        """Collective: NPB's ``rank(iteration)``; returns the partial verifications this
        locale passed (each test key is checked by the one locale whose run holds it)."""
        cls, P, me = self.cls, comm.num_locales(), comm.here()
        self._set(iteration, iteration)
        self._set(iteration + MAX_ITERATIONS, cls.max_key - iteration)
        local = self.keys.local
        tests = np.zeros(len(cls.test_index), dtype=np.int64)
        for i, g in enumerate(cls.test_index):
            if self.lo <= g < self.lo + local.size:
                tests[i] = local[g - self.lo]
        k = compiled()
        grouped, counts = (counting.group_keys(local, 1 << self.shift, self.nb) if k is None
                           else k.bucket(local, self.shift, self.nb))
        totals = comm.allreduce(np.concatenate([counts.astype(np.int64), tests]), "sum")
        tests, totals = totals[self.nb:], totals[:self.nb]
        # runs of buckets of about TOTAL_KEYS / P keys each: locale j takes buckets bounds[j]:bounds[j + 1]
        cum = np.cumsum(totals)
        cuts = np.searchsorted(cum, (np.arange(1, P) * (cls.total_keys // P)), side="left") + 1
        bounds = np.maximum.accumulate(np.concatenate([[0], np.minimum(cuts, self.nb), [self.nb]]))
        starts = np.concatenate([[0], np.cumsum(counts)])[bounds]
        parts = comm.alltoallv([grouped[starts[j]:starts[j + 1]] for j in range(P)], np.int32)
        mine = np.concatenate(parts)
        min_key, max_key = int(bounds[me]) << self.shift, (int(bounds[me + 1]) << self.shift) - 1
        size = max(max_key - min_key + 1, 0)
        if k is None:
            counts_here = np.bincount(mine - min_key, minlength=size)
            below = np.cumsum(counts_here)                 # keys <= min_key + v in this run
        else:
            counts_here, below = k.ranks(mine, min_key, size)
        lesser = int(totals[:bounds[me]].sum())            # keys in the runs of lower locales
        passed = 0
        for i, k in enumerate(tests.tolist()):
            if min_key <= k <= max_key:
                rank = (int(below[k - 1 - min_key]) if k > min_key else 0) + lesser
                passed += rank == cls.expected_rank(i, iteration)
        self.last = (mine, counts_here, below, min_key)
        return passed

    def full_verify(self) -> bool:
        """Collective: NPB's full verification of the last ranking: each key placed at its
        rank (``key_array[--ptr[key]] = key``) gives ordered keys, each locale's least
        key is not below its left neighbour's greatest, and no key is lost."""
        mine, counts_here, below, min_key = self.last
        order = np.argsort(mine, kind="stable")
        s = mine[order] - min_key
        within = np.arange(s.size) - np.searchsorted(s, s, side="left")
        pos = np.empty(mine.size, dtype=np.int64)
        pos[order] = below[s] - counts_here[s] + within if s.size else within
        placed = np.empty_like(mine)
        ok = bool(np.all((pos >= 0) & (pos < mine.size)))       # a rank outside the run fails
        if ok:
            placed[pos] = mine
            ok = bool(np.all(np.bincount(pos, minlength=mine.size) == 1)) and bool(np.all(placed[1:] >= placed[:-1]))
        ends = comm.allgather((int(placed[0]), int(placed[-1])) if placed.size else None)
        prev = [e for e in ends[:comm.here()] if e is not None]
        if prev and placed.size and prev[-1][1] > placed[0]:
            ok = False
        total = int(comm.allreduce(mine.size, "sum"))
        return bool(comm.allreduce(np.int32(ok), "min")) and total == self.cls.total_keys


def run_class(name: str, trials: int) -> dict:
    """Collective: NPB IS class ``name``: keys, one untimed ranking, then ``trials`` timed runs of
    10 rankings (the best reported), partial verification every iteration, full after each run."""
    cls = CLASSES[name]
    t0 = time.perf_counter()
    R = Ranker(cls)
    setup = float(comm.allreduce(time.perf_counter() - t0, "max"))
    R.rank(1)
    times, partial, full = [], [], True
    for _ in range(trials):
        R.keys.local[...] = R.original              # each run starts from NPB's keys
        comm.barrier()
        t = time.perf_counter()
        passed = sum(R.rank(it) for it in range(1, MAX_ITERATIONS + 1))
        times.append(float(comm.allreduce(time.perf_counter() - t, "max")))
        partial.append(int(comm.allreduce(passed, "sum")))
        full = R.full_verify() and full
    best = min(times)
    want = len(cls.test_index) * MAX_ITERATIONS
    ok = full and all(p == want for p in partial)
    return {"kernel": "is", "class": name, "size": cls.total_keys, "iterations": MAX_ITERATIONS,
            "setup_seconds": setup, "seconds": best, "times": times, "mops": cls.mops(best),
            "partial_passed": partial, "partial_wanted": want, "full_verified": full, "verified": ok,
            "check": f"{min(partial)}/{want} partial, full {'ok' if full else 'FAILED'}"}
