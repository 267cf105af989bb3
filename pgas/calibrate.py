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

``pgas calibrate`` (:mod:`pgas.comm.calibrate`) measures the figures on this
machine and MPI at the current locale count, and stores them as JSON in
``$XDG_CACHE_HOME/pgas`` (default ``~/.cache/pgas``), keyed by host, MPI
library, locale count and transport settings (``MPIR_CVAR_NOLOCAL=1`` and the
like). Statements load the file of their key on first use; without one (or with
``$PGAS_CALIBRATION=none``) they use :data:`DEFAULTS`, and a corrupt or stale
file (another format version or key) is ignored with a warning.
``$PGAS_CALIBRATION=PATH`` names a file explicitly.

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
import warnings
from dataclasses import asdict, dataclass, fields

#: Version of the calibration file format (a file of another version is stale).
VERSION = 1

PROTOCOLS = ("packed", "pipelined", "bounding")

#: Model figures used without a calibration file (seconds, seconds per byte): a
#: shared-memory MPICH on one node, roughly.
DEFAULTS = {"latency": 3e-6, "issue": 1.5e-6, "gap": 2e-10, "packed_fixed": 3e-6, "packed_run": 5e-8,
            "packed_gap": 3e-10, "copy_gap": 3e-10, "element": 6e-6}

#: A bounding-region read may move at most this many times the needed volume.
BOUND_WASTE = 2.0


@dataclass(frozen=True)
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
    source: str = "defaults"

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
        never one predicted slower than the per-element path (then ``"elements"``)."""
        times = {}
        for p in allowed:
            if p == "bounding" and (write or span > BOUND_WASTE * nbytes):
                continue
            times[p] = self.predict(p, runs, nbytes, span, itemsize)
        times["elements"] = self.predict("elements", runs, nbytes, span, itemsize)
        best = min(times, key=lambda p: (times[p], p == "elements"))
        return best, times

    def figures(self) -> dict:
        """The figures as a dict (without ``source``)."""
        return {k: v for k, v in asdict(self).items() if k != "source"}


FIELDS = tuple(f.name for f in fields(Model) if f.name != "source")


def cache_dir() -> str:
    """``$XDG_CACHE_HOME/pgas`` (``~/.cache/pgas`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pgas")


#: Environment variables that change how MPI moves data (part of the calibration key).
TRANSPORT_ENV = ("MPIR_CVAR_NOLOCAL", "MPIR_CVAR_CH4_NETMOD", "FI_PROVIDER", "UCX_TLS", "OMPI_MCA_pml", "OMPI_MCA_btl")


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
        vals = {f: float(figs[f]) for f in FIELDS}
        if not all(math.isfinite(v) and v >= 0 for v in vals.values()):
            raise ValueError("a figure is negative or not finite")
    except _Stale as e:
        warnings.warn(f"pgas: ignoring stale calibration file {path} ({e}); using default figures "
                      "(run `pgas calibrate` again)", RuntimeWarning, stacklevel=2)
        return Model(**DEFAULTS)
    except (OSError, ValueError, KeyError, TypeError) as e:
        warnings.warn(f"pgas: ignoring corrupt calibration file {path} ({type(e).__name__}: {e}); "
                      "using default figures (run `pgas calibrate` again)", RuntimeWarning, stacklevel=2)
        return Model(**DEFAULTS)
    return Model(**vals, source=path)


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

    from . import comm

    return key(socket.gethostname(), comm.library_version(), comm.num_locales(), transport())
