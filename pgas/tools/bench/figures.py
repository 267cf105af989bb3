"""The benchmark report's PNG plots (the modulo-unrolling paper's Figures 12-23), drawn
from the suite's rows alone by :func:`draw_all`, and ``pgas bench scaling``'s
(:func:`scaling_plot`); needs matplotlib (``pip install
'pgas[plot]'``)."""

from __future__ import annotations

import os

from pgas.plan.draw import pyplot
from pgas.tools.bench.measure import dist_label


def _save(fig, outdir: str, name: str, names: list) -> None:
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, name), dpi=100)
    pyplot().close(fig)
    names.append(name)


def _bars(pairs, key: str, title: str, ylabel: str, log: bool, outdir: str, name: str, names: list) -> None:
    from pgas.tools.bench.report import geomean

    plt = pyplot()
    sel = [p for p in pairs if p["study"] == "kernels" and p[key] is not None]
    if not sel:
        return
    kernels = list(dict.fromkeys(p["kernel"] for p in sel)) + ["geomean"]
    series = list(dict.fromkeys((dist_label(p["dist"], p.get("block")), p["mode"]) for p in sel))
    by = {(p["kernel"], dist_label(p["dist"], p.get("block")), p["mode"]): p[key] for p in sel}
    for d, m in series:
        by[("geomean", d, m)] = geomean([v for (k, dd, mm), v in by.items() if dd == d and mm == m])
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(kernels) + 2), 4.2))
    width = 0.8 / len(series)
    for s, (d, m) in enumerate(series):
        xs = [i + (s - (len(series) - 1) / 2) * width for i in range(len(kernels))]
        ys = [by.get((k, d, m), float("nan")) for k in kernels]
        ax.bar(xs, ys, width, label=f"{d}, {m}")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks(range(len(kernels)), kernels, rotation=30, ha="right")
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, outdir, name, names)


def _nan(v):
    return float("nan") if v is None else v


def _locale_ticks(ax, counts) -> None:
    """Tick a locale-count axis at the counts run, labelled as whole numbers (no 1.5 locales)."""
    counts = sorted(counts)
    ax.set_xticks(counts, [str(P) for P in counts])
    ax.tick_params(axis="x", which="minor", bottom=False, labelbottom=False)


def _lines(pairs, study: str, x: str, xlabel: str, outdir: str, names: list) -> None:
    plt = pyplot()
    sel = [p for p in pairs if p["study"] == study and p["mode"] == "aggregated"]
    for k in dict.fromkeys(p["kernel"] for p in sel):
        rows = [p for p in sel if p["kernel"] == k]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
        group = (lambda p: p["dist"]) if study == "blocksize" else (lambda p: dist_label(p["dist"], p.get("block")))
        for c, d in enumerate(dict.fromkeys(group(p) for p in rows)):
            pts = sorted(((p[x], p) for p in rows if group(p) == d), key=lambda t: t[0])
            xs, col = [v for v, _ in pts], f"C{c}"
            a1.plot(xs, [_nan(p["message_ratio"]) for _, p in pts], "o-", color=col, label=f"{d} messages")
            a1.plot(xs, [_nan(p["time_ratio"]) for _, p in pts], "s--", color=col, label=f"{d} time")
            a2.plot(xs, [p["elements_per_message"] for _, p in pts], "o-", color=col, label=d)
        a1.set_yscale("log")
        a1.axhline(1.0, color="black", lw=0.8)
        a1.set_ylabel("aggregated / baseline")
        a2.set_ylabel("elements per message")
        for a in (a1, a2):
            a.set_xlabel(xlabel)
            if x == "locales":
                _locale_ticks(a, {p[x] for p in rows})
            else:
                a.set_xscale("log", base=2)
            a.grid(True, alpha=0.3)
            a.legend(fontsize=7)
        fig.suptitle(f"{k}: {study} {'scaling' if study != 'blocksize' else 'variation'}")
        _save(fig, outdir, f"{study}_{k}.png", names)


def _planned(runs, outdir: str, names: list) -> None:
    plt = pyplot()
    sel = [r for r in runs if r["study"] == "planned" and "error" not in r]
    if not sel:
        return
    dists = list(dict.fromkeys(dist_label(r["dist"], r.get("block")) for r in sel))
    fig, axes = plt.subplots(1, len(dists), figsize=(4 * len(dists), 3.6), sharey=True, squeeze=False)
    for ax, d in zip(axes[0], dists):
        for k in dict.fromkeys(r["kernel"] for r in sel):
            pts = sorted((r["locales"], r["messages"]) for r in sel
                         if r["kernel"] == k and dist_label(r["dist"], r.get("block")) == d)
            ax.loglog([p[0] for p in pts], [max(p[1], 0.5) for p in pts], "o-", label=k)
        ax.set_title(d)
        _locale_ticks(ax, {r["locales"] for r in sel})
        ax.set_xlabel("locales (planned, not run)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("aggregated messages per step")
    axes[0][-1].legend(fontsize=7)
    _save(fig, outdir, "planned_messages.png", names)


def draw_all(runs: list[dict], pairs: list[dict], outdir: str) -> dict[str, list[str]]:
    """Draw every figure the rows allow into ``outdir``; returns section -> PNG names."""
    pyplot()                                            # the clear error first, before anything is drawn
    images: dict[str, list[str]] = {"kernels": [], "strong": [], "weak": [], "blocksize": [], "planned": []}
    _bars(pairs, "time_ratio", "Figure 12: time normalised to baseline", "time / baseline time", False, outdir,
          "fig12_time.png", images["kernels"])
    _bars(pairs, "message_ratio", "Figure 13: messages normalised to baseline", "messages / baseline messages",
          True, outdir, "fig13_messages.png", images["kernels"])
    _lines(pairs, "strong", "locales", "locales", outdir, images["strong"])
    _lines(pairs, "weak", "n", "input size n", outdir, images["weak"])
    _lines(pairs, "blocksize", "block", "block size", outdir, images["blocksize"])
    _planned(runs, outdir, images["planned"])
    return images


def scaling_plot(summary: list[dict], path: str) -> str:
    """``pgas bench scaling``'s figure: seconds (log-log) and parallel efficiency against
    locales, one colour per kernel (pgas solid, hand-written mpi4py dashed, C + MPI dotted),
    one row of panels per mode; returns ``path``."""
    plt = pyplot()
    modes = list(dict.fromkeys(e["mode"] for e in summary)) or ["strong"]
    fig, axes = plt.subplots(len(modes), 2, figsize=(11, 4 * len(modes)), squeeze=False)
    for (a1, a2), mode in zip(axes, modes):
        sel = [e for e in summary if e["mode"] == mode]
        kernels = list(dict.fromkeys(e["kernel"] for e in sel))
        for k, impl in dict.fromkeys((e["kernel"], e["impl"]) for e in sel):
            pts = [e for e in sel if (e["kernel"], e["impl"]) == (k, impl)]
            style = dict(color=f"C{kernels.index(k) % 10}", marker="o",
                         ls={"pgas": "-", "hand_mpi4py": "--"}.get(impl, ":"),
                         label=k if impl == "pgas" else f"{k} ({impl})")
            a1.plot([e["locales"] for e in pts], [e["seconds"] for e in pts], **style)
            a2.plot([e["locales"] for e in pts], [e["efficiency"] for e in pts], **style)
        counts = sorted({e["locales"] for e in sel})
        a1.set_xscale("log", base=2)
        a1.set_yscale("log")
        a1.set_ylabel("seconds")
        a2.set_xscale("log", base=2)
        a2.axhline(1.0, color="black", lw=0.8)
        a2.set_ylabel("parallel efficiency")
        for a, what in ((a1, "time"), (a2, "efficiency")):
            _locale_ticks(a, counts)
            a.set_xlabel("locales")
            a.set_title(f"{mode} scaling: {what}")
            a.grid(True, which="both", alpha=0.3)
        a2.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
