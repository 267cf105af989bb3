"""Writes started without a flush keep their data alive until the flush: on the network
path (``MPIR_CVAR_NOLOCAL=1``: MPICH moves even local data through its network module,
as between nodes of a cluster) a put reads its origin buffer only when flushed, so a
temporary freed before then sent garbage: ``A.put_async`` of elements wrote wrong
values with no error.  Shared memory copies at once, which is why this needs its own job."""

import os
import subprocess
import sys
import textwrap

PGAS = [sys.executable, "-m", "pgas.tools.cli"]

PROG = """
import numpy as np
import pgas as pg

n, bad = 64, []
for proto in ["packed", "pipelined", "auto"]:
    pg.config(protocol=proto)
    A = pg.zeros(n, dist=pg.Block())
    if pg.here == 0:
        pending = [A.put_async(n - 1 - k, float(k) + 0.5) for k in range(8)]
        junk = [np.full(64, -1.0) for _ in range(100)]        # reuse freed memory
        for p in pending:
            p.wait()
    pg.barrier()
    want = np.zeros(n)
    want[n - 8:] = np.arange(8)[::-1] + 0.5
    if not np.array_equal(A.to_numpy(), want):
        bad.append(("put_async", proto))
    B = pg.zeros(n, dist=pg.Cyclic())
    B[::-1] = pg.from_numpy(np.arange(n, dtype=np.float32), dist=pg.Block()) * 2
    if not np.array_equal(B.to_numpy(), (np.arange(n) * 2.0)[::-1]):
        bad.append(("statement", proto))
W = pg.zeros(8192, dist=pg.Block())     # 4096 elements on each of the 2 locales
win = W._win                   # the raw window under W's storage
if pg.here == 0:
    for trial in range(20):
        win.put_regions(1, [(0, (2048,), (1,))], np.arange(2048, dtype=np.float32) + trial, flush=False)
        win.put_runs(1, np.array([2048]), np.array([16]), np.arange(32.0)[::2] / 2 + trial)
        junk = [np.full(2048, -1.0) for _ in range(50)]
        win.flush(1)
        got = np.empty(2064)
        win.get(1, 0, got)
        if not np.array_equal(got, np.r_[np.arange(2048), np.arange(16)] + trial):
            bad.append(("window", trial))
            break
pg.barrier()
assert not bad, bad
print("ok", pg.here)
"""


def test_unflushed_writes_on_the_network_path(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROG))
    env = dict(os.environ, MPIR_CVAR_NOLOCAL="1")
    r = subprocess.run([*PGAS, "run", "-n", "2", "--timeout", "90", str(path)], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.count("ok") == 2, r.stdout + r.stderr
