"""Timelines (``pg.trace``, :mod:`pgas.comm.trace`): the trace file is valid Chrome trace-event
JSON with spans for every locale and statement, ``pgas trace``'s parts add up to each
statement's time, blocks repeated, nested or left by an error leave tracing off and
their files written, and the locales' clocks are aligned to locale 0's by measurement (a
message's receipt never ends before its send started, even with clocks skewed on purpose).
No timing is asserted beyond such causality and sanity bounds."""

import json
import os
import time

import numpy as np
import pytest
from util import collective_verdict

import pgas as pg
from pgas import comm
from pgas.comm import trace
from pgas.tools.trace import PARTS, load, read, summarise

P = pg.num_locales
me = pg.here


@pytest.fixture
def where(tmp_path):
    """A directory every locale names alike: locale 0's ``tmp_path`` (pytest removes old ones)."""
    d = comm.bcast(str(tmp_path) if me == 0 else None, 0)
    yield d
    comm.barrier()


def _arrays(n=24):
    A = pg.from_numpy(np.arange(n * n, dtype=np.float64).reshape(n, n) % 7, dist=pg.Cyclic())
    B = pg.zeros((n, n), dist=pg.Cyclic())
    return A, B


def _sweeps(A, B, k):
    for _ in range(k):
        B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
        A[1:-1, 1:-1] = B[1:-1, 1:-1]


def _file(d):
    return os.path.join(d, "trace.json")


def test_every_locale_and_statement_has_spans(where):
    A, B = _arrays()
    _sweeps(A, B, 2)
    with pg.trace(where) as t:
        _sweeps(A, B, 3)
        total = A.sum()
    collective_verdict(not trace.on and (t.path is not None) == (me == 0), f"tracing on after the block: {trace.on}")
    assert np.isfinite(total)
    why = ""
    if me == 0:
        with open(_file(where)) as f:
            data = json.load(f)                               # valid JSON
        ev = data["traceEvents"]
        xs = [e for e in ev if e["ph"] == "X"]
        named = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
        for e in xs:
            if not (isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and e["cat"] in trace.CATEGORIES):
                why = f"bad event {e}"
        if named != set(range(P)) or {e["pid"] for e in xs} != set(range(P)):
            why = why or f"locales named {named}, with spans {sorted({e['pid'] for e in xs})}"
        for k in range(P):
            stmts = [e for e in xs if e["pid"] == k and e["cat"] == "stmt"]
            sites = {e["name"].split(" ", 1)[0] for e in stmts}
            if (len(stmts) != 6 or len(sites) != 2 or not all(s.startswith("test_trace.py:") for s in sites)
                    or not all(e["args"]["cpu_us"] >= 0 for e in stmts)):
                why = why or f"locale {k}: statements {[e['name'] for e in stmts]}"
            if not any(e["cat"] == "kernel" and e["pid"] == k for e in xs):
                why = why or f"locale {k}: no kernel span"
            if P > 1 and not any(e["cat"] == "wait" and e["pid"] == k and (e.get("args") or {}).get("peers")
                                 for e in xs):
                why = why or f"locale {k}: no wait naming a peer"
        if not any(e["cat"] == "mpi" and "Allreduce" in e["name"] and "site" in e.get("args", {}) for e in xs):
            why = why or "the sum's allreduce is not named by its call site"
    collective_verdict(not why, why)


def test_statements_in_pgas_benchmarks_are_named_by_the_benchmarks_line(where):
    """pgas's own benchmarks (pgas/tools/bench) are programs written with pgas: a statement
    they run is named by their line, not by the frame that started them (runpy's, under
    ``pgas bench``)."""
    from pgas.tools.bench.polybench import jacobi_step
    A, B = _arrays()
    with pg.trace(where):
        jacobi_step(A, B)
    why = ""
    if me == 0:
        with open(_file(where)) as f:
            xs = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X" and e["cat"] == "stmt"]
        names = sorted({e["name"].split(" ", 1)[0] for e in xs})
        if len(xs) != 2 * P or not all(n.startswith("polybench.py:") for n in names):
            why = f"statements named {names}"
    collective_verdict(not why, why)


def test_parts_add_up_to_each_statement(where):
    A, B = _arrays()
    with pg.trace(where):
        _sweeps(A, B, 4)
        C = A[1:-1, 1:-1] + 1.0                       # a materialisation
        pg.forall((range(1, 23), range(1, 23)), lambda i, j: B.__setitem__((i, j), 0.5 * A[i - 1, j]))
    del C
    why = ""
    if me == 0:
        s = summarise(load(where))
        if len(s["statements"]) < 3:
            why = f"call sites {list(s['statements'])}"
        for name, st in s["statements"].items():
            if set(st["locales"]) != {str(k) for k in range(P)}:
                why = why or f"{name}: locales {list(st['locales'])}"
            for k, r in st["locales"].items():
                parts = sum(r[p] for p in PARTS)
                if abs(parts - r["total"]) > 0.05 * r["total"] + 1e-3:
                    why = why or f"{name} on locale {k}: parts {parts} us, total {r['total']} us"
                if sum(r["waits"].values()) > r["wait"] + 1e-3:
                    why = why or f"{name} on locale {k}: waits by peer exceed the wait part"
            if P > 1 and sum(st["last_to_arrive"].values()) != st["matched_runs"]:
                why = why or f"{name}: critical path {st['last_to_arrive']} over {st['matched_runs']} runs"
    collective_verdict(not why, why)


def test_repeated_and_nested_blocks(where):
    A, B = _arrays()
    inner = os.path.join(where, "inner")
    for _ in range(2):                                 # the same directory twice: written again
        with pg.trace(where):
            _sweeps(A, B, 1)
            with pg.trace(inner):                      # nested: the inner interval alone
                _sweeps(A, B, 2)
            on_inside = trace.on
            _sweeps(A, B, 1)
        collective_verdict(on_inside and not trace.on and not trace.active(), "tracing state after the blocks")
    why = ""
    if me == 0:
        outer = summarise(load(where))["statements"]
        got = summarise(load(inner))["statements"]
        if sum(s["runs"] for s in outer.values()) != 8 or sum(s["runs"] for s in got.values()) != 4:
            why = (f"runs per site: outer {[s['runs'] for s in outer.values()]}, "
                   f"inner {[s['runs'] for s in got.values()]}")
    collective_verdict(not why, why)


def test_an_error_inside_leaves_tracing_off_and_files_written(where):
    A, B = _arrays()
    with pytest.raises(ValueError, match="inside the block"):
        with pg.trace(where):
            _sweeps(A, B, 2)
            raise ValueError("inside the block")
    collective_verdict(not trace.on and not trace.active(), "tracing still on after an error")
    comm.barrier()
    mine = os.path.join(where, f"locale-{me}.json")
    ok = os.path.exists(mine)
    collective_verdict(ok, f"{mine} not written")
    why = ""
    if me == 0:
        s = summarise(load(where))                    # the per-locale files, merged
        if sorted(s["locales"]) != list(range(P)) or sum(x["runs"] for x in s["statements"].values()) != 4:
            why = f"locales {s['locales']}, statements {list(s['statements'])}"
    collective_verdict(not why, why)
    _sweeps(A, B, 1)                                  # the library goes on untraced
    collective_verdict(not trace._events, "spans recorded while off")


def test_bad_directory_argument_raises_alike():
    A, _ = _arrays(4)
    with pytest.raises(TypeError, match="np.trace"):
        pg.trace(A)


_TAG = 99                                             # a notice tag no statement uses


@pytest.mark.parametrize("skew", [0.0, 2.5], ids=["own clocks", "clocks skewed on purpose"])
def test_clocks_aligned_a_receipt_ends_after_its_send_started(where, monkeypatch, skew):
    """Locale 0 sleeps 20 ms, then sends locale 1 one notice that locale 1 waits for: on the
    written timeline (locale 0's clock) the wait ends after the send started, to within the
    error bound; with each locale's clock set ``skew * locale`` seconds ahead, the offsets
    written are those skews."""
    ahead = skew * me
    monkeypatch.setattr(trace, "now", lambda: time.perf_counter() + ahead)
    with pg.trace(where):
        if P > 1 and me == 0:
            time.sleep(0.02)
            comm.wait(comm.notify([1], _TAG))
        elif P > 1 and me == 1:
            comm.wait(comm.expect([0], _TAG))
    why = ""
    if me == 0:
        with open(_file(where)) as f:
            data = json.load(f)
        other = data["otherData"]
        one_node = len({e["args"]["name"].split(" (", 1)[1] for e in data["traceEvents"]
                        if e["ph"] == "M" and e["name"] == "thread_name"}) == 1
        offsets = {int(k): v for k, v in other["offset_us"].items()}
        errors = {int(k): v for k, v in other["error_us"].items()}
        if set(offsets) != set(range(P)) or set(errors) != set(range(P)) or offsets[0] != 0 or errors[0] != 0:
            why = f"offsets {offsets}, error bounds {errors}"
        for k in range(P):
            if not (0 <= errors.get(k, -1) < 5e3):
                why = why or f"locale {k}: error bound {errors.get(k)} us"
            # on one node every locale's perf_counter is the node's monotonic clock: the
            # offset is the skew set here, to within the bound (and the file's rounding)
            if one_node and not why and abs(offsets[k] - 1e6 * skew * k) > errors[k] + 1e-2:
                why = f"locale {k}: offset {offsets[k]} us, skewed {1e6 * skew * k} us, bound {errors[k]} us"
        events, clocks = read(where)
        if clocks.get("error_us") != errors:
            why = why or f"pgas trace read the error bounds {clocks}"
        if P > 1 and not why:
            send = [e for e in events if e["pid"] == 0 and e["name"] == "MPI_Isend notice (tag 99)"]
            recv = [e for e in events if e["pid"] == 1 and e["name"] == "recv from 0 (tag 99)"]
            if len(send) != 1 or len(recv) != 1:
                why = f"sends {send}, receipts {recv}"
            else:
                send_start, recv_end = send[0]["ts"], recv[0]["ts"] + recv[0]["dur"]
                if recv_end < send_start - errors[1]:
                    why = (f"the receipt ended at {recv_end} us, before the send started at {send_start} us "
                           f"(error bound {errors[1]} us)")
                if min(e["ts"] for e in events) < -max(errors.values()) - 1e-2:
                    why = why or f"a span starts at {min(e['ts'] for e in events)} us, before locale 0's zero"
    collective_verdict(not why, why)


def test_clock_error_bounds_are_small_and_in_the_summary(where):
    A, B = _arrays()
    with pg.trace(where):
        _sweeps(A, B, 1)
    why = ""
    if me == 0:
        events, clocks = read(where)
        errors = clocks.get("error_us", {})
        if sorted(errors) != list(range(P)) or not all(0 <= v < 5e3 for v in errors.values()):
            why = f"error bounds {errors} us"
        s = summarise(events, clocks)
        if not why and s["clock"]["max_error_us"] != max(errors.values()):
            why = f"summary's clock {s['clock']}, error bounds {errors}"
    collective_verdict(not why, why)
