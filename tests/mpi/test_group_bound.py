"""Grouped statements (one exchange for several, :mod:`pgas.exec.group`) keep the
aggregation-buffer bound: a group whose buffers may exceed ``pg.config(buffer_limit=...)``
runs statement by statement, each strip-mined to the limit; results are NumPy's.

Also: grouped shifts under small buffer limits, by protocol."""

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm
from pgas.exec import group, transfer

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


@pytest.fixture
def _defaults():
    pg.config()
    yield
    pg.config()


def _same_everywhere(x, what):
    every = comm.allgather(x)
    collective_verdict(all(e == every[0] for e in every), lambda: f"{what} differed between locales: {every}")


def _want_shifts(G, shifts):
    out = []
    for s in shifts:
        if len(s) == 2:
            out.append(np.roll(G, -s[0], s[1]))
            continue
        sh, ax, b = s
        e = np.full_like(G, b)
        n = G.shape[ax]
        src, dst = [slice(None)] * G.ndim, [slice(None)] * G.ndim
        src[ax], dst[ax] = (slice(sh, n), slice(0, n - sh)) if sh >= 0 else (slice(0, n + sh), slice(-sh, n))
        if abs(sh) < n:
            e[tuple(dst)] = G[tuple(src)]
        out.append(e)
    return out


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("limit", [8, 40, 1 << 30])
@pytest.mark.parametrize("protocol", ["auto", "bounding"])
def test_grouped_shifts_under_small_limits(limit, protocol, monkeypatch):
    said = []
    real = group.fits
    monkeypatch.setattr("pgas.exec.statement.fits", lambda items: said.append(real(items)) or said[-1])
    shifts = [(1, 0), (-2, 1), (3, 0, 7), (-9, 0, 2), (0, 1)]
    for dist in (pg.Block(), pg.Cyclic()):
        pg.config(buffer_limit=limit, protocol=protocol)
        G = (np.arange(7 * 5) % 11).astype(np.int8).reshape(7, 5)
        A = pg.from_numpy(G, dist=dist)
        for g, w in zip(pg.pshift(A, shifts), _want_shifts(G, shifts)):
            assert_matches(g, w)
        with pg.pshift_setup(A, shifts) as plan:          # a kept plan, the limit changed between calls
            for lim in (1 << 30, 8, 1 << 30, 40):
                pg.config(buffer_limit=lim)
                for g, w in zip(plan(A), _want_shifts(G, shifts)):
                    assert_matches(g, w)
        bnd = pg.from_numpy(np.arange(5, dtype=np.int8) - 9, dist=pg.Block())   # distributed boundary: run_group
        pg.config(buffer_limit=limit)
        got = pg.pshift(A, [(2, 0, bnd), (-1, 1)])
        e = np.empty_like(G)
        e[:-2], e[-2:] = G[2:], np.arange(5) - 9
        assert_matches(got[0], e)
        assert_matches(got[1], np.roll(G, 1, 1))
    _same_everywhere(said, "fits()")
    collective_verdict(said and not all(said), lambda: f"fits() said {said}: the small limits never split a group")
