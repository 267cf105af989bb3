"""The cost of ``pg.barrier()``, alone and after a one-sided ``put``.

The barrier is a reduction of the windows each locale wrote one-sided
(``docs/memory-model.md`` rule 7), so that lazy expressions built before it raise
``StaleExpression`` instead of reading the new values.  This times 2000 barriers,
and 2000 (put to one's own element, barrier) pairs, the least of 7 rounds, on
locale 0.  Run the same command from two checkouts (``PYTHONPATH=OTHER``, from a
folder outside both) one after the other to compare them.

    pgas run -n 2 benchmarks/barrier_cost.py
"""

from __future__ import annotations

import time

import pgas as pg


def _least(put: bool, A, reps: int = 2000, rounds: int = 7) -> float:
    best = float("inf")
    for _ in range(rounds):
        pg.barrier()
        t = time.perf_counter()
        for _ in range(reps):
            if put:
                A.put(pg.here, 1.0)
            pg.barrier()
        best = min(best, (time.perf_counter() - t) / reps)
    return best


def main() -> None:
    A = pg.zeros(16 * pg.num_locales)
    alone, after_put = _least(False, A), _least(True, A)
    if pg.here == 0:
        print(f"{pg.num_locales} locales: barrier {alone * 1e6:.1f} us, put + barrier {after_put * 1e6:.1f} us "
              "(least of 7 rounds of 2000)")


if __name__ == "__main__":
    main()
