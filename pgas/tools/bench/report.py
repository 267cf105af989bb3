"""``pgas report DIR``: the benchmark suite's Markdown report and PNG plots, from its JSON alone.

Reads ``DIR/results.json`` (written by ``pgas bench suite``; a JSON file of
``pgas bench run`` works too) and writes ``DIR/report.md`` with the tables of
the modulo-unrolling paper's Figures 11-23 and, with matplotlib (``pip install
'pgas[plot]'``), one PNG per figure beside it.  Every ratio is a run's messages
or time over the baseline run of the same kernel, size, distribution and locale
count; geometric means are over the kernels whose baseline sends messages.  Runs
whose result differed from NumPy are listed at the top and left out of every
table and plot.
"""

from __future__ import annotations

import json
import math
import os
import sys

from pgas.tools.bench.measure import dist_label

MODE_NAMES = {"aggregated": "aggregated", "auto": "auto (cost model)"}


class PlotsUnavailable(RuntimeError):
    """matplotlib is not installed (``pip install 'pgas[plot]'``)."""


def load(path: str) -> tuple[dict, str]:
    """The results in ``path`` (a folder holding ``results.json``, or a JSON file) and
    the folder the report goes to."""
    file = os.path.join(path, "results.json") if os.path.isdir(path) else path
    if not os.path.exists(file):
        raise FileNotFoundError(f"no results at {file} (pgas bench suite --out DIR writes DIR/results.json)")
    with open(file) as f:
        data = json.load(f)
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise ValueError(f"{file} holds no benchmark runs (expected a JSON object with a 'runs' list)")
    return data, os.path.dirname(os.path.abspath(file))


def geomean(xs) -> float:
    """The geometric mean of the positive values of ``xs`` (NaN if none).

    >>> round(geomean([0.5, 2.0, 4.0]), 6), geomean([])
    (1.587401, nan)
    """
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def _key(r) -> tuple:
    return (r["study"], r["kernel"], r["n"], r["dist"], r.get("block"), r["locales"])


def paired(runs: list[dict]) -> list[dict]:
    """The correct non-baseline runs, each with ``base`` (its baseline run) and
    ``message_ratio`` / ``time_ratio`` (None where the baseline sent no message or
    took no time, or there is no baseline)."""
    good = [r for r in runs if r.get("correct") is True]
    base = {_key(r): r for r in good if r["mode"] == "baseline"}
    out = []
    for r in good:
        if r["mode"] == "baseline":
            continue
        b = base.get(_key(r))
        rm = r["messages_per_step"] / b["messages_per_step"] if b and b["messages_per_step"] else None
        rt = r["seconds_per_step"] / b["seconds_per_step"] if b and b["seconds_per_step"] else None
        out.append({**r, "base": b, "message_ratio": rm, "time_ratio": rt})
    return out


def _fmt(v, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.{digits}g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"
    return str(v)


def _table(headers, rows) -> list[str]:
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)] + \
           ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows] + [""]


def _dists(rows) -> list[tuple]:
    order = {"Block": 0, "Cyclic": 1, "BlockCyclic": 2}
    return sorted({(r["dist"], r.get("block")) for r in rows}, key=lambda d: (order.get(d[0], 9), d[1] or 0))


def kernel_tables(pairs: list[dict]) -> tuple[list[str], dict]:
    """Figures 11-13 as Markdown lines, and the geometric means per (distribution, mode)."""
    sel = [p for p in pairs if p["study"] == "kernels"]
    kernels = list(dict.fromkeys(p["kernel"] for p in sel))
    dists = _dists(sel)
    by = {(p["kernel"], p["dist"], p.get("block"), p["mode"]): p for p in sel}
    lines = ["## Figure 11: elements per aggregated message", "",
             "Largest message of the aggregated runs, in elements (the paper's elements per chunk: the "
             "maximum over a run's messages), then the mean elements per message.", ""]

    def column(k, d, key):
        p = by.get((k, *d, "aggregated"))
        return None if p is None else p.get(key)

    lines += _table(["kernel", "n"] + [f"{dist_label(*d)} {w}" for d in dists for w in ("max", "mean")],
                    [[k, next(p["n"] for p in sel if p["kernel"] == k)]
                     + [column(k, d, key) for d in dists
                        for key in ("max_elements_per_message", "elements_per_message")] for k in kernels])
    means = {}
    for what, key, title in (("messages", "message_ratio", "Figure 13: messages"),
                             ("time", "time_ratio", "Figure 12: time")):
        modes = [m for m in MODE_NAMES if any(p["mode"] == m for p in sel)]
        lines += [f"## {title} normalised to the baseline", "",
                  f"Baseline {'messages' if what == 'messages' else 'seconds'} per step, then each mode's "
                  "as a ratio of it (below 1: better).", ""]
        heads = ["kernel"] + [f"{dist_label(*d)} {c}" for d in dists for c in ["baseline"] + modes]
        rows = []
        for k in kernels:
            row = [k]
            for d in dists:
                first = next((by[(k, *d, m)] for m in modes if (k, *d, m) in by), None)
                base = first["base"] if first and first["base"] else None
                row.append(base["messages_per_step" if what == "messages" else "seconds_per_step"] if base else None)
                row += [by[(k, *d, m)][key] if (k, *d, m) in by else None for m in modes]
            rows.append(row)
        gm = ["**geometric mean**"]
        for d in dists:
            gm.append(None)
            for m in modes:
                g = geomean([by[(k, *d, m)][key] for k in kernels if (k, *d, m) in by])
                means[(what, dist_label(*d), m)] = g
                gm.append(g)
        lines += _table(heads, rows + [gm])
    return lines, means


def scaling_tables(pairs: list[dict], study: str, xname: str, title: str) -> list[str]:
    """One table per kernel of a scaling study (x = locales, n or block)."""
    sel = [p for p in pairs if p["study"] == study and p["mode"] == "aggregated"]
    if not sel:
        return []
    lines = [f"## {title}", ""]
    for k in dict.fromkeys(p["kernel"] for p in sel):
        rows = sorted((p for p in sel if p["kernel"] == k),
                      key=lambda p: (p["dist"], p.get("block") or 0, p[xname]))
        lines += [f"### {k}", ""]
        lines += _table([xname, "dist", "baseline msgs/step", "aggregated msgs/step", "message ratio",
                         "time ratio", "elements/message"],
                        [[p[xname], dist_label(p["dist"], p.get("block")),
                          p["base"]["messages_per_step"] if p["base"] else None, p["messages_per_step"],
                          p["message_ratio"], p["time_ratio"], p["elements_per_message"]] for p in rows])
    return lines


def planned_table(runs: list[dict]) -> list[str]:
    sel = [r for r in runs if r["study"] == "planned"]
    if not sel:
        return []
    counts = sorted({r["locales"] for r in sel})
    lines = ["## Past this machine: messages per step by planning alone", "",
             "Aggregated messages of one step on each locale count, from `pg.explain` (exact up to 64 "
             "locales, estimated from 16 sampled locales beyond); elements per message in parentheses.", ""]
    rows = []
    for k in dict.fromkeys(r["kernel"] for r in sel):
        for d in _dists([r for r in sel if r["kernel"] == k]):
            by = {r["locales"]: r for r in sel if r["kernel"] == k and (r["dist"], r.get("block")) == d}
            n = next(iter(by.values()))["n"]
            rows.append([k, n, dist_label(*d)] + [
                "error" if "error" in by.get(P, {}) else
                (f"{by[P]['messages']} ({_fmt(by[P]['elements_per_message'])})" if P in by else None)
                for P in counts])
    lines += _table(["kernel", "n", "dist"] + [f"{P} locales" for P in counts], rows)
    errs = [r for r in sel if "error" in r]
    lines += [f"- planning {r['kernel']} on {r['locales']} locales failed: {r['error']}" for r in errs[:10]]
    return lines + ([""] if errs else [])


def markdown(data: dict, images: dict) -> str:
    """The report's Markdown text; ``images`` maps a section to its PNG file names."""
    runs = data["runs"]
    env = data.get("environment", {})
    wrong = [r for r in runs if r.get("correct") is False]
    measured = [r for r in runs if "correct" in r]
    lines = ["# pgas benchmark report", "",
             f"Preset `{data.get('preset', '-')}`, up to {data.get('locales', '-')} locales, "
             f"{data.get('steps', '-')} timed steps per run; host {env.get('host', '?')} ({env.get('cpus', '?')} "
             f"CPUs), {env.get('time', '')}. Regenerate with `pgas report DIR`.", ""]
    if wrong:
        lines += [f"**WARNING: {len(wrong)} of {len(measured)} runs differ from NumPy; they are left out of "
                  "every table and plot:**", ""]
        lines += [f"- {r['kernel']} n={r['n']} {dist_label(r['dist'], r.get('block'))} {r['mode']} on "
                  f"{r['locales']} locales (largest relative difference {_fmt(r.get('max_rel_error'))})"
                  for r in wrong] + [""]
    else:
        lines += [f"All {len(measured)} measured runs matched their NumPy reference.", ""]
    lines += [f"**FAILED: {f}**" for f in data.get("failures", [])] + ([""] if data.get("failures") else [])
    pairs = paired(runs)
    body, means = kernel_tables(pairs)
    if any(p["study"] == "kernels" for p in pairs):
        lines += body + [f"![{n}]({n})" for n in images.get("kernels", [])] + [""]
        lines += ["Geometric means: " + "; ".join(f"{d} {m}: messages x{_fmt(means[('messages', d, m)])}, "
                                                  f"time x{_fmt(means[('time', d, m)])}"
                                                  for (w, d, m) in means if w == "messages"), ""]
    for study, x, title in (("strong", "locales", "Strong scaling (Figures 14-17)"),
                            ("weak", "n", "Weak scaling (Figures 18-21)"),
                            ("blocksize", "block", "Block size (Figures 22-23)")):
        lines += scaling_tables(pairs, study, x, title)
        lines += [f"![{n}]({n})" for n in images.get(study, [])] + ([""] if images.get(study) else [])
    lines += planned_table(runs) + [f"![{n}]({n})" for n in images.get("planned", [])]
    return "\n".join(lines).rstrip() + "\n"


def build(path: str, plots: bool = True) -> list[str]:
    """Write ``report.md`` (and the PNG plots, unless ``plots`` is False) for the
    results at ``path``; returns the files written.  Raises :class:`PlotsUnavailable`
    when plots are asked for and matplotlib is missing (nothing is written then)."""
    data, outdir = load(path)
    images, written = {}, []
    if plots:
        from pgas.plan.draw import MissingMatplotlib
        from pgas.tools.bench.figures import draw_all

        try:
            images = draw_all(data["runs"], paired(data["runs"]), outdir)
        except MissingMatplotlib as e:
            raise PlotsUnavailable(str(e)) from None
        written += [f for names in images.values() for f in names]
    md = os.path.join(outdir, "report.md")
    with open(md, "w") as f:
        f.write(markdown(data, images))
    return [md] + [os.path.join(outdir, f) for f in written]


def main(argv, Parser) -> int:
    """``pgas report DIR [--no-plots]``; returns the exit status."""
    p = Parser(prog="pgas report", description="Rebuild the Markdown report (DIR/report.md) and PNG plots of a "
               "benchmark suite from DIR/results.json alone (or from a JSON file of pgas bench run).")
    p.add_argument("path", metavar="DIR", help="the suite's output folder (or a results JSON file)")
    p.add_argument("--no-plots", action="store_true", help="only the Markdown report (no matplotlib needed)")
    args = p.parse_args(argv)
    try:
        files = build(args.path, plots=not args.no_plots)
    except (FileNotFoundError, ValueError, PlotsUnavailable) as e:
        print(f"pgas report: {e}", file=sys.stderr)
        return 1
    print("wrote " + ", ".join(files))
    return 0
