"""Checkpoints and saves that a fault interrupts, and the jobs that read them back afterwards.

    prog_checkpoint.py write DIR STEPS [KILL]  checkpoint each step of STEPS (``1,2``) into DIR; with KILL
                                               the last one is interrupted: ``part`` (the last locale is
                                               SIGKILLed once its part of the first array is written) or
                                               ``commit`` (locale 0 is SIGKILLed just before the rename)
    prog_checkpoint.py restore DIR STEP [more] restore the newest checkpoint, check it is STEP's data; with
                                               ``more``, checkpoint STEP + 1 and print DIR's listing
    prog_checkpoint.py save FILE [KILL]        pg.save step 1's data; with KILL (``part``) save step 2's,
                                               the last locale SIGKILLed once its part is written
    prog_checkpoint.py load FILE STEP          pg.load FILE, check it is STEP's data
    prog_checkpoint.py fsize DIR FILE          a checkpoint and a save, then the same again past a file-size
                                               limit set now (inside the job): each locale prints its error
    prog_checkpoint.py refused DIR...          restore each DIR (damaged): each locale prints its error

Every locale prints ``locale K: ...`` lines; a trailing ``--marker=...`` argument is ignored.
"""
import os
import resource
import signal
import sys

import numpy as np

import pgas as pg
import pgas.io.atomic as atomic
import pgas.io.npy as npy

args = [a for a in sys.argv[1:] if not a.startswith("--marker=")]
mode = args[0]
LIMIT = 1 << 20


def data(step: int, big: bool = False) -> dict:
    """Step ``step``'s arrays as NumPy arrays (``big``: 4 MiB per locale, past :data:`LIMIT`)."""
    n = max(2, pg.num_locales) * (1 << 19) if big else 4000
    return {"u": np.arange(n, dtype=np.float64) * 0.5 + step,
            "v": (np.arange(50 * 7, dtype=np.int32).reshape(50, 7) * (step + 1)),
            "w": np.arange(33, dtype=np.complex128) * (1 - 1j) + step}


def arrays(step: int, big: bool = False) -> dict:
    x = data(step, big)
    return {"u": pg.from_numpy(x["u"]), "v": pg.from_numpy(x["v"], dist=pg.Cyclic()),
            "w": pg.from_numpy(x["w"], dist=pg.BlockCyclic(4))}


def say(text: str) -> None:
    """One line on stdout, in one write (so lines of different locales do not interleave)."""
    sys.stdout.flush()
    os.write(1, f"locale {pg.here}: {text}\n".encode())


def check(got: dict, step: int) -> None:
    want = data(step)
    for name, x in want.items():
        if not np.array_equal(got[name].to_numpy(), x):
            raise SystemExit(f"locale {pg.here}: {name} is not step {step}'s")


def kill_after(owner, attr: str, locale: int) -> None:
    """On ``locale``, ``owner.attr`` does its work, then the process is SIGKILLed."""
    if pg.here != locale:
        return
    real = getattr(owner, attr)

    def dies(*a, **k):
        real(*a, **k)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(owner, attr, dies)


def kill_before(owner, attr: str, locale: int) -> None:
    """On ``locale``, calling ``owner.attr`` SIGKILLs the process instead."""
    if pg.here == locale:
        setattr(owner, attr, lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL))


def failed(call) -> str:
    try:
        call()
    except Exception as e:            # noqa: BLE001 - each locale prints what it raised
        return f"{type(e).__name__}: {e}"
    return "no error"


if mode == "write":
    steps = [int(s) for s in args[2].split(",")]
    for s in steps:
        if s == steps[-1] and len(args) > 3:
            if args[3] == "part":
                kill_after(npy, "write_darray", pg.num_locales - 1)
            else:
                kill_before(atomic, "_into_place", 0)
        pg.checkpoint(args[1], step=s, keep=2, meta={"step": s}, **arrays(s))
    say(f"wrote {steps}")
elif mode == "restore":
    ck = pg.restore(args[1])
    step = int(args[2])
    if ck.step != step or ck.meta != {"step": step}:
        raise SystemExit(f"locale {pg.here}: restored step {ck.step}, meta {ck.meta}; want {step}")
    check(ck, step)
    check(pg.restore(args[1], dist=pg.Cyclic()), step)
    say(f"restored step {step} at {pg.num_locales}")
    if len(args) > 3:
        pg.checkpoint(args[1], step=step + 1, keep=2, meta={"step": step + 1}, **arrays(step + 1))
        check(pg.restore(args[1]), step + 1)
        say(f"then {sorted(os.listdir(args[1]))}")
elif mode == "save":
    pg.save(args[1], arrays(1)["v"])
    if len(args) > 2:
        kill_after(npy, "write_darray", pg.num_locales - 1)
        pg.save(args[1], arrays(2)["v"])
    say("saved")
elif mode == "load":
    if not np.array_equal(pg.load(args[1]).to_numpy(), data(int(args[2]))["v"]):
        raise SystemExit(f"locale {pg.here}: {args[1]} is not step {args[2]}'s")
    say(f"loaded step {args[2]}")
elif mode == "fsize":
    directory, path = args[1], args[2]
    pg.checkpoint(directory, step=1, **arrays(1))
    pg.save(path, arrays(1)["v"])
    big = arrays(2, big=True)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)            # writes past the limit fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    say(f"checkpoint: {failed(lambda: pg.checkpoint(directory, step=2, **big))}")
    say(f"save: {failed(lambda: pg.save(path, big['u']))}")
    check(pg.restore(directory), 1)
    if not np.array_equal(pg.load(path).to_numpy(), data(1)["v"]):
        raise SystemExit(f"locale {pg.here}: {path} is not the old file")
    say(f"kept {sorted(os.listdir(directory))} {sorted(os.listdir(os.path.dirname(path)))}")
elif mode == "refused":
    for d in args[1:]:
        say(f"{os.path.basename(d)}: {failed(lambda: pg.restore(d))}")
