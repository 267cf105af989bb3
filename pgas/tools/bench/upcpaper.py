"""The XL UPC paper's numbers (Barton et al., PLDI 2006, Blue Gene/L) that ``pgas bench ablation``
(Table 3) and ``pgas bench scaling --upc-tables`` (Tables 1 and 2) print beside pgas's, and the
rows of Tables 1 and 2 built from a weak-scaling sweep.  Pure: no MPI."""

from __future__ import annotations

import math

#: Table 3, 64 threads: column -> (GUPS or GB/s, seconds, speedup over "no opt").
TABLE3 = {
    "randomaccess": {"FE trans": (0.00311, 172.681, 1.15), "no opt": (0.00270, 198.492, 1.00),
                     "indexing": (0.00272, 197.033, 1.01), "update": (0.00561, 95.729, 2.07),
                     "forall": (0.00438, 122.673, 1.62), "all opts": (0.01918, 27.987, 7.09)},
    "stream": {"FE trans": (0.2028, 23.665, 1.51), "no opt": (0.1343, 35.730, 1.00),
               "indexing": (0.1769, 27.129, 1.32), "update": (0.1343, 35.730, 1.00),
               "forall": (0.2831, 16.952, 2.11), "all opts": (32.3609, 0.148, 240.77)},
}
#: Table 1 (RandomAccess) and Table 2 (STREAM triad): threads -> (GUPS or GB/s, memory used
#: in TB, efficiency in %); the efficiency is ``T1 / (TP x P)`` of the weakly scaled run.
TABLE1 = {1: (5.4e-4, 0.000128, 100), 2: (7.8e-4, 0.000256, 72), 4: (1.3e-3, 0.000512, 61),
          64: (0.02, 0.008192, 61), 2048: (0.56, 0.25, 51), 4096: (1.11, 0.5, 50), 8192: (1.70, 1.0, 38),
          16384: (3.36, 2.0, 38), 32768: (6.10, 4.0, 34), 65536: (11.54, 8.0, 33), 131072: (16.72, 8.0, 23)}
TABLE2 = {1: (0.73, 0.000128, 100), 2: (1.46, 0.000256, 100), 4: (2.92, 0.000512, 100),
          64: (46.72, 0.008192, 100), 65536: (47827.0, 8.0, 100), 131072: (95660.77, 8.0, 100)}
#: Per kernel of the sweep: its table, its rate's unit, work units per element (updates per
#: table word, bytes per element of the triad) and bytes per element held.
KERNELS = {"randomaccess": (TABLE1, "GUPS", 4, 8), "stream": (TABLE2, "GB/s", 24, 24)}


def table_rows(summary: list[dict]) -> list[list]:
    """Rows of Tables 1 and 2 from ``pgas bench scaling``'s summary (its weak pgas entries of
    randomaccess and stream): kernel, locales, rate, MiB per locale, efficiency %, and the
    paper's rate, memory (TB, all threads) and efficiency % at the same thread count.

    >>> s = [{"mode": "weak", "kernel": "stream", "impl": "pgas", "locales": 2, "n": 1 << 20,
    ...       "seconds": 0.01, "efficiency": 0.9}]
    >>> [round(x, 6) if isinstance(x, float) else x for x in table_rows(s)[0]]
    ['stream', 2, 2.516582, 12.0, 90.0, 1.46, 0.000256, 100]
    """
    rows = []
    for e in summary:
        if e["mode"] != "weak" or e["impl"] != "pgas" or e["kernel"] not in KERNELS:
            continue
        table, _, work, held = KERNELS[e["kernel"]]
        paper = table.get(e["locales"], (math.nan, math.nan, math.nan))
        rows.append([e["kernel"], e["locales"], work * e["n"] / e["seconds"] / 1e9,
                     held * e["n"] / e["locales"] / 2 ** 20, 100 * e["efficiency"], *paper])
    return rows


HEADERS = ["kernel", "locales", "GUPS or GB/s", "MiB per locale", "efficiency %",
           "paper rate", "paper TB used", "paper efficiency %"]
