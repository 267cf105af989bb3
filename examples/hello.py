"""A first pgas program: run it with ``pgas run -n 4 examples/hello.py``.

Every locale runs this same script.  Arrays are created distributed over the
locales; element-wise arithmetic and reductions run where the data lives; a
few reads cross locales, and the communication report counts them.  The
answer is checked against the same computation done with NumPy.
"""

import numpy as np

import pgas as pg

n = 1_000_003                                   # not a multiple of the locale count
x = pg.arange(n, dtype=np.float64, dist=pg.Block())
w = pg.ones(n, dist=pg.Cyclic())                # a different layout: element-wise mixing needs the same one
y = pg.full(n, 0.5, dist=pg.Block())

with pg.comm_diagnostics() as diag:
    z = np.sqrt(x) * y + 1.0                    # computed locally on each locale, no messages
    total = pg.sum(z)                           # one reduction
    ends = [x[0], x[n // 2], x[n - 1]]          # collective scalar reads: the owner sends each value
    far = z.get((pg.here * n // pg.num_locales + n // 3) % n)   # one-sided read, maybe from another locale
    biggest = z.max()

xs = np.arange(n, dtype=np.float64)
zs = np.sqrt(xs) * 0.5 + 1.0
checks = {
    "sum": np.isclose(total, zs.sum(), rtol=1e-12),
    "max": biggest == zs.max(),
    "scalar reads": ends == [xs[0], xs[n // 2], xs[n - 1]],
    "one-sided get": far == zs[(pg.here * n // pg.num_locales + n // 3) % n],
    "to_numpy": np.array_equal(z.to_numpy(), zs),
    "layouts": w.sum() == n,
}
ok = bool(pg.comm.allreduce(np.int32(all(checks.values())), "min"))

if pg.here == 0:
    print(f"pgas on {pg.num_locales} locales: z = sqrt(x) * 0.5 + 1 for x = 0 .. {n - 1}")
    print(f"  sum(z) = {total:.6f}   max(z) = {biggest:.6f}")
    print("  check against NumPy: " + ", ".join(f"{k} {'ok' if v else 'WRONG'}" for k, v in checks.items()))
    print(f"communication: {diag.messages} messages, {diag.bytes} bytes")
    print(diag.report())
if not ok:
    raise SystemExit("hello.py: results differ from NumPy")
