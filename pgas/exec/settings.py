"""Run-time settings of the statement engine: ``pg.config``."""

from __future__ import annotations

import numbers
import os
import zlib

import numpy as np

from ..comm import check, runtime
from ..plan import OWNER_POLICIES
from . import threads as _threads

_OFF = ("0", "false", "no", "off")
PROTOCOL_CHOICES = ("auto", "packed", "pipelined", "bounding")


#: The environment variables that set how statements are planned and synchronised (the
#: defaults of ``aggregate``, ``protocol`` and ``check``), each with how its value reads
#: (stripped and lower-cased, "" when unset); every locale must read them alike
#: (:func:`pgas.comm.runtime.agree_on_environment`).
PLAN_ENV = {"PGAS_AGGREGATE": lambda v: v not in _OFF,
            "PGAS_PROTOCOL": lambda v: v or "auto",
            "PGAS_CHECK": lambda v: "auto" if v in ("", "auto") else v not in _OFF}
runtime.agree_on_environment(PLAN_ENV)


def _env(name: str):
    return PLAN_ENV[name](os.environ.get(name, "").strip().lower())


def _defaults() -> dict:
    return {"aggregate": _env("PGAS_AGGREGATE"),
            "owner": "write", "nonblocking": True, "fuse": _fuse_default(),
            "privatise": True, "forall": True, "oneway": True,
            "protocol": _env("PGAS_PROTOCOL"),
            "buffer_limit": 64 << 20, "burst": 0, "strips": "auto",
            "check": _env("PGAS_CHECK"), "threads": "auto", "consistency": "relaxed"}


def _fuse_default():
    v = os.environ.get("PGAS_FUSE", "auto").strip().lower()
    return False if v in _OFF else "auto" if v in ("auto", "") else True


_settings = _defaults()
check.set_mode(_settings["check"])
CONSISTENCY = ("relaxed", "strict")
#: ``pg.config(consistency="strict")`` in force (read on every one-sided access).
strict = False


def config(**kw) -> dict:
    """Change engine settings; with no argument restore the defaults.  Returns the
    settings now in force.  Every locale must make the same call.  A call with a bad
    setting raises and changes nothing.

    - ``aggregate`` (default True, or ``$PGAS_AGGREGATE=0`` for False): False runs
      statements as an unoptimised PGAS runtime does, one message per remote
      element access, and ``update`` with one message per record; results are identical.
    - ``owner``: ``"write"`` (default) runs each iteration on the owner of the
      element it writes; ``"cost"`` lets the planner pick, per statement, the
      access whose owner makes the fewest elements move (ties go to the write);
      a reduction run on a read's owner sends its partial results to the
      written elements' owners with one accumulate per locale pair;
      ``pg.explain`` shows the candidates.
    - ``nonblocking`` (default True): a statement starts all its transfers before
      waiting for any; False completes each before starting the next (for
      measuring what overlap gains).
    - ``privatise``, ``forall``, ``oneway`` (default True each): the XL UPC runtime's
      optimisations, each of which False turns off alone, for measuring what it gains
      (``pgas bench ablation``; results are identical, see :mod:`pgas.exec.ablation` and
      :mod:`pgas.array.ablated`):
      ``privatise=False`` reads a statement's operands in the locale's own memory through
      its MPI window (one-sided gets from itself, counted as ``local_window_accesses`` by
      ``pg.comm_diagnostics``) instead of as plain memory; ``forall=False`` makes every
      locale test the owner of every iteration of a statement's whole domain (counted as
      ``affinity_tests``), as an unoptimised ``upc_forall``, instead of enumerating only
      the iterations it owns; ``oneway=False`` makes remote updates (``update_one``,
      ``update``) read-modify-write round trips (a get, then a compare-and-swap or a put)
      instead of one-way update messages.  ``privatise=False`` and ``forall=False`` run
      statements on the generic path (no persistent transfers or compiled groups).
    - ``protocol`` (default ``"auto"``, or ``$PGAS_PROTOCOL``): how each transfer
      group (the regions of one array on one other locale) moves: ``"packed"``
      (one derived-datatype message), ``"pipelined"`` (one non-blocking contiguous
      get/put per run), ``"bounding"`` (one get of the interval holding the
      regions, then a local gather; writes go packed) or ``"auto"`` (the calibrated
      model's choice per group, see :mod:`pgas.exec.calibration` and ``pgas calibrate``).
    - ``buffer_limit`` (bytes, default 64 MiB): bound on one locale's aggregation
      buffers for a statement's reads; a statement needing more is strip-mined
      (fetched and computed in strips, the next strip's transfers started before
      the current strip is computed).
    - ``strips`` (default ``"auto"``): how many strips a statement's reads are
      fetched and computed in (the next strip's transfers in flight while the
      current one computes): ``"auto"`` lets the overlap model choose per
      statement (:mod:`pgas.plan.overlap`, from the calibrated figures), a whole
      number pins the count for experiments; either way never fewer than
      ``buffer_limit`` forces.  ``pg.explain`` says the count and why.
    - ``burst`` (default 0: no limit): pipelined transfers complete after every
      ``burst`` operations.
    - ``check`` (default ``"auto"``, or ``$PGAS_CHECK``: ``0`` for False, ``1`` for
      True): whether the locales make the same collective calls (operation,
      arrays, arguments); where they do not, every locale raises the same
      ``pg.CollectiveMismatch`` naming what each group of locales called and
      where (see :mod:`pgas.comm.check`).  ``"auto"`` folds each call into a
      running hash that the locales compare inside the next call that reaches
      them all anyway (a reduction, an element, a print, a constructor,
      ``pg.barrier()``): nearly free, and no value the program sees can come from
      differing calls; True agrees before every call, also on its call site (a
      message per statement, an error at the call itself); False checks nothing.
    - ``fuse`` (default ``"auto"``, or ``$PGAS_FUSE``: ``0`` for False, ``1`` for
      True): run each task's element-wise expression as one compiled loop (numba,
      the ``fast`` extra) instead of one NumPy call per operation; ``"auto"``
      only for tasks of at least ``pgas.exec.fuse.FUSE_MIN`` elements, True for
      every task, False never.  Results are identical (see :mod:`pgas.exec.fuse`);
      without numba every task runs with NumPy.  It also decides when a compiled
      shift group's local moves run in one kernel (:mod:`pgas.exec.copies`).
    - ``threads`` (default ``"auto"``: ``$PGAS_THREADS``, which ``pgas run --threads T``
      sets, else the node's cores divided by its locales): the threads each locale
      runs.  Its BLAS / OpenMP pools are limited to it (:mod:`pgas.exec.threads`),
      and its fused kernels, whole-array reductions and the compiled loops of
      gathers and updates split tasks of at least ``pgas.exec.workers.SPLIT_MIN``
      elements over that many threads (:mod:`pgas.exec.workers`), with the same
      values bit for bit at every count.
    - ``consistency`` (default ``"relaxed"``): UPC's relaxed or strict one-sided
      access.  Relaxed: a put is complete at the caller when it returns, the
      split-phase forms at ``h.wait()``, ``update_one`` at the next synchronisation,
      and other locales see them after the next ``pg.barrier()`` (or through a
      ``pg.Lock``).  Strict: every one-sided operation (``get``, ``put``, their
      ``_async`` forms, ``update_one``, ``fetch_add``, ``compare_exchange``) is
      completed and ordered before the next one starts (``comm.fence``: a flush and
      a sync of every window, after each write and before each read), so a locale
      polling an element sees another locale's strict writes in the order made,
      without a barrier: a flag put after the data announces the data.  It costs a
      flush and a sync of every window per operation.

    >>> config(aggregate=False)["aggregate"]
    False
    >>> config()["aggregate"]
    True
    """
    global _settings, strict
    _fingerprint.clear()
    version[0] += 1
    if not kw:
        _settings = _defaults()
        check.set_mode(_settings["check"])
        _threads.choose("auto")
        strict = False
        return dict(_settings)
    for k, v in kw.items():
        if k not in _settings:
            raise TypeError(f"pg.config: unknown setting {k!r} (known: {', '.join(sorted(_settings))})")
        if k == "owner" and v not in OWNER_POLICIES:
            raise ValueError(f"pg.config: owner must be one of {OWNER_POLICIES}, got {v!r}")
        if k == "protocol" and v not in PROTOCOL_CHOICES:
            raise ValueError(f"pg.config: protocol must be one of {PROTOCOL_CHOICES}, got {v!r}")
        if k in ("buffer_limit", "burst") and (isinstance(v, bool) or not isinstance(v, numbers.Integral)
                                               or v < (k == "buffer_limit")):
            raise ValueError(f"pg.config: {k} must be a {'positive' if k == 'buffer_limit' else 'non-negative'} "
                             f"whole number, got {v!r}")
        if k == "strips" and v != "auto" and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1):
            raise ValueError(f"pg.config: strips must be 'auto' or a positive whole number, got {v!r}")
        if k == "threads" and v != "auto" and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1):
            raise ValueError(f"pg.config: threads must be 'auto' or a positive whole number, got {v!r}")
        if k == "consistency" and v not in CONSISTENCY:
            raise ValueError(f"pg.config: consistency must be one of {CONSISTENCY}, got {v!r}")
        if k in ("fuse", "check") and v != "auto" and not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"pg.config: {k} must be True, False or 'auto', got {v!r}")
    for k, v in kw.items():                   # all checked first: a call that raises changes nothing
        if k in ("aggregate", "nonblocking", "privatise", "forall", "oneway") or (k in ("fuse", "check") and v != "auto"):
            _settings[k] = bool(v)
        else:
            _settings[k] = (int(v) if k in ("buffer_limit", "burst") or (k in ("strips", "threads") and v != "auto")
                            else v)
    check.set_mode(_settings["check"])
    strict = _settings["consistency"] == "strict"
    if "threads" in kw:
        _threads.choose(_settings["threads"])
    return dict(_settings)


#: The settings that change a statement's plan or its synchronisation.
PLANNING = ("owner", "aggregate", "protocol", "buffer_limit", "strips", "burst", "nonblocking", "check",
            "privatise", "forall")


def fingerprint() -> int:
    """A 16-bit hash of the :data:`PLANNING` settings, compared across locales in the
    owner choice's first-run reduction (:func:`pgas.exec.statement._owner`); worked
    out once per :func:`config` call (it keys cached choices on every statement)."""
    if not _fingerprint:
        _fingerprint.append(zlib.crc32(repr(tuple(_settings[k] for k in PLANNING)).encode()) & 0xFFFF)
    return _fingerprint[0]


_fingerprint: list = []
#: Counts :func:`config` calls (a cached decision made under other settings is stale).
version = [0]


def fast_paths() -> bool:
    """Whether statements may take the paths that assume every optimisation on (persistent
    transfers, compiled shift groups, replays): ``aggregate``, ``privatise`` and ``forall``."""
    return bool(_settings["aggregate"] and _settings["privatise"] and _settings["forall"])


def get(name: str):
    """The current value of setting ``name``."""
    return _settings[name]
