"""pg.cshift / pg.eoshift / pg.pshift without a plan lower and plan once per (layout, dtype,
shifts): repeated calls reuse the template and still give NumPy's answers."""

import numpy as np

import pgas as pg
from pgas.array.shifts import statements as shiftspec
from util import assert_matches


def test_repeated_cshift_reuses_template():
    g = np.arange(30.0).reshape(5, 6)
    A = pg.from_numpy(g)
    before = len(shiftspec._templates)
    R1 = pg.cshift(A, 2, 1)
    mid = len(shiftspec._templates)
    B = pg.from_numpy(g * 3)
    R2 = pg.cshift(B, 2, 1)
    assert len(shiftspec._templates) == mid <= before + 1
    assert_matches(R1, np.roll(g, -2, 1))
    assert_matches(R2, np.roll(g * 3, -2, 1))
    pg.cshift(A, -1, 0, out=R1)                          # another shift: another template
    assert_matches(R1, np.roll(g, 1, 0))
    assert len(shiftspec._templates) == mid + 1 or mid == shiftspec.TEMPLATES


def test_eoshift_boundaries_keyed_exactly():
    g = np.arange(7.0)
    A = pg.from_numpy(g)
    R = pg.eoshift(A, 2, 0, 0.0)
    S = pg.eoshift(A, 2, 0, -0.0)
    assert np.signbit(S.to_numpy()[-1]) and not np.signbit(R.to_numpy()[-1])
    T = pg.eoshift(A, -3, 0, 5.5)
    want = np.concatenate([[5.5] * 3, g[:-3]])
    assert_matches(T, want)
    M = pg.from_numpy(np.arange(12.0).reshape(3, 4))
    bd = pg.from_numpy(np.array([7.0, 8.0, 9.0]))                        # distributed: lowered per call
    for _ in range(2):
        E = pg.eoshift(M, 1, 1, bd)
    want = np.concatenate([np.arange(12.0).reshape(3, 4)[:, 1:], [[7.0], [8.0], [9.0]]], axis=1)
    assert_matches(E, want)


def test_ghosted_source_and_explain():
    g = np.arange(24.0).reshape(4, 6)
    A = pg.from_numpy(g, ghosts=(1, 1))
    for _ in range(2):
        R = pg.cshift(A, 1, 0)
    assert_matches(R, np.roll(g, -1, 0))
    txt = pg.explain(lambda: pg.cshift(A, 1, 0, out=R))
    assert "pg.cshift: 2 statements" in txt
