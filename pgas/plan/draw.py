"""Pictures of what the runtime does: ownership maps and a statement's aggregated footprints.

- :func:`ownership` / :func:`ownership_text` / :func:`draw_ownership`: which locale
  owns each element of an array under Block, Cyclic and Block-Cyclic (the
  modulo-unrolling paper's Figures 1-3).
- :func:`footprints` / :func:`draw_footprints`: for one statement and one
  locale, the remote elements each access reads for the iterations that locale
  runs, grouped by the locale they come from; the groups of every access from one
  locale and array travel as one aggregated message (the paper's Figure 6).  ``pg.explain(fn, plot="f.png")``
  draws the first statement ``fn`` issues.
- ``pgas show`` (:mod:`pgas.tools.show`) prints and draws both.

The pictures need matplotlib (``pip install 'pgas[plot]'``); without it they
raise :class:`MissingMatplotlib`, which says so.  The text forms need nothing.
"""

from __future__ import annotations

import math

import numpy as np


class MissingMatplotlib(ImportError):
    """Plots need matplotlib: ``pip install 'pgas[plot]'``."""


def pyplot():
    """``matplotlib.pyplot`` with the non-interactive Agg backend, or
    :class:`MissingMatplotlib` naming the extra to install."""
    try:
        import matplotlib
    except ImportError:
        raise MissingMatplotlib("plots need matplotlib, which is not installed: pip install 'pgas[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def ownership(layout) -> np.ndarray:
    """The owning locale of every element of a 1-D or 2-D ``layout``.

    >>> from pgas.layout import Cyclic
    >>> ownership(Cyclic().bind((2, 4), 4)).tolist()
    [[0, 1, 0, 1], [2, 3, 2, 3]]
    """
    if layout.ndim not in (1, 2):
        raise ValueError(f"ownership maps are drawn for 1-D and 2-D arrays, not {layout.ndim}-D")
    idx = np.indices(layout.shape).reshape(layout.ndim, -1)
    return np.asarray(layout.owners(tuple(idx))).reshape(layout.shape)


def ownership_text(layout) -> str:
    """The ownership map as rows of locale numbers.

    >>> from pgas.layout import Block
    >>> print(ownership_text(Block().bind((4,), 2)))
    0 0 1 1
    """
    own = ownership(layout)
    w = len(str(layout.num_locales - 1))
    return "\n".join(" ".join(f"{x:>{w}}" for x in row) for row in np.atleast_2d(own))


def _cells(ax, own, P, alpha=1.0, numbers=True):
    plt = pyplot()
    own = np.atleast_2d(own)
    cmap = plt.get_cmap("tab20" if P > 10 else "tab10")
    ax.imshow(own % cmap.N, cmap=cmap, vmin=0, vmax=cmap.N - 1, alpha=alpha, interpolation="nearest")
    if numbers and own.size <= 1024:
        for (r, c), v in np.ndenumerate(own):
            ax.text(c, r, str(v), ha="center", va="center", fontsize=8 if own.shape[1] <= 16 else 5)
    ax.set_xticks(range(own.shape[1]) if own.shape[1] <= 32 else [])
    ax.set_yticks(range(own.shape[0]) if own.shape[0] <= 32 else [])
    ax.tick_params(labelsize=6)


def draw_ownership(layouts: dict, path: str) -> str:
    """Draw one ownership map per ``{title: layout}`` side by side into PNG ``path``."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(layouts), figsize=(3.6 * len(layouts), 3.8), squeeze=False,
                             layout="constrained")         # keeps the titles inside the picture
    for ax, (title, L) in zip(axes[0], layouts.items()):
        _cells(ax, ownership(L), L.num_locales)
        ax.set_title(f"{title}: {'x'.join(map(str, L.shape))} on {L.num_locales} locales", fontsize=9)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


#: Footprints are found by enumerating the statement's iterations: at most this many.
MAX_ITERATIONS = 1 << 20


def footprints(stmt, layouts, locale: int, owning: int | None = None, names=None) -> list[dict]:
    """What ``locale`` moves for ``stmt``, access by access.

    The iterations ``locale`` runs are those whose ``owning`` access (default the
    write) it owns; for each other access, the elements those iterations touch
    on other locales.  Returns one dict per access: ``text`` (e.g.
    ``A[i, j - 1]``), ``slot``, ``write`` (True for the written access) and
    ``remote``: ``{owner: array of global indices (k, ndim)}``, duplicates removed.
    """
    from .explain import var_names

    count = math.prod(c for _, _, c in stmt.box)
    if count > MAX_ITERATIONS:
        raise ValueError(f"footprints are drawn for statements of at most {MAX_ITERATIONS} iterations, "
                         f"this one has {count}: use smaller arrays")
    own = stmt.write if owning is None else owning
    axes = [s + st * np.arange(c) for s, st, c in stmt.box]
    it = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")]) if axes else np.zeros((0, 1), int)

    def index(a):
        return np.asarray(a.M, dtype=np.int64).reshape(len(a.c), -1) @ it + np.asarray(a.c, dtype=np.int64)[:, None]

    def owners(a):
        return np.asarray(layouts[a.slot].owners(tuple(index(a)))).ravel()

    mine = owners(stmt.accesses[own]) == locale
    names = names or [f"X{s}" for s in range(len(layouts))]
    out = []
    for k, a in enumerate(stmt.accesses):
        if k == own:
            continue
        idx, who = index(a)[:, mine], owners(a)[mine]
        remote = {}
        for q in sorted(set(who.tolist()) - {locale}):
            remote[q] = np.unique(idx[:, who == q].T, axis=0)
        out.append({"text": a.text(names[a.slot], var_names(stmt.nvars)), "slot": a.slot, "write": k == stmt.write,
                    "remote": remote})
    return out


def owning_access(stmt, layouts, policy: str = "write") -> int:
    """The access whose owner runs each iteration under owner ``policy`` (as the
    runtime chooses it; the write for ``"write"``)."""
    from .planner import plan

    if policy == "write":
        return stmt.write
    return plan(stmt, layouts, policy).owning


#: At most this many statements are drawn by :func:`draw_statements`.
MAX_STATEMENTS = 6


def draw_statements(seen, locale: int, path: str) -> str:
    """Draw the footprints of ``pg.explain``'s statements (``(lowered statement,
    layouts, owner policy)`` each; the first :data:`MAX_STATEMENTS`) for ``locale``."""
    return draw_footprints([(low.stmt, layouts, owning_access(low.stmt, layouts, policy), low.names)
                            for low, layouts, policy in seen[:MAX_STATEMENTS]], locale, path)


def draw_footprints(items, locale: int, path: str) -> str:
    """Draw :func:`footprints` into PNG ``path``, one row per statement ``(stmt,
    layouts, owning, names)`` of ``items`` and one panel per access that moves
    remote elements: the array coloured by owner (light), the elements moved for
    ``locale`` hatched.  Each row is titled with :func:`merged_line`: the elements from one
    source locale and array travel as one message, whichever accesses read them."""
    plt = pyplot()
    from matplotlib.patches import Rectangle

    rows = []
    for stmt, layouts, owning, names in items:
        if not 0 <= locale < layouts[0].num_locales:
            raise ValueError(f"locale {locale} is not one of the {layouts[0].num_locales} locales")
        if any(L.ndim > 2 for L in layouts):
            raise ValueError("footprints are drawn for 1-D and 2-D arrays only")
        fps = footprints(stmt, layouts, locale, owning, names)
        rows.append(([f for f in fps if f["remote"]] or fps[:1], layouts, merged_line(stmt, layouts, owning, locale)))
    ncol = max(len(r[0]) for r in rows)
    # one sub-figure per statement, titled with its merged message count; constrained layout
    # keeps every title (two lines over each panel) inside the picture
    fig = plt.figure(figsize=(3.8 * ncol, 4.4 * len(rows)), layout="constrained")
    for (fps, layouts, summary), sub in zip(rows, np.atleast_1d(fig.subfigures(len(rows), 1))):
        line = sub.subplots(1, ncol, squeeze=False)[0]
        sub.suptitle(summary, fontsize=9)
        for ax in line[len(fps):]:
            ax.axis("off")
        for ax, f in zip(line, fps):
            L = layouts[f["slot"]]
            _cells(ax, ownership(L), L.num_locales, alpha=0.35, numbers=False)
            for idx in f["remote"].values():
                for e in idx:
                    r, c = (0, e[0]) if L.ndim == 1 else (e[0], e[1])
                    ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, hatch="////", lw=0.8))
            ax.set_title(f"{f['text']} for locale {locale}:\n{footprint_line(f)}", fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def merged_line(stmt, layouts, owning: int, locale: int) -> str:
    """What ``locale`` moves for the whole statement, as the runtime sends it: one message per
    other locale and array, holding every access's elements from there (the planner's count)."""
    from .planner import plan_local

    p = plan_local(stmt, tuple(layouts), owning, locale)
    if not p.messages:
        return f"locale {locale} moves nothing: all its accesses are local"
    return (f"locale {locale} moves {p.moved} elements in {p.messages} message{'s' if p.messages != 1 else ''} "
            f"(one per other locale and array: the accesses' elements travel together)")


def footprint_line(f: dict) -> str:
    """``"9 elements fetched from locale 1"`` for one access of :func:`footprints` (its messages
    are merged with the other accesses' to the same locale and array: :func:`merged_line`)."""
    verb = "written back to" if f["write"] else "fetched from"
    if not f["remote"]:
        return "all local"
    if len(f["remote"]) == 1:
        (q, i), = f["remote"].items()
        return f"{len(i)} elements {verb} locale {q}"
    parts = ", ".join(f"{len(i)} from locale {q}" for q, i in f["remote"].items())
    return f"{sum(len(i) for i in f['remote'].values())} elements {verb} others ({parts})"
