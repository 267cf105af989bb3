"""The polyshift paper's performance model, eq. (1), and its Tables 1-4 (no MPI needed).

For a call that shifts a local subarray of shape ``L_0 x ... x L_{k-1}`` (``V``
elements) by ``+-S_i`` along each axis, the paper models the time as::

    T = T0 + Nsl 2 Tmm sum_i V/L_i (L_i - S_i)          on-node memory moves
           + Nsl 2 Tmt sum_i V/L_i S_i                   memory to transposer (send buffer)
           + Nsl 2 Ttm sum_i V/L_i S_i                   transposer to memory (receive buffer)
           + Tex max_i ceil(Nsl V S_i / (2 L_i))          exchanges, all axes at once

with ``Nsl`` the 32-bit slices per element (2 for ``REAL*8`` / float64).
:func:`regressors` gives the four columns a row contributes, :func:`fit` the
least-squares parameters over rows of every rank at once (relative errors, so
small and large subarrays weigh alike; no parameter negative, as each is a
time) with each row's residual.

What a fit can and cannot separate: ``Tmt`` and ``Ttm`` multiply the same
column in eq. (1), so only their sum is determined by timings (reported as
``Tmt+Ttm``; splitting it needs the pack and unpack phases timed apart); ``Nsl``
multiplies ``Tmm``, ``Tmt`` and ``Ttm`` alike and enters ``Tex``'s column only
through the ceiling, so it is fixed by the element type (``itemsize / 4``) and
the fitted times are per 32-bit slice, as the paper's.  Within one rank with
equal axes the columns reduce to eq. (2), ``a + b L^(k-1) + c L^k``: ``Tex``
and ``Tmt+Ttm`` are told apart only by fitting several ranks together (their
columns' ratio is ``4 k``), and ``T0`` from ``Tex`` only with a rank above 1.

Two adaptations for pgas: an axis that is not split over locales (its grid
extent is 1) moves its whole subarray on the node (``V`` memory moves, no
exchange, no buffers), and a sequence of one-shift calls (the paper's
``CSHIFT``, pgas's ``cshift`` way) sums its exchanges over the shifts
(``exchanges="sum"``) where one polyshift overlaps them (``"max"``).
"""

from __future__ import annotations

import math

import numpy as np

#: The paper's Tables 1-4 (CM-200, ms per call, shifts of +-1 along every axis, REAL*8):
#: rank -> rows of (local extent L, CSHIFT elapsed, PSHIFT elapsed, CSHIFT CM time, PSHIFT CM time).
PAPER = {
    1: [(4, 0.221, 0.058, 0.147, 0.041), (8, 0.230, 0.059, 0.151, 0.045), (16, 0.223, 0.064, 0.159, 0.051),
        (32, 0.228, 0.064, 0.176, 0.064), (64, 0.226, 0.099, 0.208, 0.099), (128, 0.333, 0.234, 0.305, 0.210),
        (256, 0.744, 0.610, 0.571, 0.456), (512, 1.289, 1.029, 1.058, 0.904), (1024, 1.909, 1.792, 1.902, 1.791),
        (2048, 3.566, 3.460, 3.566, 3.458), (4096, 6.794, 6.689, 6.794, 6.689),
        (8192, 13.451, 13.346, 13.451, 13.346), (16384, 26.767, 26.662, 26.767, 26.662)],
    2: [(2, 0.511, 0.124, 0.414, 0.107), (4, 0.517, 0.173, 0.517, 0.166), (8, 1.005, 0.470, 1.005, 0.469),
        (16, 2.289, 1.400, 2.289, 1.399), (32, 5.867, 4.465, 5.867, 4.462), (64, 24.248, 19.699, 24.205, 19.655),
        (128, 86.965, 67.190, 86.757, 67.064)],
    3: [(2, 0.722, 0.205, 0.722, 0.205), (4, 2.357, 0.911, 2.330, 0.910), (8, 9.948, 4.954, 9.923, 4.954),
        (16, 49.044, 30.389, 49.044, 30.379)],
    4: [(2, 2.516, 0.758, 1.576, 0.504), (4, 11.872, 4.659, 11.192, 4.659), (8, 106.644, 53.486, 106.478, 53.451)],
}

#: The local extents per axis the paper times, per rank.
PAPER_SIZES = {k: [row[0] for row in rows] for k, rows in PAPER.items()}

#: The fitted parameters, in the order of :func:`regressors`' columns.
PARAMETERS = ("T0", "Tmm", "Tmt+Ttm", "Tex")


def slices(itemsize: int) -> int:
    """``Nsl``: the 32-bit slices of an element of ``itemsize`` bytes (at least 1).

    >>> slices(8), slices(4), slices(1)
    (2, 1, 1)
    """
    return max(1, -(-int(itemsize) // 4))


def regressors(local, shifts=None, split=None, nsl: int = 2, exchanges: str = "max") -> np.ndarray:
    """The columns of eq. (1) for one call: ``[calls, X_mm, X_mt, X_ex]`` with ``T = [T0, Tmm,
    Tmt+Ttm, Tex] @ columns``.  ``local``: the subarray's extent per axis; ``shifts``: the
    shift distance per axis (default 1, shifted both ways); ``split``: per axis, whether it
    is split over locales (default all; an axis that is not moves all ``V`` elements on the
    node); ``exchanges``: ``"max"`` (one polyshift: the axes' exchanges overlap) or ``"sum"``
    (one call per shift: ``2k`` calls, each paying ``T0``).

    >>> regressors([16384]).tolist()                 # rank 1: 2 x 16383 moves, 2 x 1 to buffers, 1 exchange
    [1.0, 65532.0, 4.0, 1.0]
    >>> regressors([4, 4], nsl=2).tolist()           # 2 axes x 2 slices x 2 ways x 4 rows of (3 | 1)
    [1.0, 96.0, 32.0, 4.0]
    >>> regressors([4, 4], split=[True, False]).tolist()
    [1.0, 112.0, 16.0, 4.0]
    """
    L = [int(x) for x in local]
    S = [1] * len(L) if shifts is None else [int(s) for s in shifts]
    split = [True] * len(L) if split is None else [bool(x) for x in split]
    if not (len(S) == len(split) == len(L)) or min(L, default=0) < 1:
        raise ValueError(f"regressors: local extents {local}, shifts {shifts}, split {split} do not match")
    V = math.prod(L)
    mm = mt = 0.0
    ex = []
    for Li, Si, cut in zip(L, S, split):
        rows = V / Li
        if cut:
            mm += 2 * nsl * rows * max(Li - Si, 0)
            mt += 2 * nsl * rows * min(Si, Li)
            ex.append(math.ceil(nsl * V * Si / (Li * 2)))
        else:
            mm += 2 * nsl * rows * Li
    if exchanges == "max":
        calls, exch = 1, max(ex, default=0)
    else:                                          # one call per shift, each its own exchange
        calls, exch = 2 * len(L), 2 * sum(ex)
    return np.array([float(calls), mm, mt, float(exch)])


def fit(X, T, nonnegative: bool = True) -> dict:
    """Least squares ``T ~ X @ p`` minimising relative errors (each row divided by its ``T``).

    Returns ``{"params": {name: value or None}, "residuals": [(model - T) / T per row],
    "relative_rms_residual": ..., "rank": ..., "at_zero": [...]}``; a parameter the rows cannot
    determine (its column a combination of the others over these rows) is ``None`` (and left
    out of the fit).  With ``nonnegative`` (the default: every parameter is a time) the fit is
    the best one with no negative parameter (every subset of the columns is tried); those it
    holds at 0 are listed in ``at_zero``.  ``unconstrained`` holds the plain least-squares
    parameters.

    >>> X = np.array([regressors([L] * k) for k in (1, 2, 3) for L in (2, 4, 8, 16)])
    >>> p = np.array([5e-6, 1e-9, 4e-9, 2e-6])
    >>> got = fit(X, X @ p)["params"]
    >>> [round(float(got[n] / v), 6) for n, v in zip(PARAMETERS, p)]
    [1.0, 1.0, 1.0, 1.0]
    """
    X, T = np.asarray(X, float), np.asarray(T, float)
    if X.ndim != 2 or len(X) != len(T) or not len(T) or np.any(T <= 0):
        raise ValueError("fit: needs one positive time per row of X")
    W = X / T[:, None]
    ones = np.ones_like(T)
    keep = _independent(W)
    free, *_ = np.linalg.lstsq(W[:, keep], ones, rcond=None)
    best, used = free, keep
    if nonnegative and np.any(free < 0):
        best, used, err = np.zeros(0), [], float(ones @ ones)      # every parameter 0
        for mask in range(1, 1 << len(keep)):
            cols = [c for i, c in enumerate(keep) if mask >> i & 1]
            sol, *_ = np.linalg.lstsq(W[:, cols], ones, rcond=None)
            r = W[:, cols] @ sol - ones
            if np.all(sol >= 0) and float(r @ r) < err:
                best, used, err = sol, cols, float(r @ r)
    coef = np.full(X.shape[1], np.nan)
    coef[keep] = 0.0
    coef[used] = best
    model = X[:, used] @ best if used else np.zeros_like(T)
    resid = (model - T) / T
    names = PARAMETERS if X.shape[1] == len(PARAMETERS) else tuple(f"p{i}" for i in range(X.shape[1]))
    plain = np.full(X.shape[1], np.nan)
    plain[keep] = free
    return {"params": {n: (None if np.isnan(c) else float(c)) for n, c in zip(names, coef)},
            "residuals": [float(r) for r in resid], "relative_rms_residual": float(np.sqrt(np.mean(resid ** 2))),
            "rank": len(keep), "rows": len(T), "at_zero": [names[c] for c in keep if c not in used],
            "unconstrained": {n: (None if np.isnan(c) else float(c)) for n, c in zip(names, plain)}}


def _independent(W: np.ndarray, tol: float = 1e-9) -> list[int]:
    """Indices of columns of ``W`` that are not combinations of earlier ones (greedy)."""
    keep: list[int] = []
    for j in range(W.shape[1]):
        cols = W[:, keep + [j]]
        scale = np.linalg.norm(cols, axis=0)
        if np.all(scale > 0):
            s = np.linalg.svd(cols / scale, compute_uv=False)
            if s[-1] > tol * s[0]:
                keep.append(j)
    return keep


def paper_fit(column: int = 4) -> dict:
    """Eq. (1) fitted to the paper's own Tables 1-4 (``column`` 4: PSHIFT CM time; 2: PSHIFT
    elapsed), every rank at once, in seconds per slice / exchange."""
    X = np.array([regressors([L] * k) for k, rows in PAPER.items() for L, *_ in rows])
    T = np.array([row[column] * 1e-3 for rows in PAPER.values() for row in rows])
    return fit(X, T)


def model_time(params: dict, columns) -> float:
    """Eq. (1)'s time for one row's ``columns`` (a ``None`` parameter counts 0)."""
    return float(sum((params.get(n) or 0.0) * c for n, c in zip(PARAMETERS, columns)))


def markdown_table(rows: list, rank: int) -> str:
    """The paper's Table ``rank`` beside pgas's rows of that rank (``rows``: ``pgas bench
    pshift`` JSON rows), as a Markdown table; sizes pgas did not run show "-", and sizes
    only pgas ran are listed too."""
    paper = {row[0]: row for row in PAPER.get(rank, [])}
    ours = {r["L"]: r for r in rows if r["rank"] == rank}
    head = ("| L | paper CSHIFT ms | paper PSHIFT ms | paper speedup (CM time) | pgas cshift us | pgas pshift us "
            "| pgas speedup (CPU) | pgas update_ghosts us | messages c/p/g |")
    out = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for L in sorted(set(paper) | set(ours)):
        p, r = paper.get(L), ours.get(L)
        pc = [f"{p[1]:.3f}", f"{p[2]:.3f}", f"{p[1] / p[2]:.1f} ({p[3] / p[4]:.1f})"] if p else ["-"] * 3
        if r:
            rc = [f"{r['cshift']['seconds'] * 1e6:.1f}", f"{r['pshift']['seconds'] * 1e6:.1f}",
                  f"{r['speedup_pshift']:.2f} ({r['speedup_pshift_cpu']:.2f})",
                  f"{r['ghosts']['seconds'] * 1e6:.1f}",
                  f"{r['cshift']['messages']}/{r['pshift']['messages']}/{r['ghosts']['messages']}"]
        else:
            rc = ["-"] * 5
        label = "x".join([str(L)] * rank)
        out.append("| " + " | ".join([label, *pc, *rc]) + " |")
    return "\n".join(out)


def markdown_fits(fits: dict) -> str:
    """Eq. (1)'s parameters side by side (``fits``: name -> :func:`fit` result), in microseconds."""
    names = list(fits)
    out = ["| parameter | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for p in PARAMETERS:
        cells = []
        for n in names:
            v = fits[n]["params"].get(p) if fits[n] else None
            zero = fits[n] and p in fits[n].get("at_zero", ())
            cells.append("not determined" if v is None else "0 (held at its bound)" if zero else f"{v * 1e6:.4g} us")
        out.append(f"| {p} | " + " | ".join(cells) + " |")
    out.append("| relative rms residual | " + " | ".join(
        f"{fits[n]['relative_rms_residual']:.3f}" if fits[n] else "-" for n in names) + " |")
    return "\n".join(out)
