"""The benchmark kernels (the paper's Figure 11) against their NumPy references."""

import pytest

import pgas as pg
from pgas.tools.bench.kernels import KERNELS
from util import check_kernel


@pytest.fixture(autouse=True)
def _defaults():
    yield
    pg.config()


@pytest.mark.parametrize("aggregate", [True, False], ids=["aggregated", "baseline"])
@pytest.mark.parametrize("dist", [pg.Cyclic(), pg.BlockCyclic(4), pg.BlockCyclic(16), pg.Block()], ids=repr)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_matches_numpy(name, dist, aggregate):
    pg.config(aggregate=aggregate)
    check_kernel(KERNELS[name], dist, 3)
