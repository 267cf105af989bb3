"""All sixteen Figure 11 kernels: the registry, each kernel against its NumPy
reference at odd sizes on Block, Cyclic and Block-Cyclic (test_kernels.py runs
the tiny sizes in both modes), and the hand-written MPI versions."""

import numpy as np
import pytest

import pgas as pg
from pgas.tools.bench.handmpi import HAND
from pgas.tools.bench.kernels import KERNELS, ORIGINAL
from util import assert_matches, collective_verdict

SIXTEEN = ["2mm", "fw", "trmm", "correlation", "covariance", "cholesky", "lu", "mvt", "syrk", "fdtd-2d",
           "fdtd-apml", "jacobi1D", "jacobi2D", "stencil9", "pascal", "folding"]


@pytest.fixture(autouse=True)
def _defaults():
    yield
    pg.config()


def test_registry_has_the_sixteen():
    assert sorted(KERNELS) == sorted(SIXTEEN)
    assert set(ORIGINAL) <= set(KERNELS)
    for k in KERNELS.values():
        assert k.chunk and all(c > 0 for c in k.chunk)
        assert k.kind in ("iterative", "restart")
        assert k.tiny <= k.bench_size <= k.paper


NEW = ["2mm", "fw", "trmm", "correlation", "covariance", "cholesky", "lu", "syrk", "fdtd-apml"]


@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)], ids=repr)
@pytest.mark.parametrize("name", NEW)
def test_new_kernels_other_size(name, dist):
    k = KERNELS[name]
    n = k.tiny + 3
    state = k.setup(n, dist)
    for t in range(2):
        k.step(state, t)
    want = k.reference(n, 2)
    for key in k.result:
        assert_matches(state[key], want[key], rtol=1e-11, atol=1e-12)


def test_triangular_kernels_use_owner_cost():
    pg.config(owner="cost")
    for name in ("syrk", "trmm", "covariance"):
        k = KERNELS[name]
        state = k.setup(k.tiny, pg.Cyclic())
        k.step(state, 0)
        want = k.reference(k.tiny, 1)
        for key in k.result:
            assert_matches(state[key], want[key], rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_written_mpi_matches_reference(name):
    k = KERNELS[name]
    n = max(k.tiny, pg.num_locales)
    steps = 3
    got, sec, msgs = HAND[name](n, steps)
    want = k.reference(n, steps)
    ok = all(np.allclose(got[key], want[key], rtol=1e-12) for key in k.result)
    collective_verdict(ok and sec >= 0 and msgs >= 0, f"{name}: hand-written result differs")


def test_hand_written_mpi_refuses_too_few_rows():
    if pg.num_locales == 1:
        pytest.skip("every n >= 1 works on one locale")
    with pytest.raises(ValueError, match="n >= locales"):
        HAND["jacobi2D"](pg.num_locales - 1, 1)
