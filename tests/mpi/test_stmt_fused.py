"""The statement suite (test_stmt.py) again with every task that can be
fused run by a compiled kernel (``pg.config(fuse=True)``, kept by ``pg.config()``
through ``$PGAS_FUSE``): the results must be the same as NumPy's."""

import pytest

pytest.importorskip("numba")

import pgas as pg                                  # noqa: E402
from test_stmt import *                            # noqa: E402,F401,F403  the tests, collected again here


@pytest.fixture(autouse=True)
def _fused(monkeypatch):
    monkeypatch.setenv("PGAS_FUSE", "1")           # pg.config() (the tests' resets) keeps fuse=True
    pg.config()
    yield
    monkeypatch.undo()
    pg.config()
