"""The statement suite (test_stmt.py) again with every task that can be
fused run by a compiled kernel (``pg.config(fuse=True)``, kept by ``pg.config()``
through ``$PGAS_FUSE``): the results must be the same as NumPy's."""

import pytest

pytest.importorskip("numba")

from test_stmt import *                            # noqa: E402,F401,F403  the tests, collected again here


pytestmark = pytest.mark.usefixtures("fused")          # conftest: pg.config(fuse=True) for each test
