"""The forall suite (test_forall.py) again with every task that can be
fused run by a compiled kernel (``pg.config(fuse=True)``, kept by ``pg.config()``
through ``$PGAS_FUSE``): the results must be the same as NumPy's."""

import pytest

pytest.importorskip("numba")

from test_forall import *                          # noqa: E402,F401,F403
from test_forall import mode                       # noqa: E402,F401  its autouse fixture (aggregated, baseline)


pytestmark = pytest.mark.usefixtures("fused")          # conftest: pg.config(fuse=True) for each test
