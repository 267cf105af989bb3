"""The copy kernel (pgas.exec.copies) moving data between views of distributed
arrays, against NumPy."""

import numpy as np
import pytest

import pgas as pg


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.float32, np.float64, np.complex64, np.complex128])
def test_copy_kernel_views_against_numpy(dtype):
    """The move kernel (exec/copies.py) directly, under fuse=True: reversed, strided,
    transposed, stride-0, misaligned (all views offset by one byte) and constant moves, in
    list order (a later move reads what an earlier one wrote), against NumPy's assignments."""
    from pgas.exec import copies, settings

    was = settings.get("fuse")
    pg.config(fuse=True)
    try:
        item = np.dtype(dtype).itemsize
        for offset in (0, 1):
            raw = np.zeros(offset + 200 * item, np.uint8)
            mem = raw[offset:offset + 200 * item].view(dtype)
            ref = mem.copy()
            rng = np.random.default_rng(7)
            init = (rng.integers(0, 5, 200) + (1j if np.dtype(dtype).kind == "c" else 0)).astype(dtype)

            def pairs(m):
                a, b = m[:60].reshape(6, 10), m[60:120].reshape(6, 10)
                c = m[120:180].reshape(3, 4, 5)
                return [(a[::-1, 1::2], b[:, :5]), (b.T[2:5], a.T[::-2][:3]), (c[:, ::-1, ::2], dtype(1)),
                        (m[180:190][::-1], np.broadcast_to(m[195:196], (10,))), (a[0], b[1]),
                        (b[2, ::3], a[0, :4]), (c.transpose(2, 0, 1)[1][1:], c[0, :, :3].T[:2])]   # no move overlaps itself
            mem[...] = init
            ref[...] = init
            mv = copies.Copies(pairs(mem))
            for _ in range(3):
                mv()
                for d, s in pairs(ref):
                    d[...] = s
                assert np.array_equal(mem, ref), (offset, np.flatnonzero(mem != ref))
                ref += dtype(1)
                mem += dtype(1)
            assert mv.kernel, "the kernel did not take the moves"
    finally:
        pg.config(fuse=was)
