"""The irregular suite (test_irregular.py and the benchmarks' verification tests) again with the
compiled counting passes (pgas.array.counting) at every size
(``pg.config(fuse=True)``, kept by ``pg.config()``
through ``$PGAS_FUSE``): the results must be the same."""

import pytest

pytest.importorskip("numba")

from test_irregular import *                       # noqa: E402,F401,F403  the tests, collected again here
from test_bench_cg import test_cg_verification_uses_the_official_zeta  # noqa: E402,F401
from test_bench_isx import test_isx_verification_catches_lost_keys_in_a_later_trial  # noqa: E402,F401
from test_bench_randomaccess import (  # noqa: E402,F401
    test_randomaccess_verification_catches_a_broken_aggregated_update,
    test_randomaccess_verification_catches_a_broken_update_one)


pytestmark = pytest.mark.usefixtures("fused")          # conftest: pg.config(fuse=True) for each test
