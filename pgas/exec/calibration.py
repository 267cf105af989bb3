"""The network model that picks a transfer protocol, and its calibration file.

A transfer group (one message: the regions of one array on one other locale)
can move as

- ``packed``: one message through an MPI derived datatype (the paper's VIS call):
  ``T = L + a_pack + runs * c_run + bytes * G_pack``;
- ``pipelined``: one non-blocking contiguous get/put per run, all in flight:
  ``T = L + runs * o + bytes * G`` (``o`` the start-up overhead of one operation);
- ``bounding``: one contiguous get of the interval that holds every element, then a
  local gather (reads only, and only when it at most doubles the volume):
  ``T = L + o + span_bytes * G + bytes * g_copy``;
- ``elements``: the per-element path, ``T = elements * t_elem``; the model never
  chooses an aggregated protocol that it predicts slower than this.

For strip-mining (:mod:`pgas.plan.overlap`) the model also holds the local
compute rate ``compute`` (seconds per element of one NumPy operation), the fixed
cost ``task`` of computing one task, what one more strip costs a statement
besides its transfers (``strip``: starting and waiting for its messages,
evaluating its sub-tasks), and
``overlap``, the fraction of a transfer's time that proceeds while this locale
computes (0 when transfers are copies by the computing core itself). A file
written before these were measured gets the defaults for them.

For the owner choice (:func:`pgas.plan.choose` under ``protocol="auto"``) the
model also holds ``writeback``: what one remote write-back message (a put, or
the accumulate of a reduction run on a read's owner) costs a statement beyond
its transfer. Such a statement cannot finish on the written elements' owner
before its writers computed and sent their partial results: one more round of
peer notices after the compute, the flushes, and the owner's window sync.
Measured on a real statement (:mod:`pgas.tools.calibrate.statements`); a file without it gets
the default, without a warning.

``pgas calibrate`` (:mod:`pgas.tools.calibrate.network`) measures the figures on this
machine and MPI at the current locale count, and stores them as JSON in
``$XDG_CACHE_HOME/pgas`` (default ``~/.cache/pgas``), keyed by host, MPI
library, locale count and transport settings (``MPIR_CVAR_NOLOCAL=1`` and the
like). Statements load the file of their key on first use; without one (or with
``$PGAS_CALIBRATION=none``) they use :data:`DEFAULTS`, and a corrupt or stale
file (another format version or key) is ignored with a warning.
``$PGAS_CALIBRATION=PATH`` names a file explicitly.

Where the calibration measured a grid of region length x region count (the
paper's comparative map), the choice follows the measurements rather than the
fitted formulas: :class:`Grid` interpolates each protocol's measured time
bilinearly in log space (log time over log run bytes and log run count) between
the four nearest grid points, and the fastest interpolated protocol wins; a
message outside the grid (or next to a point not measured) falls back to the
fitted model. The per-element guard is kept either way. Writes follow the grid
of measured puts (``put_packed``, ``put_pipelined`` per point) where the
calibration has one (older files: the read grid, as before).

>>> m = Model(**DEFAULTS)
>>> m.choose(runs=1, nbytes=8 << 20, span=8 << 20, write=False)[0]
'pipelined'
>>> m.choose(runs=1000, nbytes=8000, span=80000, write=False)[0]
'packed'
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, fields

from ..comm.userwarn import warn

#: Version of the calibration file format (a file of another version is stale).
VERSION = 1

PROTOCOLS = ("packed", "pipelined", "bounding")

#: Model figures used without a calibration file (seconds, seconds per byte): a
#: shared-memory MPICH on one node, roughly.
DEFAULTS = {"latency": 3e-6, "issue": 1.5e-6, "gap": 2e-10, "packed_fixed": 3e-6, "packed_run": 5e-8,
            "packed_gap": 3e-10, "copy_gap": 3e-10, "element": 6e-6,
            "compute": 1e-9, "task": 5e-6, "strip": 5e-5, "overlap": 0.0, "writeback": 1e-4}

#: Figures a calibration file may lack (written before they were measured): the
#: defaults stand in for them, without a warning.
OPTIONAL = ("compute", "task", "strip", "overlap", "writeback")

#: A bounding-region read may move at most this many times the needed volume.
BOUND_WASTE = 2.0


class Grid:
    """Measured transfer times over run bytes x run count (the paper's comparative map).

    ``rows``: dicts with ``length`` (elements per region), ``count`` (regions),
    ``itemsize`` (bytes per element, default 8) and a time in seconds per measured
    protocol (``packed``, ``pipelined``, and optionally ``bounding``), measured on
    regions that are every other block of ``length`` elements.

    >>> g = Grid([{"length": 1, "count": 1, "packed": 1e-5, "pipelined": 2e-5},
    ...           {"length": 4, "count": 1, "packed": 4e-5, "pipelined": 2e-5}])
    >>> {p: round(t * 1e6, 1) for p, t in g.times(16, 1).items()}      # 2 elements: halfway in log
    {'packed': 20.0, 'pipelined': 20.0}
    >>> g.times(64, 1) is None                                          # outside the grid
    True
    """

    def __init__(self, rows) -> None:
        rows = list(rows)
        self.protocols = tuple(p for p in PROTOCOLS if rows and all(p in r for r in rows))
        if not rows or not {"packed", "pipelined"} <= set(self.protocols):
            raise ValueError("a measured grid needs packed and pipelined times at every point")
        pts = {}
        for r in rows:
            b, c = int(r["length"]) * int(r.get("itemsize", 8)), int(r["count"])
            ts = [float(r[p]) for p in self.protocols]
            if b <= 0 or c <= 0 or not all(math.isfinite(t) and t > 0 for t in ts):
                raise ValueError(f"bad grid point {r}")
            pts[(b, c)] = ts
        self.xs = sorted({b for b, _ in pts})
        self.ys = sorted({c for _, c in pts})
        self.lx = [math.log(x) for x in self.xs]
        self.ly = [math.log(y) for y in self.ys]
        self.logt = {k: [math.log(t) for t in v] for k, v in pts.items()}

    def __len__(self) -> int:
        return len(self.logt)

    @staticmethod
    def _bracket(axis, logs, v):
        """``(i, j, w)``: ``v`` lies between ``axis[i]`` and ``axis[j]`` with weight ``w`` on j."""
        if v < axis[0] or v > axis[-1]:
            return None
        j = next(k for k, a in enumerate(axis) if a >= v)
        if axis[j] == v or j == 0:
            return j, j, 0.0
        return j - 1, j, (math.log(v) - logs[j - 1]) / (logs[j] - logs[j - 1])

    def times(self, run_bytes: float, count: int) -> dict | None:
        """Interpolated seconds per protocol of ``count`` runs of ``run_bytes`` bytes each,
        or None outside the grid or next to a point not measured."""
        bx, by = self._bracket(self.xs, self.lx, run_bytes), self._bracket(self.ys, self.ly, count)
        if bx is None or by is None:
            return None
        acc = [0.0] * len(self.protocols)
        for xi, wx in ((bx[0], 1 - bx[2]), (bx[1], bx[2])):
            for yi, wy in ((by[0], 1 - by[2]), (by[1], by[2])):
                w = wx * wy
                if w == 0:
                    continue
                lt = self.logt.get((self.xs[xi], self.ys[yi]))
                if lt is None:
                    return None
                acc = [a + w * t for a, t in zip(acc, lt)]
        return {p: math.exp(a) for p, a in zip(self.protocols, acc)}


@dataclass(frozen=True, eq=False)
class Model:
    """LogGP-style figures of one machine, MPI and locale count (see the module text)."""

    latency: float
    issue: float
    gap: float
    packed_fixed: float
    packed_run: float
    packed_gap: float
    copy_gap: float
    element: float
    compute: float = DEFAULTS["compute"]
    task: float = DEFAULTS["task"]
    strip: float = DEFAULTS["strip"]
    overlap: float = DEFAULTS["overlap"]
    writeback: float = DEFAULTS["writeback"]
    source: str = "defaults"
    grid: Grid | None = None
    put_grid: Grid | None = None

    def predict(self, protocol: str, runs: int, nbytes: int, span: int = 0, itemsize: int = 8) -> float:
        """Predicted seconds of one transfer group of ``runs`` contiguous runs, ``nbytes``
        payload bytes, over a bounding interval of ``span`` bytes."""
        if protocol == "packed":
            return self.latency + self.packed_fixed + runs * self.packed_run + nbytes * self.packed_gap
        if protocol == "pipelined":
            return self.latency + runs * self.issue + nbytes * self.gap
        if protocol == "bounding":
            return self.latency + self.issue + span * self.gap + nbytes * self.copy_gap
        if protocol == "elements":
            return max(1, nbytes // max(itemsize, 1)) * self.element
        raise ValueError(f"unknown protocol {protocol!r}")

    def choose(self, runs: int, nbytes: int, span: int, write: bool, itemsize: int = 8,
               allowed=PROTOCOLS) -> tuple[str, dict]:
        """``(protocol, predicted seconds per protocol considered)``: the fastest predicted,
        never one predicted slower than the per-element path (then ``"elements"``; on a
        tie the aggregated protocol). A single run goes pipelined (the same one
        contiguous transfer as packed, without a derived datatype).
        Predictions come from the measured :class:`Grid` where the message lies in it
        (a bounding read scaled by the fitted model from the grid's interval, every
        other run, to ``span``), else from the fitted formulas."""
        grid = self.put_grid if write and self.put_grid is not None else self.grid
        measured = grid.times(nbytes / runs, runs) if grid is not None and runs > 0 else None
        times = {}
        for p in allowed:
            if p == "bounding" and (write or runs < 2 or span > BOUND_WASTE * nbytes):
                continue                # (one run: the bounding read is that run, plus a copy)
            if p == "packed" and runs == 1 and "pipelined" in allowed:
                continue                # one run: the same one contiguous transfer, without a datatype
            if measured is not None and p in measured:
                t = measured[p]
                if p == "bounding":     # the grid's interval: every other run, 2 * nbytes - one run
                    ref = 2 * nbytes - nbytes // runs
                    t *= self.predict(p, runs, nbytes, span, itemsize) / self.predict(p, runs, nbytes, ref, itemsize)
                times[p] = t
            else:
                times[p] = self.predict(p, runs, nbytes, span, itemsize)
        one = grid.times(itemsize, 1) if measured is not None else None
        if one is not None:             # the grid's one-element get, so that both sides are measured alike
            times["elements"] = max(1, nbytes // max(itemsize, 1)) * one["pipelined"]
        else:
            times["elements"] = self.predict("elements", runs, nbytes, span, itemsize)
        best = min(times, key=lambda p: (times[p], p == "elements"))
        return best, times

    def figures(self) -> dict:
        """The figures as a dict (without ``source`` and the grids)."""
        return {k: getattr(self, k) for k in FIELDS}


FIELDS = tuple(f.name for f in fields(Model) if f.name not in ("source", "grid", "put_grid"))


def cache_dir() -> str:
    """``$XDG_CACHE_HOME/pgas`` (``~/.cache/pgas`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pgas")


#: Environment variables that change how MPI moves data (part of the calibration key).
TRANSPORT_ENV = ("MPIR_CVAR_NOLOCAL", "MPIR_CVAR_ASYNC_PROGRESS", "MPIR_CVAR_CH4_NETMOD", "FI_PROVIDER", "UCX_TLS", "OMPI_MCA_pml", "OMPI_MCA_btl")


def key(host: str, mpi: str, locales: int, transport: str = "") -> dict:
    """The calibration key: host name, MPI library (first line), locale count, and the
    transport settings in force (:data:`TRANSPORT_ENV`, e.g. ``MPIR_CVAR_NOLOCAL=1``)."""
    return {"host": host, "mpi": mpi.strip().split("\n")[0][:200], "locales": int(locales), "transport": transport}


def transport() -> str:
    """The :data:`TRANSPORT_ENV` variables set here, as ``NAME=value`` joined by spaces."""
    return " ".join(f"{k}={os.environ[k]}" for k in TRANSPORT_ENV if os.environ.get(k))


def path_for(k: dict) -> str:
    """The cache file of key ``k``.

    >>> os.path.basename(path_for(key("node1", "MPICH Version: 4.2", 4)))
    'calibration-node1-MPICH_Version_4.2-4.json'
    """
    slug = re.sub(r"[^A-Za-z0-9.]+", "_", k["mpi"])[:60].strip("_")
    host = re.sub(r"[^A-Za-z0-9.-]+", "_", k["host"])
    tr = re.sub(r"[^A-Za-z0-9.=]+", "_", k.get("transport", ""))[:80]
    return os.path.join(cache_dir(), f"calibration-{host}-{slug}-{k['locales']}{'-' + tr if tr else ''}.json")


def save(k: dict, figures: dict, measurements: dict | None = None, path: str | None = None) -> str:
    """Write a calibration file (atomically); returns its path."""
    path = path or path_for(k)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    doc = {"version": VERSION, "key": k, "figures": {f: float(figures[f]) for f in FIELDS},
           "measurements": measurements or {}}
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)
    return path


def load(k: dict, path: str | None = None) -> Model:
    """The model stored for key ``k`` (or in ``path``); :data:`DEFAULTS` when there is no
    file, and with a :class:`RuntimeWarning` when the file is corrupt or stale."""
    path = path or path_for(k)
    if not os.path.exists(path):
        return Model(**DEFAULTS)
    try:
        with open(path) as f:
            doc = json.load(f)
        if not isinstance(doc, dict) or doc.get("version") != VERSION:
            raise _Stale(f"format version {doc.get('version') if isinstance(doc, dict) else '?'}, "
                         f"expected {VERSION}")
        if doc.get("key") != k:
            raise _Stale(f"made for {doc.get('key')}, not {k}")
        figs = doc["figures"]
        vals = {f: float(figs[f] if f in figs or f not in OPTIONAL else DEFAULTS[f]) for f in FIELDS}
        if not all(math.isfinite(v) and v >= 0 for v in vals.values()):
            raise ValueError("a figure is negative or not finite")
        rows = (doc.get("measurements") or {}).get("grid") or []
        grid = Grid(rows) if rows else None
        puts = [{"length": r["length"], "count": r["count"], "itemsize": r.get("itemsize", 8),
                 "packed": r["put_packed"], "pipelined": r["put_pipelined"]}
                for r in rows if "put_packed" in r and "put_pipelined" in r]
        put_grid = Grid(puts) if puts and len(puts) == len(rows) else None
    except _Stale as e:
        warn(f"pgas: ignoring stale calibration file {path} ({e}); using default figures "
             "(run `pgas calibrate` again)", RuntimeWarning)
        return Model(**DEFAULTS)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:   # AttributeError: a section not a dict
        warn(f"pgas: ignoring corrupt calibration file {path} ({type(e).__name__}: {e}); "
             "using default figures (run `pgas calibrate` again)", RuntimeWarning)
        return Model(**DEFAULTS)
    return Model(**vals, source=path, grid=grid, put_grid=put_grid)


class _Stale(Exception):
    pass


_current: list = []


def current() -> Model:
    """This process's model: loaded once, on first use, for this host, MPI and locale count
    (``$PGAS_CALIBRATION``: ``none`` for the defaults, or a file path)."""
    if not _current:
        env = os.environ.get("PGAS_CALIBRATION", "").strip()
        if env.lower() in ("none", "off", "0"):
            _current.append(Model(**DEFAULTS))
        else:
            _current.append(load(this_key(), env or None))
    return _current[0]


def reset() -> None:
    """Forget the loaded model (the next statement loads the file again)."""
    _current.clear()


def this_key() -> dict:
    """The calibration key of this job."""
    import socket

    from .. import comm

    return key(socket.gethostname(), comm.library_version(), comm.num_locales(), transport())
