"""pg.random: the same seed gives the same global array on any locale count and any
distribution (checked exactly against ``pgas.random.reference``, which is computed
in one process with NumPy only, so it cannot depend on the locale count).

Also: the reference arrays under every distribution."""

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import assert_matches, collective_verdict

import pgas as pg
from pgas.layout import grids
from pgas.random import CHUNK, reference

P = pg.num_locales
MPI_SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=10)


def dists(ndim):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3), pg.BlockCyclic(CHUNK // 2 + 5)]
    if ndim == 2:
        out += [pg.Block(grid=g) for g in pg.layout.grids(P, 2)] + [pg.Cyclic(grid=g) for g in pg.layout.grids(P, 2)]
    return out


def exact(A, expected):
    assert_matches(A, expected, rtol=0.0, atol=0.0)


CALLS = [("random", (), {}, np.float64), ("random", (), {"dtype": np.float32}, np.float32),
         ("standard_normal", (), {}, np.float64), ("standard_normal", (), {"dtype": np.float32}, np.float32),
         ("normal", (2.0, 3.0), {}, np.float64), ("uniform", (-1.0, 5.0), {}, np.float64),
         ("integers", (-7, 100), {}, np.int64), ("integers", (0, 2**31 - 1), {"dtype": np.int32}, np.int32),
         ("integers", (0, 2), {"dtype": bool}, bool)]


@pytest.mark.parametrize("shape", [(0,), (37,), (8 * CHUNK + 5,), (5, 7), (64, 2100)])
def test_same_global_array_on_every_distribution(shape):
    for dist in dists(len(shape)):
        rng = pg.random.default_rng(2024)
        exact(rng.random(shape, dist=dist), reference(2024, 0, shape))
        exact(rng.random(shape, dist=dist), reference(2024, 1, shape))     # the next call differs


@pytest.mark.parametrize("method,args,kw,dtype", CALLS)
def test_every_method_is_exact(method, args, kw, dtype):
    shape = (CHUNK + 77,)
    for dist in (pg.Block(), pg.Cyclic()):
        rng = pg.random.default_rng([1, 2, 3])
        A = getattr(rng, method)(*args, size=shape, dist=dist, **kw)
        ref_args = args if method != "integers" else args
        exact(A, reference([1, 2, 3], 0, shape, method, *ref_args, dtype=dtype))
        collective_verdict(A.dtype == np.dtype(dtype), f"dtype {A.dtype}")


@MPI_SETTINGS
@given(st.integers(0, 2**32), st.integers(0, 3), st.sampled_from([(50,), (9, 11), (3, 4, 5)]), st.integers(0, 3))
def test_call_sequence_is_locale_count_independent(seed, skip, shape, d):
    rng = pg.random.default_rng(seed)
    for _ in range(skip):
        rng.integers(10, size=3)
    dist = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2), pg.BlockCyclic(4)][d]
    exact(rng.standard_normal(shape, dist=dist), reference(seed, skip, shape, "standard_normal"))


def test_values_are_plausible_and_seeds_differ():
    a = pg.random.default_rng(1).random(20000).to_numpy()
    b = pg.random.default_rng(2).random(20000).to_numpy()
    collective_verdict(not np.array_equal(a, b) and 0 <= a.min() and a.max() < 1 and abs(a.mean() - 0.5) < 0.02,
                       "uniform values")
    i = pg.random.default_rng(1).integers(3, 9, size=5000, endpoint=True).to_numpy()
    collective_verdict(i.min() == 3 and i.max() == 9, f"integers range {i.min()}..{i.max()}")
    z = pg.random.default_rng(1).normal(10.0, 2.0, size=20000).to_numpy()
    collective_verdict(abs(z.mean() - 10) < 0.1 and abs(z.std() - 2) < 0.1, "normal moments")


def test_seed_none_agrees_across_locales():
    x = pg.random.default_rng().random(100).to_numpy()
    first = pg.comm.bcast(x, 0)
    collective_verdict(np.array_equal(x, first), "default_rng(None) differs between locales")


@pytest.mark.parametrize("n", [0, 1, 2, 57, CHUNK + 3])
def test_permutation_is_exact_and_a_permutation(n):
    for dist in (pg.Block(), pg.Cyclic(), pg.BlockCyclic(5)):
        p = pg.random.default_rng(7).permutation(n, dist=dist)
        info = np.iinfo(np.int64)
        keys = reference(7, 0, n, "integers", info.min, info.max, dtype=np.int64)
        exact(p, np.argsort(keys, kind="stable").astype(np.int64))
    collective_verdict(np.array_equal(np.sort(p.to_numpy()), np.arange(n)), "not a permutation")


def test_errors_alike_on_every_locale():
    rng = pg.random.default_rng(0)
    with pytest.raises(TypeError, match="float64 or float32"):
        rng.random(5, dtype=np.int64)
    with pytest.raises(ValueError, match="low < high"):
        rng.integers(5, 5, size=3)
    with pytest.raises(ValueError, match="low < high"):
        rng.integers(0, 2**40, size=3, dtype=np.int32)
    with pytest.raises(TypeError, match="integer type"):
        rng.integers(0, 5, size=3, dtype=np.float64)
    with pytest.raises(TypeError, match="size="):
        rng.normal(0, 1)
    with pytest.raises(ValueError, match="scale"):
        rng.normal(0, -1, size=3)
    with pytest.raises(TypeError, match="scalar"):
        rng.uniform(np.zeros(3), 1, size=3)
    with pytest.raises(TypeError, match="int n"):
        rng.permutation(2.5)
    with pytest.raises(pg.DistributionError):
        rng.random((-1,))


def _dists(nd):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]
    for i, g in enumerate(grids(P, nd)):             # one kind per grid, rotating
        out.append([pg.Block(g), pg.Cyclic(g), pg.BlockCyclic(3, g)][i % 3])
    return out


# ---------------------------------------------------------------------------
# 7. Random arrays: the same global array under every distribution
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_random_arrays_are_the_reference_arrays_under_every_distribution(n):
    for d in _dists(1):
        rng = pg.random.default_rng(7)
        assert_matches(rng.random(n, dist=d), pg.random.reference(7, 0, n, "random"), rtol=0)
        assert_matches(rng.random(n, dist=d), pg.random.reference(7, 1, n, "random"), rtol=0)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_dealt_values_move_in_one_exchange(folding, kind, monkeypatch):
    """Values drawn for other locales (Cyclic: each locale's elements lie in every chunk)
    go to their owners with their offsets in one exchange a round, which carries the
    agreement of folded calls: no collective of its own up to the exchange's dense limit,
    its consensus beyond (``sparse``); the values are those of the reference, whichever."""
    if kind == "sparse":
        monkeypatch.setattr(sys.modules["pgas.comm.exchange"], "DENSE_MAX", 1)
    shape = (8 * CHUNK + 5,)
    rng = pg.random.default_rng(11)
    with pg.comm_diagnostics() as d:
        A = rng.random(shape, dist=pg.Cyclic())
    exact(A, reference(11, 0, shape))
    nchunks = -(-shape[0] // CHUNK)
    dealt = P > 2                                    # at 2 locales each draws its own chunks
    rounds = -(-(-(-nchunks // P)) // pg.random.ROUND) if dealt else 0
    # the new array's agreement and the choice between drawing and dealing (none at one locale),
    # and beyond the dense limit a consensus per round
    want = (2 if P > 1 else 0) + (rounds if kind == "sparse" else 0)
    collective_verdict(d.collectives == want, f"{d.collectives} collectives, want {want} ({rounds} rounds)")
    collective_verdict(d.barriers == 1, f"{d.barriers} barriers")
    collective_verdict(not dealt or d.messages == P * (P - 1) * rounds, f"{d.messages} messages in {rounds} rounds")
