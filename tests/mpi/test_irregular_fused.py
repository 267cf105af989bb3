"""The irregular suite (test_irregular.py, test_irregular_review.py) again with the
compiled counting passes (pgas.array.counting) at every size
(``pg.config(fuse=True)``, kept by ``pg.config()``
through ``$PGAS_FUSE``): the results must be the same."""

import pytest

pytest.importorskip("numba")

from test_irregular import *                       # noqa: E402,F401,F403  the tests, collected again here
from test_irregular_review import *                # noqa: E402,F401,F403


pytestmark = pytest.mark.usefixtures("fused")          # conftest: pg.config(fuse=True) for each test
