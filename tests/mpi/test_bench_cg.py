"""NAS CG: the distributed mat-vec equals the serial one; class S verifies against the official zeta."""

import json

import numpy as np
from util import collective_verdict

import pgas as pg
from pgas import comm
from pgas.tools.bench import cg
from pgas.tools.bench.nas_makea import CLASSES, csr_matvec, makea, verified


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


def test_local_matvec_sums_rows_in_npb_order():
    rng = np.random.default_rng(5)
    rowstr = np.concatenate([[0], np.cumsum(rng.integers(0, 9, 40))]).astype(np.int64)
    pos = rng.integers(0, 30, rowstr[-1]).astype(np.int64)
    a, p = rng.standard_normal(rowstr[-1]), rng.standard_normal(30)
    want = np.zeros(40)
    for i in range(40):
        s = 0.0
        for k in range(rowstr[i], rowstr[i + 1]):
            s = s + a[k] * p[pos[k]]
        want[i] = s
    got = cg.local_matvec(rowstr, pos, a, p)
    compiled = cg._compiled[0] is not None
    collective_verdict(not compiled or np.array_equal(got, want), "compiled row sums differ from NPB's order")
    collective_verdict(np.allclose(got, csr_matvec(rowstr, pos, a, p), rtol=1e-13, atol=1e-13), "matvec differs")
    pg.config(fuse=False)
    try:
        collective_verdict(np.array_equal(cg.local_matvec(rowstr, pos, a, p), csr_matvec(rowstr, pos, a, p)),
                           "fuse=False does not take the NumPy path")
    finally:
        pg.config()


def test_dots_equal_separate_dots():
    rng = np.random.default_rng(comm.here())
    u, v, w = rng.standard_normal((3, 50))
    got = cg.DistCSR.dots((u, v), (v, w), (w, w))
    want = [cg.DistCSR.dot(u, v), cg.DistCSR.dot(v, w), cg.DistCSR.dot(w, w)]
    collective_verdict(got == want, f"{got} != {want}")


def _nas_loop_and_steps(fuse):
    """(z, d) of NAS's loop (matvec / dot as in NAS's text) and of :meth:`DistCSR.cg_steps`."""
    from pgas.tools.bench.nas_makea import _cg_steps
    cls = CLASSES["S"]
    A = cg.DistCSR(*makea(cls), cls.na)
    x = np.random.default_rng(11).random(cls.na)[A.vec.layout.owned(pg.here)[0]]
    pg.config(fuse=fuse)
    try:
        return _cg_steps(A.matvec, A.dot, x, 25), A.cg_steps(x)
    finally:
        pg.config()


def test_cg_steps_numpy_path_equals_nas_loop_bit_for_bit():
    # Same operations on the same values: the halo of p made from the gathered r equals p's gathered halo.
    (z0, d0), (z1, d1) = _nas_loop_and_steps(False)
    collective_verdict(np.array_equal(z0, z1) and np.array_equal(d0, d1), "cg_steps differ from NAS's loop")


def test_cg_steps_compiled_path_matches_nas_loop():
    (z0, d0), (z1, d1) = _nas_loop_and_steps("auto")
    collective_verdict(np.allclose(z0, z1, rtol=1e-12, atol=1e-14) and np.allclose(d0, d1, rtol=1e-8, atol=1e-12),
                       f"cg_steps differ: {np.abs(z0 - z1).max()} {np.abs(d0 - d1).max()}")


def test_kernels_sum_in_npb_order():
    rng = np.random.default_rng(7)
    rowstr = np.concatenate([[0], np.cumsum(rng.integers(0, 9, 40))]).astype(np.int64)
    pos = rng.integers(0, 30, rowstr[-1]).astype(np.int64)
    a, ph, p, z, r = rng.standard_normal(rowstr[-1]), rng.standard_normal(30), *rng.standard_normal((3, 40))
    k = cg.kernels()
    q = np.empty(40)
    got = k.matvec_dot(rowstr, pos, a, ph, p, q)
    want_q, want = cg.local_matvec(rowstr, pos, a, ph), 0.0
    for i in range(40):
        want = want + p[i] * want_q[i]
    compiled = k is not cg._NumPyKernels
    collective_verdict(np.array_equal(q, want_q) and (got == want or not compiled), "matvec_dot")
    z0, r0 = z.copy(), r.copy()
    rr = k.update_zr(0.3, p, q, z, r)
    want_z, want_r = z0 + 0.3 * p, r0 - 0.3 * q
    want = 0.0
    for v in want_r:
        want = want + v * v
    collective_verdict(np.array_equal(z, want_z) and np.array_equal(r, want_r)
                       and (rr == want or not compiled) and abs(rr - want_r @ want_r) < 1e-12, "update_zr")
    p0 = p.copy()
    k.axpy(0.7, r, p)
    collective_verdict(np.array_equal(p, r + 0.7 * p0), "axpy")
    collective_verdict(abs(k.dot(p, r) - p @ r) < 1e-12, "dot")


def test_iallreduce_equals_allreduce():
    v = np.arange(3.0) + comm.here()
    pending = comm.iallreduce(v, "sum")
    s = comm.iallreduce(float(comm.here()), "max")
    collective_verdict(np.array_equal(pending.wait(), comm.allreduce(v, "sum")), "array iallreduce")
    collective_verdict(s.wait() == pg.num_locales - 1 and s.wait() == pg.num_locales - 1, "scalar iallreduce")


def test_step_and_unsigned_indices_equal_the_separate_kernels():
    # step = axpy(r, p), axpy(rh, ph), matvec_dot; unsigned index copies give the same bits
    rng = np.random.default_rng(13)
    rowstr = np.concatenate([[0], np.cumsum(rng.integers(0, 9, 41))]).astype(np.int64)
    pos = rng.integers(0, 30, rowstr[-1]).astype(np.int64)
    a, rh, ph = rng.standard_normal(rowstr[-1]), *rng.standard_normal((2, 30))
    r, p = rng.standard_normal((2, 41))
    for fuse in (False, "auto"):
        pg.config(fuse=fuse)
        try:
            k = cg.kernels()
            p1, ph1, q1, p2, ph2, q2 = p.copy(), ph.copy(), np.empty(41), p.copy(), ph.copy(), np.empty(41)
            k.axpy(0.3, r, p1)
            k.axpy(0.3, rh, ph1)
            s1 = k.matvec_dot(rowstr, pos, a, ph1, p1, q1)
            rs, ps = (rowstr, pos) if k is cg._NumPyKernels else (rowstr.astype(np.uint64), pos.astype(np.uint32))
            s2 = k.step(0.3, r, p2, rh, ph2, rs, ps, a, q2)
            same = all(np.array_equal(u, v) for u, v in ((p1, p2), (ph1, ph2), (q1, q2))) and s1 == s2
            collective_verdict(same, f"step differs from its parts (fuse={fuse})")
            collective_verdict(np.array_equal(cg.local_matvec(rs, ps, a, ph), cg.local_matvec(rowstr, pos, a, ph)),
                               "unsigned indices change the mat-vec")
        finally:
            pg.config()


def test_cg_verification_uses_the_official_zeta():
    """NPB 3.x cg.c zeta_verify_value per class; a 1e-9 relative error fails."""
    official = {"S": 8.5971775078648, "W": 10.362595087124, "A": 17.130235054029, "B": 22.712745482631}
    params = {"S": (1400, 7, 15, 10.0), "W": (7000, 8, 15, 12.0), "A": (14000, 11, 15, 20.0), "B": (75000, 13, 75, 60.0)}
    for name, z in official.items():
        c = CLASSES[name]
        assert (c.na, c.nonzer, c.niter, c.shift) == params[name] and c.zeta == z
        assert verified(c, z) and not verified(c, z * (1 + 1e-9)) and not verified(c, float("nan"))
