"""The interior computed while the halo is in flight, on MPICH's network path
(``MPIR_CVAR_NOLOCAL=1``: a get moves data only when it is flushed, as between
nodes, where on shared memory it copies at once): a border element computed
before its halo arrived would read an unfilled buffer and differ from NumPy."""

import os
import subprocess
import sys
import textwrap

import pytest

PGAS = [sys.executable, "-m", "pgas.tools.cli"]

PROG = """
import numpy as np
import pgas as pg
from pgas.tools.bench.polybench import fdtd_init, fdtd_steps, jacobi_init, jacobi_steps
from pgas.exec import interior

bad, P = [], pg.num_locales
before = interior.stats["tasks"]
for mode, fuse in (("in flight", False), ("in flight", True), ("before", True)):
    interior.MODE = mode
    for limit in (None, 256):
        pg.config(fuse=fuse, **({} if limit is None else {"buffer_limit": limit}))
        for dist in (pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)):
            GA, GB = jacobi_init(6 * P + 2)
            A, B = pg.from_numpy(GA, dist=dist), pg.from_numpy(GB, dist=dist)
            jacobi_steps(A, B, 4)
            jacobi_steps(GA, GB, 4)
            if not (np.array_equal(A.to_numpy(), GA) and np.array_equal(B.to_numpy(), GB)):
                bad.append(("jacobi", mode, fuse, limit, repr(dist)))
            init = fdtd_init(5 * P + 1, 9, 4)
            arrays = [pg.from_numpy(G, dist=dist) for G in init[:3]]
            fdtd_steps(*arrays, init[3], 4)
            fdtd_steps(*init, 4)
            if not all(np.array_equal(a.to_numpy(), g) for a, g in zip(arrays, init[:3])):
                bad.append(("fdtd", mode, fuse, limit, repr(dist)))
            X = pg.from_numpy(GA, dist=dist)
            X[1:, :] = X[:-1, :] * 0.5 + X[1:, :]            # reads the old values of the rows it writes
            GA[1:, :] = GA[:-1, :] * 0.5 + GA[1:, :]
            if not np.array_equal(X.to_numpy(), GA):
                bad.append(("shift", mode, fuse, limit, repr(dist)))
        pg.config()
assert not bad, bad
assert interior.stats["tasks"] > before, "the interior was never computed early"
print("ok", pg.here)
"""


@pytest.mark.parametrize("n", [2, 3])
def test_interior_overlap_on_the_network_path(tmp_path, n):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROG))
    env = dict(os.environ, MPIR_CVAR_NOLOCAL="1")
    r = subprocess.run([*PGAS, "run", "-n", str(n), "--timeout", "150", str(path)], capture_output=True,
                       text=True, timeout=200, env=env)
    assert r.returncode == 0 and r.stdout.count("ok") == n, r.stdout + r.stderr
