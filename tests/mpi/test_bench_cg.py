"""NAS CG: the distributed mat-vec equals the serial one; class S verifies against the official zeta."""

import json

import numpy as np

import pgas as pg
from pgas import comm
from pgas.bench import cg
from pgas.bench.nas_makea import CLASSES, csr_matvec, makea
from util import collective_verdict


def test_distributed_matvec_matches_serial():
    cls = CLASSES["S"]
    rowstr, colidx, a = makea(cls)
    A = cg.DistCSR(rowstr, colidx, a, cls.na)
    p = np.random.default_rng(3).random(cls.na)
    owned = A.vec.layout.owned(pg.here)[0]
    with pg.comm_diagnostics() as d:
        q = A.matvec(p[owned])
    want = csr_matvec(rowstr, colidx, a, p)[owned]
    collective_verdict(np.allclose(q, want, rtol=1e-14, atol=1e-14), "distributed A @ p differs")
    collective_verdict(d.matrix.max(initial=0) <= 1 and A.nnz == len(a), d.matrix)
    collective_verdict(A.dot(p[owned], p[owned]) == A.dot(p[owned], p[owned]), "dot is not deterministic")
    collective_verdict(abs(A.dot(p[owned], p[owned]) - p @ p) < 1e-10, "dot product differs")


def test_class_s_verifies(tmp_path):
    path = comm.bcast(str(tmp_path / "cg.json"), 0)
    status = cg.main(["--classes", "S", "--out", path])
    collective_verdict(status == 0, f"class S did not verify (status {status})")
    if pg.here == 0:
        r = json.load(open(path))["classes"][0]
        assert r["verified"] and r["relative_error"] <= 1e-10 and r["mops"] > 0
        assert r["matvec_max_messages_per_pair"] <= 1
