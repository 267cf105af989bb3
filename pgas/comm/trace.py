"""A timeline of every locale: spans recorded per locale, written as Chrome trace-event JSON.

``PGAS_TRACE=DIR`` (the whole run) or ``with pg.trace(DIR):`` (a block, collective)
records, on every locale, one span per statement (named by the user's ``file:line``
and the statement's text, with the processor time the locale ran in it: on a node
with more locales than cores the rest is time it was descheduled) and, inside it, the lowering and planning (cache hit or
miss), packing, kernels, waits (naming what is waited for: a receive from locale
``k``, a barrier, an allreduce) and MPI calls.  At the end of a block every locale's
spans are gathered, and locale 0 writes ``DIR/trace.json``: "X" (complete) events
with ``ts`` / ``dur`` in microseconds, ``pid`` the locale, and "M" metadata naming
each locale's track.  Perfetto (ui.perfetto.dev) and ``chrome://tracing`` open it;
``pgas trace DIR`` summarises it.

Clocks: at the start of a block, after its barrier, every locale's ``time.perf_counter``
is measured against locale 0's by a few round trips of ping-pong
(:mod:`pgas.comm.clocks`), and its times are written on locale 0's clock, counted from
the moment locale 0 left that barrier.  Each offset's error bound (half the shortest
round trip: about 10 µs a locale with a core each, 0.1 ms at 16 locales on 2 cores)
is written beside it in the file's ``otherData`` (``offset_us``, ``error_us``).  (The
barrier's exit alone is no alignment: its locales leave it up to a millisecond apart
at 16 locales on one node.)

Off by default.  Every hook in the library is one test of :data:`on` (a module-level
boolean) when off.  Hooks take one of two forms: ``t0 = trace.on and trace.now()``
before the work and ``if t0: trace.add(cat, name, t0)`` after it (an error in
between loses the span, nothing else), or :func:`statement` around a whole
statement.  This module imports nothing of pgas above ``comm``, so every layer may
call it.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
import time

#: True while a trace is recorded on this locale (the flag every hook tests).
on = False
now = time.perf_counter

#: What the next traced wait waits for, set by a collective just before it waits
#: ("barrier", "allreduce"); None: the wait names the receives it completed.
waiting: str | None = None

#: Recorded spans: ``(category, name, start, end, args or None)``, perf_counter seconds.
_events: list = []
#: Open ``pg.trace`` blocks, outermost first: ``(directory, index into _events, origin,
#: (shift, offset, error))``: spans from ``origin`` on are recorded, ``shift`` taken from
#: their times puts them on locale 0's clock (:func:`pgas.comm.clocks.measure`).
_blocks: list = []
#: 1 while a traced statement runs (:func:`statement`; a statement entry point called
#: inside one runs as part of it, untraced).
depth = 0
#: The ``args`` of the statement span being recorded (hooks may add to it).
stmt_args: dict = {}

#: Categories of spans, each a part of a statement's time in the summary.
CATEGORIES = ("stmt", "plan", "pack", "kernel", "wait", "mpi")

#: Tags of the messages a wait may complete (:mod:`pgas.exec.notices`, :mod:`pgas.comm.p2p`,
#: :mod:`pgas.comm.exchange`), by what they say.
_TAGS = {11: "ready", 12: "done reading", 13: "write ok", 14: "done writing", 21: "ghosts ready",
         22: "ghosts read", 41: "exchange"}


def add(cat: str, name: str, t0: float, args: dict | None = None) -> None:
    """Record a span of category ``cat`` from ``t0`` (:func:`now`) to now; one outside a
    statement (a reduction's allreduce, say) is named by the user's call site too."""
    t1 = now()
    if not depth:
        args = dict(args or (), site=site())
    _events.append((cat, name, t0, t1, args))


def tag_name(tag: int) -> str:
    """What a message of ``tag`` carries."""
    if tag >= 100:
        return "data"
    return _TAGS.get(tag, f"tag {tag}")


def add_wait(t0: float, sources: list) -> None:
    """Record a wait from ``t0`` to now: for :data:`waiting` (then cleared), or for the
    receives completed last, ``sources`` being their ``(source, tag)``."""
    global waiting
    what = waiting
    waiting = None
    if what is not None:
        add("wait", what, t0)
        return
    peers = sorted({s for s, _ in sources})
    kinds = sorted({tag_name(t) for _, t in sources})
    if peers:
        name = "recv from " + ",".join(map(str, peers)) + " (" + ", ".join(kinds) + ")"
    else:
        name = "sends complete"
    add("wait", name, t0, {"peers": peers, "what": kinds})


# -- statements -----------------------------------------------------------------------
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_BENCH = os.path.join(_PKG, "tools", "bench") + os.sep
_sites: dict = {}


def site() -> str:
    """``file:line text`` of the innermost caller outside the pgas package, pgas's own
    benchmarks (``pgas/tools/bench``: programs written with pgas) counting as callers."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG) and not f.f_code.co_filename.startswith(_BENCH):
        f = f.f_back
    if f is None:
        return "?"
    key = (f.f_code.co_filename, f.f_lineno)
    got = _sites.get(key)
    if got is None:
        text = " ".join(linecache.getline(key[0], key[1]).split())
        if len(text) > 60:
            text = text[:57] + "..."
        got = _sites[key] = f"{os.path.basename(key[0])}:{key[1]} {text}".rstrip()
    return got


def statement(kind: str, fn, *args):
    """Run ``fn(*args)`` inside a span named by the user's call site (``kind``: which entry
    point).  A statement entry point ``f`` begins ``if trace.on and not trace.depth:
    return trace.statement("kind", f, ...)``: the call here runs ``f`` again with
    :data:`depth` set, so it takes its usual path."""
    global depth, stmt_args
    c0 = time.thread_time()
    t0 = now()
    depth = 1
    stmt_args = args_ = {"kind": kind}
    got = None
    try:
        got = fn(*args)
        return got
    finally:
        depth = 0
        t1 = now()
        if got is not False:      # False: nothing ran (a compiled group's rerun declined; the call made next runs it)
            args_["cpu_us"] = round((time.thread_time() - c0) * 1e6, 1)   # the time this locale ran
            _events.append(("stmt", site(), t0, t1, args_))


# -- blocks ------------------------------------------------------------------------
def _file(directory: str, locale: int | None) -> str:
    return os.path.join(directory, "trace.json" if locale is None else f"locale-{locale}.json")


def begin(directory) -> None:
    """Start a block recording into ``directory`` (collective: a barrier, then the clocks'
    offsets to locale 0's measured, :mod:`pgas.comm.clocks`).  Each locale removes its own
    ``locale-K.json`` left there by an earlier run, locale 0 the merged ``trace.json``."""
    global on
    from . import clocks, collectives, process
    directory = os.fspath(directory)
    me = process.here()
    for old in ([_file(directory, me)] + ([_file(directory, None)] if me == 0 else [])):
        try:
            os.remove(old)
        except FileNotFoundError:
            pass
    collectives.barrier(())
    t0 = now()
    clock = clocks.measure(t0)
    if on:                                        # an outer block records the measurement
        add("mpi", "clock offsets to locale 0 (ping-pong)", t0)
    _blocks.append((directory, len(_events), now(), clock))
    on = True


def end(failed: bool = False) -> str | None:
    """End the innermost block (collective unless ``failed``) and write its spans; returns
    the file written here (None on locales that wrote none).  Tracing stays on while an
    outer block is open.

    Normally every locale's spans are gathered and locale 0 writes the merged
    ``DIR/trace.json``.  With ``failed`` (an error is leaving the block, and other locales
    may not be here), nothing is gathered: each locale writes its own
    ``DIR/locale-K.json`` (``pgas trace`` reads either)."""
    global on, waiting
    from . import process, runtime
    directory, first, origin, (shift, offset, error) = _blocks.pop()
    if not _blocks:
        on = False
    waiting = None
    mine = [(c, n, t0 - shift, t1 - shift, a) for c, n, t0, t1, a in _events[first:] if t0 >= origin]
    if not _blocks:
        _events.clear()
    me, size = process.here(), process.num_locales()
    row = {"locale": me, "events": mine, "offset": offset, "error": error, "host": os.uname().nodename}
    if failed:
        return write(_file(directory, me), [row], size)
    rows = runtime.comm().gather(row, root=0)
    return None if rows is None else write(_file(directory, None), rows, size)


#: What a trace file's times are (its ``otherData["clock"]``).
CLOCK = ("locale 0's perf_counter from its exit of the barrier that began the block; each locale's own "
         "clock shifted by offset_us (its clock minus locale 0's, measured by ping-pong), each to within "
         "error_us")


def write(path: str, rows: list, size: int) -> str:
    """Write the Chrome trace of ``rows`` (one per locale: its spans, on locale 0's clock in
    seconds, and its clock's ``offset`` to locale 0's with its ``error`` bound) to ``path``."""
    out = []
    for r in rows:
        k = r["locale"]
        out.append({"ph": "M", "name": "process_name", "pid": k, "tid": 0, "args": {"name": f"locale {k}"}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": k, "tid": 0, "args": {"sort_index": k}})
        out.append({"ph": "M", "name": "thread_name", "pid": k, "tid": 0, "args": {"name": f"locale {k} ({r['host']})"}})
        for c, n, t0, t1, a in r["events"]:
            e = {"ph": "X", "cat": c, "name": n, "pid": k, "tid": 0,
                 "ts": round(t0 * 1e6, 3), "dur": round(max(t1 - t0, 0.0) * 1e6, 3)}
            if a:
                e["args"] = a
            out.append(e)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump({"traceEvents": out, "displayTimeUnit": "ms",
                   "otherData": {"locales": size, "clock": CLOCK,
                                 "offset_us": {r["locale"]: round(r["offset"] * 1e6, 3) for r in rows},
                                 "error_us": {r["locale"]: round(r["error"] * 1e6, 3) for r in rows}}}, f)
    os.replace(tmp, path)
    return path


def active() -> bool:
    """True while a ``pg.trace`` block (or ``PGAS_TRACE``) records."""
    return bool(_blocks)


class Trace:
    """``with pg.trace(DIR):`` records a timeline of every locale into ``DIR/trace.json``
    (collective on entry and exit; see :mod:`pgas.comm.trace`).

    Blocks may nest (an inner block writes the spans of its own interval, the outer
    one goes on recording) and repeat (each writes its file again, replacing the last).
    An error leaving the block turns tracing off and each locale writes the spans it has
    into ``DIR/locale-K.json`` (no collective: other locales may not be there).

    >>> with pg.trace("trace-out"):               # doctest: +SKIP
    ...     for _ in range(10):
    ...         sweep()
    """

    def __init__(self, directory) -> None:
        if not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"pg.trace(DIR) takes the directory to write the timeline into, got "
                            f"{type(directory).__name__} (the sum of a diagonal is np.trace(A))")
        self.directory = os.fspath(directory)
        self.path: str | None = None

    def __enter__(self) -> "Trace":
        from . import check
        if check.enabled:
            check.collective("start of a pg.trace() block")
        begin(self.directory)
        return self

    def __exit__(self, *exc) -> None:
        self.path = end(failed=exc[0] is not None)


def trace(directory) -> Trace:
    """Record a timeline of every locale inside a ``with`` block (collective on entry and exit).

    Locale 0 writes ``directory/trace.json`` at the end of the block: Chrome trace-event
    JSON (open it in Perfetto), one track per locale, a span per statement (named by its
    ``file:line`` and text) with its planning, packing, kernels, waits (naming the peer
    waited for) and MPI calls inside.  ``pgas trace directory`` summarises it; the
    environment variable ``PGAS_TRACE=directory`` records a whole run.  See
    ``docs/trace.md``.

    Parameters
    ----------
    directory : str or os.PathLike
        Where to write the timeline (made if missing).

    Examples
    --------
    >>> with pg.trace("trace-out"):               # doctest: +SKIP
    ...     for _ in range(10):
    ...         sweep()
    """
    return Trace(directory)


def from_environment() -> None:
    """``PGAS_TRACE=DIR``: record the whole run into ``DIR`` (called, collectively, when the
    library's communicator is made; written at exit)."""
    directory = os.environ.get("PGAS_TRACE", "").strip()
    if directory and not _blocks:
        import atexit
        begin(directory)
        atexit.register(_end_at_exit)


def _end_at_exit() -> None:
    if _blocks:
        while len(_blocks) > 1:
            end(failed=True)
        end(failed=sys.exc_info()[0] is not None)
