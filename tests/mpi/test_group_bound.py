"""Grouped statements (one exchange for several, :mod:`pgas.exec.group`) keep the
aggregation-buffer bound: a group whose buffers may exceed ``pg.config(buffer_limit=...)``
runs statement by statement, each strip-mined to the limit; results are NumPy's."""

import numpy as np
import pytest

import pgas as pg
from pgas import comm
from pgas.exec import group, transfer
from util import assert_matches, collective_verdict

SHIFTS = [(1, 0), (-2, 1), (3, 0, 7.0)]


def _want(G):
    out = [np.roll(G, -1, 0), np.roll(G, 2, 1)]       # CSHIFT: out[i] = A[i + shift]
    e = np.full_like(G, 7.0)
    e[:-3] = G[3:]
    return out + [e]


@pytest.mark.parametrize("limit", [None, 40, 200, 1 << 40], ids=["default", "tiny", "small", "huge"])
@pytest.mark.parametrize("dist", ["Block", "Cyclic"])
def test_grouped_shifts_within_buffer_limit(limit, dist, monkeypatch):
    said = []
    real = group.fits
    monkeypatch.setattr("pgas.exec.statement.fits", lambda items: said.append(real(items)) or said[-1])
    if limit is not None:
        pg.config(buffer_limit=limit)
    G = np.arange(13 * 11, dtype=np.float64).reshape(13, 11) * 0.5
    A = pg.from_numpy(G, dist=getattr(pg, dist)())
    for run in range(2):                     # the first call plans; the second runs the cached plan
        transfer.reset_peak()
        got = pg.pshift(A, SHIFTS)
        peak = transfer.reset_peak()
        for g, w in zip(got, _want(G)):
            assert_matches(g, w)
        bound = limit if limit is not None else 64 << 20
        collective_verdict(peak <= bound, lambda: f"aggregation buffers peaked at {peak} bytes, limit {bound}")
    everyone = comm.allgather(tuple(said))
    collective_verdict(all(s == everyone[0] for s in everyone), lambda: f"fits() differed between locales: {everyone}")
    if limit == 40:                          # 13 x 11 float64: no group of these fits 40 bytes
        collective_verdict(said and not any(said), lambda: f"fits() said {said} under a 40-byte limit")
    if limit == 1 << 40:
        collective_verdict(said and all(said), lambda: f"fits() said {said} under a huge limit")
