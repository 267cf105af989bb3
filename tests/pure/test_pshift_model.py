"""The polyshift paper's model, eq. (1): its columns, and its fit recovering known parameters."""

import numpy as np
import pytest

from pgas.tools.bench import pshift_model as model

#: A call's fixed cost, a slice's move on the node, to and from the buffers, and an exchange (seconds).
TRUE = {"T0": 20e-6, "Tmm": 2e-9, "Tmt+Ttm": 6e-9, "Tex": 3e-6}


def layouts(grid_split):
    """Every size of the paper's Tables 1-4 with ``grid_split(rank)`` telling which axes are split."""
    return [(k, L, model.regressors([L] * k, split=grid_split(k))) for k, sizes in model.PAPER_SIZES.items()
            for L in sizes]


def four_locales(k):                  # rank 1: (4,); ranks 2-4: 2 x 2 on the first two axes
    return [True] if k == 1 else [True, True] + [False] * (k - 2)


def test_fit_recovers_known_parameters():
    rows = layouts(four_locales)
    X = np.array([c for _, _, c in rows])
    T = X @ np.array([TRUE[p] for p in model.PARAMETERS])
    got = model.fit(X, T)
    assert got["rank"] == 4 and got["relative_rms_residual"] < 1e-9
    for p in model.PARAMETERS:
        assert got["params"][p] == pytest.approx(TRUE[p], rel=1e-6), p
    assert len(got["residuals"]) == len(rows) == 27


def test_fit_with_noise_stays_close():
    rows = layouts(four_locales)
    X = np.array([c for _, _, c in rows])
    T = X @ np.array([TRUE[p] for p in model.PARAMETERS])
    noisy = T * (1 + 0.01 * np.random.default_rng(0).standard_normal(len(T)))
    got = model.fit(X, noisy)
    assert 0.003 < got["relative_rms_residual"] < 0.03
    for p in ("T0", "Tmm", "Tex"):        # (Tmt+Ttm's part of these times is under 1%: noise swamps it)
        assert got["params"][p] == pytest.approx(TRUE[p], rel=0.15), p


def test_fit_keeps_every_time_nonnegative():
    rows = layouts(four_locales)
    X = np.array([c for _, _, c in rows])
    truth = dict(TRUE, Tex=0.0)
    T = X @ np.array([truth[p] for p in model.PARAMETERS])
    noisy = T * (1 + 0.05 * np.random.default_rng(3).standard_normal(len(T)))
    free = model.fit(X, noisy, nonnegative=False)
    got = model.fit(X, noisy)
    assert all(v >= 0 for v in got["params"].values())
    assert got["relative_rms_residual"] >= free["relative_rms_residual"] - 1e-12
    if any(v < 0 for v in free["params"].values()):
        assert got["at_zero"] and all(got["params"][p] == 0 for p in got["at_zero"])
    assert got["unconstrained"] == free["params"]


def test_parameters_the_rows_cannot_separate_are_not_determined():
    # one split axis at every rank (2 locales): the exchange's column is 1/4 of the buffers' column
    rows = layouts(lambda k: [True] + [False] * (k - 1))
    X = np.array([c for _, _, c in rows])
    T = X @ np.array([TRUE[p] for p in model.PARAMETERS])
    got = model.fit(X, T)
    assert got["params"]["Tex"] is None and got["rank"] == 3
    assert got["params"]["Tmt+Ttm"] == pytest.approx(TRUE["Tmt+Ttm"] + TRUE["Tex"] / 4, rel=1e-6)
    # nothing split (1 locale): no buffers, no exchanges
    X1 = np.array([model.regressors([L] * k, split=[False] * k) for k, L, _ in rows])
    got1 = model.fit(X1, X1 @ np.array([TRUE[p] for p in model.PARAMETERS]))
    assert got1["params"]["Tmt+Ttm"] is None and got1["params"]["Tex"] is None
    assert got1["params"]["Tmm"] == pytest.approx(TRUE["Tmm"], rel=1e-6)


def test_columns_follow_equation_one():
    # rank 3, 4^3, shifts of 1: 3 axes x 2 ways x 2 slices x 16 rows of 3 moves, of 1 to buffers; 16 exchanges
    assert model.regressors([4, 4, 4]).tolist() == [1.0, 576.0, 192.0, 16.0]
    # a sequence of one-shift calls: 6 calls, each its own exchange
    assert model.regressors([4, 4, 4], exchanges="sum").tolist() == [6.0, 576.0, 192.0, 96.0]
    # float32: one slice, the ceiling rounds an odd slice count up
    assert model.regressors([3], nsl=1).tolist() == [1.0, 4.0, 2.0, 1.0]
    with pytest.raises(ValueError):
        model.regressors([4, 4], shifts=[1])
    with pytest.raises(ValueError):
        model.fit([[1.0, 2.0]], [0.0])


def test_paper_fit_and_tables():
    f = model.paper_fit()
    assert f["rows"] == 27 and f["relative_rms_residual"] < 0.2
    assert all(f["params"][p] > 0 for p in model.PARAMETERS)
    assert model.PAPER_SIZES[1] == [2 ** e for e in range(2, 15)]
    rows = [{"rank": 2, "L": 8, "cshift": {"seconds": 2e-4, "messages": 4}, "pshift": {"seconds": 1e-4, "messages": 2},
             "ghosts": {"seconds": 5e-5, "messages": 2}, "speedup_pshift": 2.0, "speedup_pshift_cpu": 1.9}]
    table = model.markdown_table(rows, 2).splitlines()
    assert len(table) == 2 + 7
    assert table[4].startswith("| 8x8 | 1.005 | 0.470 | 2.1 (2.1) | 200.0 | 100.0 | 2.00 (1.90) | 50.0 | 4/2/2 |")
    assert "not determined" in model.markdown_fits({"a": {"params": {"T0": 1e-6, "Tmm": None, "Tmt+Ttm": None,
                                                                       "Tex": None}, "relative_rms_residual": 0.1}})
