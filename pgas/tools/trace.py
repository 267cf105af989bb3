"""``pgas trace DIR``: where the time of a recorded timeline went (``PGAS_TRACE=DIR`` or
``pg.trace(DIR)``, :mod:`pgas.comm.trace`), per statement and locale.

Each statement's time on a locale is split into parts that add up to it: every moment
of the statement belongs to the innermost span open then (a wait inside a pack counts
as wait), and what no inner span covers is Python (the library's own code: checks,
the task layout, bookkeeping).  Parts: ``python``, ``plan`` (lowering and planning),
``pack`` (packing sends, storing results), ``kernel`` (fused kernels, NumPy tasks,
local moves), ``wait`` (by what it waited for) and ``mpi`` (the MPI calls themselves).
Beside them, not a part: ``cpu``, the processor time the locale ran during the
statement (on a node with more locales than cores, the rest of the statement's time
it was descheduled).
Statements are grouped by call site.  Across locales, the k-th run of a call site on
each locale is the same collective statement: the locale that entered it last is the
one the others waited for (the critical path runs through it).  Comparing times across
locales relies on the recorder having put them on one clock, locale 0's, to within the
error bounds it wrote (``otherData["error_us"]``; the largest is in the summary's first
line).

Pure: no MPI, reads only the JSON.  ``--png`` needs matplotlib.
"""

from __future__ import annotations

import glob
import json
import os

PARTS = ("python", "plan", "pack", "kernel", "wait", "mpi")
#: Slack (microseconds) when deciding that a span lies inside another (times are rounded
#: to nanoseconds in the file).
EPS = 0.01


def load(path: str) -> list[dict]:
    """The "X" events of a trace: ``DIR/trace.json`` (merged by locale 0), else
    ``DIR/locale-*.json`` (written by each locale after an error), or a file."""
    return read(path)[0]


def read(path: str) -> tuple[list[dict], dict]:
    """The "X" events of a trace (as :func:`load`) and its clocks: ``{"offset_us": {locale:
    its clock minus locale 0's}, "error_us": {locale: the bound on that offset's error}}``
    (empty for a trace without them)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no trace at {path} (record one with PGAS_TRACE=DIR or pg.trace(DIR))")
    if os.path.isdir(path):
        merged = os.path.join(path, "trace.json")
        files = [merged] if os.path.exists(merged) else sorted(glob.glob(os.path.join(path, "locale-*.json")))
        if not files:
            raise FileNotFoundError(f"no trace in {path}: neither trace.json nor locale-*.json "
                                    "(record one with PGAS_TRACE=DIR or pg.trace(DIR))")
    else:
        files = [path]
    events: list = []
    clocks: dict = {}
    for f in files:
        with open(f) as fh:
            data = json.load(fh)
        events += [e for e in (data["traceEvents"] if isinstance(data, dict) else data) if e.get("ph") == "X"]
        other = data.get("otherData", {}) if isinstance(data, dict) else {}
        for key in ("offset_us", "error_us"):
            if isinstance(other.get(key), dict):
                clocks.setdefault(key, {}).update({int(k): v for k, v in other[key].items()})
    return events, clocks


def _trees(events: list[dict]) -> dict:
    """Per locale, its top-level spans, each ``[event, children]`` (nested by containment)."""
    by: dict = {}
    for e in events:
        by.setdefault(e["pid"], []).append(e)
    out = {}
    for k, evs in by.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        roots, stack = [], []
        for e in evs:
            node = [e, []]
            while stack and e["ts"] + e["dur"] > stack[-1][0]["ts"] + stack[-1][0]["dur"] + EPS:
                stack.pop()
            (stack[-1][1] if stack else roots).append(node)
            stack.append(node)
        out[k] = roots
    return out


def _split(node, parts: dict, waits: dict, top: bool = True) -> None:
    """Add ``node``'s exclusive time to ``parts`` (its own category; a statement's own
    time is Python) and its waits' to ``waits`` by name, then its children's."""
    e, kids = node
    own = e["dur"] - sum(c[0]["dur"] for c in kids)
    cat = e.get("cat", "mpi")
    cat = "python" if cat == "stmt" else cat if cat in PARTS else "mpi"
    parts[cat] = parts.get(cat, 0.0) + max(own, 0.0)
    if cat == "wait":
        waits[e["name"]] = waits.get(e["name"], 0.0) + max(own, 0.0)
    for c in kids:
        _split(c, parts, waits, False)


def summarise(events: list[dict], clocks: dict | None = None) -> dict:
    """The summary of a trace's events: ``statements`` (by call site: runs, per locale
    the total and its parts in microseconds, the waits by what was waited for, and the
    locales the others waited for; ``per_run``: the total and parts of one run, averaged
    over runs and locales), ``outside`` (per locale, the time outside statements:
    Python between them and the spans there, by call site), ``locales`` and, given the
    trace's ``clocks`` (:func:`read`), ``clock``: the largest error bound of the locales'
    alignment to locale 0's clock (``max_error_us``) and the locale it is for."""
    trees = _trees(events)
    locales = sorted(trees)
    sites: dict = {}
    runs: dict = {}                   # (site, locale) -> [(ts, end)] in order
    outside = {k: {"python": 0.0, "spans": {}} for k in locales}
    for k in locales:
        roots = trees[k]
        if roots:
            first = min(n[0]["ts"] for n in roots)
            last = max(n[0]["ts"] + n[0]["dur"] for n in roots)
            outside[k]["python"] = last - first - sum(n[0]["dur"] for n in roots)
        for node in roots:
            e = node[0]
            if e.get("cat") != "stmt":
                key = f"{(e.get('args') or {}).get('site', '?')}: {e['name']}"
                o = outside[k]["spans"].setdefault(key, {"count": 0, "us": 0.0})
                o["count"] += 1
                o["us"] += e["dur"]
                continue
            s = sites.setdefault(e["name"], {"runs": 0, "kinds": set(), "locales": {}})
            s["kinds"].add((e.get("args") or {}).get("path") or (e.get("args") or {}).get("kind", "?"))
            row = s["locales"].setdefault(k, {"runs": 0, "total": 0.0, **{p: 0.0 for p in PARTS}, "cpu": 0.0,
                                              "waits": {}})
            row["runs"] += 1
            row["total"] += e["dur"]
            row["cpu"] += (e.get("args") or {}).get("cpu_us", 0.0)
            _split(node, row, row["waits"])
            runs.setdefault((e["name"], k), []).append((e["ts"], e["ts"] + e["dur"]))
    for name, s in sites.items():
        s["runs"] = max(r["runs"] for r in s["locales"].values())
        s["kinds"] = sorted(s["kinds"])
        last: dict = {}
        spread = 0.0
        here = [runs.get((name, k), []) for k in locales]
        n = min(len(r) for r in here)
        for j in range(n):
            starts = [r[j][0] for r in here]
            ends = [r[j][1] for r in here]
            who = locales[starts.index(max(starts))]
            last[who] = last.get(who, 0) + 1
            spread += max(ends) - min(starts)
        s["last_to_arrive"] = {str(k): c for k, c in sorted(last.items())}
        s["matched_runs"] = n
        s["span_across_locales_us"] = spread / n if n else 0.0
        rows = [r for r in s["locales"].values() if r["runs"]]
        s["per_run"] = {p: sum(r[p] / r["runs"] for r in rows) / len(rows) for p in ("total", *PARTS, "cpu")}
        s["locales"] = {str(k): v for k, v in sorted(s["locales"].items())}
    out = {"locales": locales, "statements": sites, "outside": {str(k): v for k, v in outside.items()}}
    errors = (clocks or {}).get("error_us")
    if errors:
        worst = max(errors, key=lambda k: errors[k])
        out["clock"] = {"max_error_us": errors[worst], "locale": worst}
    return out


def _ms(us: float) -> str:
    return f"{us / 1e3:9.3f}"


def report(summary: dict, top: int = 3) -> str:
    """The summary as text: a table per call site, one row per locale (milliseconds)."""
    lines = []
    clock = summary.get("clock")
    if clock and len(summary["locales"]) > 1:
        lines.append(f"{len(summary['locales'])} locales on locale 0's clock, to within "
                     f"{clock['max_error_us'] / 1e3:.3f} ms (the largest error bound, locale {clock['locale']})")
        lines.append("")
    stmts = sorted(summary["statements"].items(),
                   key=lambda kv: -max(r["total"] for r in kv[1]["locales"].values()))
    head = (f"{'locale':>6} {'runs':>5} {'total ms':>9} " + " ".join(f"{p:>9}" for p in PARTS)
            + f" {'(cpu)':>9}  waited on (ms)")
    for name, s in stmts:
        lines.append(f"{name}  [{s['runs']} runs; {', '.join(s['kinds'])}]")
        lines.append(head)
        for k, r in s["locales"].items():
            waits = sorted(r["waits"].items(), key=lambda kv: -kv[1])[:top]
            wtext = "; ".join(f"{w} {v / 1e3:.3f}" for w, v in waits)
            lines.append(f"{k:>6} {r['runs']:>5} {_ms(r['total'])} " + " ".join(_ms(r[p]) for p in PARTS)
                         + f" {_ms(r['cpu'])}  {wtext}")
        m = s["per_run"]
        lines.append(f"{'1 run':>6} {'':>5} {_ms(m['total'])} " + " ".join(_ms(m[p]) for p in PARTS)
                     + f" {_ms(m['cpu'])}  (one run, mean of the locales)")
        last = s["last_to_arrive"]
        if s["matched_runs"] and len(s["locales"]) > 1:
            order = sorted(last.items(), key=lambda kv: -kv[1])
            who = ", ".join(f"locale {k} in {c}" for k, c in order)
            lines.append(f"  critical path: last to enter (the locale the others waited for): {who} of "
                         f"{s['matched_runs']} runs; first start to last end across locales "
                         f"{s['span_across_locales_us'] / 1e3:.3f} ms per run")
        lines.append("")
    lines.append("outside statements (ms):")
    for k, o in summary["outside"].items():
        spans = sorted(o["spans"].items(), key=lambda kv: -kv[1]["us"])[:top]
        text = "; ".join(f"{n} x{v['count']} {v['us'] / 1e3:.3f}" for n, v in spans)
        lines.append(f"{k:>6} Python between statements {_ms(o['python'])}" + (f"; {text}" if text else ""))
    return "\n".join(lines)


COLOURS = {"stmt": "#dddddd", "python": "#dddddd", "plan": "#9467bd", "pack": "#ff7f0e", "kernel": "#2ca02c",
           "wait": "#d62728", "mpi": "#1f77b4"}


def draw(events: list[dict], path: str) -> None:
    """A timeline, one row per locale (statements grey, their parts coloured), into PNG ``path``."""
    from pgas.plan.draw import pyplot

    plt = pyplot()
    locales = sorted({e["pid"] for e in events})
    fig, ax = plt.subplots(figsize=(14, 1 + 0.6 * len(locales)))
    trees = _trees(events)
    for row, k in enumerate(locales):
        stack = [(n, 0) for n in trees.get(k, [])]
        while stack:
            (e, kids), depth = stack.pop()
            h = 0.8 - 0.15 * min(depth, 3)
            ax.broken_barh([(e["ts"] / 1e3, e["dur"] / 1e3)], (row - h / 2, h),
                           facecolors=COLOURS.get(e.get("cat"), "#7f7f7f"), linewidth=0)
            stack += [(c, depth + 1) for c in kids]
    ax.set_yticks(range(len(locales)), [f"locale {k}" for k in locales])
    ax.invert_yaxis()
    ax.set_xlabel("ms since the trace began")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()][1:]
    ax.legend(handles, [n if n != "python" else "statement (Python)" for n in list(COLOURS)[1:]],
              ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(locales) < 4 else -0.12), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv, Parser) -> int:
    """``pgas trace DIR [--json] [--png FILE]``; returns the exit status."""
    p = Parser(prog="pgas trace", description="Summarise a timeline recorded with PGAS_TRACE=DIR or "
               "pg.trace(DIR): per statement (by call site) and locale, its time split into Python, planning, "
               "packing, kernels, waits (by whom) and MPI calls, and which locale the others waited for. "
               "Open DIR/trace.json in Perfetto (ui.perfetto.dev) for the timeline itself.")
    p.add_argument("dir", metavar="DIR", help="the directory given to PGAS_TRACE / pg.trace (or a trace file)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--png", metavar="FILE", help="draw the timeline, one row per locale (needs matplotlib)")
    p.add_argument("--top", type=int, default=3, help="waits and spans listed per row (default 3)")
    args = p.parse_args(argv)
    try:
        events, clocks = read(args.dir)
    except (FileNotFoundError, json.JSONDecodeError, KeyError) as e:
        print(f"pgas trace: {e}")
        return 1
    summary = summarise(events, clocks)
    print(json.dumps(summary, indent=1) if args.json else report(summary, args.top))
    if args.png:
        from pgas.plan.draw import MissingMatplotlib

        try:
            draw(events, args.png)
        except MissingMatplotlib as e:
            print(f"pgas trace: {e}")
            return 1
    return 0
