"""Python function calls per replayed statement of a compiled step (``pg.compile``): a count,
which does not depend on the machine's load, of what a replay costs in Python, on every locale.

jacobi-2d's step (2 statements) and fdtd-2d's (4) are compiled and called ``--warmup``
times alone (no plain run of the same statements before them, which would make their
kernels first), then ``--calls`` times under ``cProfile``; the calls per statement are the
profile's function calls over the calls and statements, leaving out the polling of waits
(whose count depends on how long a locale waits for its peers) unless ``--with-polls``.
Each locale counts its own; the report gives every locale's count and the most of any
(the locale that spends the most sets the step's pace), and the messages of one more call
(``pg.comm_diagnostics``): their total, and the most that one locale sends another.

    pgas run -n 1 benchmarks/replay_calls.py --json calls.json
    pgas run -n 4 benchmarks/replay_calls.py --json calls4.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats

import pgas as pg
from pgas import comm
from pgas.tools.bench.polybench import _dist, fdtd_init, fdtd_step, jacobi_init, jacobi_step

#: Functions of a wait's polling loop (their count depends on the wait, not on the replay).
POLLING = ("sched_yield", "<lambda>", "poll", "Test", "Testall", "Testsome", "sleep")


def calls_per_statement(step, args, statements: int, warmup: int, calls: int, polls: bool) -> float:
    for _ in range(warmup):
        step(*args)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        step(*args)
    prof.disable()
    stats = pstats.Stats(prof).stats
    n = sum(v[1] for f, v in stats.items() if polls or not any(p in f[2] for p in POLLING))
    return n / calls / statements


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=64, help="jacobi's n, fdtd's nx and ny")
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--with-polls", action="store_true", help="count the polling of waits too")
    p.add_argument("--json", default=None, metavar="FILE")
    a = p.parse_args()
    pg.config(protocol="auto")
    A, B = [_dist(G) for G in jacobi_init(a.n)]
    ex, ey, hz = [_dist(G) for G in fdtd_init(a.n, a.n, 2)[:3]]
    res = {}
    for name, fn, args, k in (("jacobi-2d", jacobi_step, (A, B), 2), ("fdtd-2d", fdtd_step, (ex, ey, hz, 0.5), 4)):
        step = pg.compile(fn)
        mine = calls_per_statement(step, args, k, a.warmup, a.calls, a.with_polls)
        per = comm.allgather(mine)
        with pg.comm_diagnostics() as d:
            step(*args)
        res[name] = {"statements": k, "calls_per_statement": max(per), "per_locale": per,
                     "messages_per_step": int(d.messages), "most_messages_per_pair": int(d.matrix.max()),
                     "replays": step.stats["replays"], "fast": step.stats["fast"], "slow": step.stats["slow"]}
    if pg.here == 0:
        print(f"{pg.num_locales} locales, n={a.n}: Python function calls per replayed statement"
              f"{'' if a.with_polls else ' (waits polling aside)'}, most of any locale [each locale's]")
        for name, x in res.items():
            print(f"  {name}: {x['calls_per_statement']:.1f} [{', '.join(f'{c:.1f}' for c in x['per_locale'])}] "
                  f"({x['fast']} statements by compiled forms, {x['slow']} the usual way); messages per step "
                  f"{x['messages_per_step']}, at most {x['most_messages_per_pair']} per locale pair")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"locales": pg.num_locales, "n": a.n, "warmup": a.warmup, "calls": a.calls,
                           "steps": res}, f, indent=1)


if __name__ == "__main__":
    main()
