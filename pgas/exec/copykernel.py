"""The numba kernel of :mod:`pgas.exec.copies` (imported only when numba is wanted)."""

from numba import njit

from .. import numbacache

numbacache.install()                       # before anything here compiles: locales share the cache


@njit(cache=True, nogil=True)
def run_table(mem, table, consts):   # pragma: no cover (compiled)
    """Every move of ``table`` (rows ``[dst, src, n_0..n_D-1, dst strides, src strides]``,
    element units into ``mem``; ``src < 0``: the constant ``consts[-src - 1]``)."""
    D = (table.shape[1] - 2) // 3
    for r in range(table.shape[0]):
        dst = table[r, 0]
        src = table[r, 1]
        inner = table[r, 1 + D]
        di = table[r, 1 + 2 * D]
        si = table[r, 1 + 3 * D]
        outer = 1
        for d in range(D - 1):
            outer *= table[r, 2 + d]
        for o in range(outer):
            q = o
            doff = dst
            soff = src
            for d in range(D - 2, -1, -1):
                n = table[r, 2 + d]
                i = q % n
                q //= n
                doff += i * table[r, 2 + D + d]
                soff += i * table[r, 2 + 2 * D + d]
            if src < 0:
                v = consts[-src - 1]
                for i in range(inner):
                    mem[doff + i * di] = v
            else:
                for i in range(inner):
                    mem[doff + i * di] = mem[soff + i * si]
