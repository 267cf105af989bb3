"""The irregular suite (test_irregular.py, test_irregular_review.py) again with the
compiled counting passes (pgas.array.counting) at every size
(``pg.config(fuse=True)``, kept by ``pg.config()``
through ``$PGAS_FUSE``): the results must be the same."""

import pytest

pytest.importorskip("numba")

import pgas as pg                                  # noqa: E402
from test_irregular import *                       # noqa: E402,F401,F403  the tests, collected again here
from test_irregular_review import *                # noqa: E402,F401,F403


@pytest.fixture(autouse=True)
def _fused(monkeypatch):
    monkeypatch.setenv("PGAS_FUSE", "1")           # pg.config() (the tests' resets) keeps fuse=True
    pg.config()
    yield
    monkeypatch.undo()
    pg.config()
