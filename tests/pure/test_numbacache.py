"""numba's on-disk cache under two processes saving different signatures of one function
at once (:mod:`pgas.numbacache`).

Without the lock, the interleaving forced here (A reads the index, B reads it, A writes
its index, B writes its index and its data, A writes its data) leaves the index mapping
B's key to A's data: the wrong machine code for every later process (a fused kernel
compiled for a contiguous operand ran on a strided one: a silent wrong answer at 2
locales).  With :func:`pgas.numbacache.install` each save is one critical section, so
every key loads its own data whatever the timing."""

import multiprocessing as mp
import time

import pytest

numba_caching = pytest.importorskip("numba.core.caching")


def _saver(folder, key, delays, start, locked):
    """Save ``key -> "data of key"`` with sleeps after reading the index and before writing
    the data (``delays``), after waiting for ``start``."""
    from numba.core import caching

    from pgas import numbacache
    if locked:
        numbacache.install()
    cls = caching.IndexDataCacheFile
    load, save_data = cls._load_index, cls._save_data

    def slow_load(self):
        got = load(self)
        time.sleep(delays[0])
        return got

    def slow_data(self, name, data):
        time.sleep(delays[1])
        save_data(self, name, data)
    cls._load_index, cls._save_data = slow_load, slow_data
    start.wait()
    cls(folder, "kernel", ("stamp", 1)).save(key, f"data of {key}")


def _race(folder, locked):
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    # A: reads at 0, writes its index at 0.4 and its data at 1.4; B: starts at 0.2 (after
    # A's read), reads, writes its index at 0.6 (after A's) and its data at once.
    a = ctx.Process(target=_saver, args=(folder, "A", (0.4, 1.0), start, locked))
    a.start()
    start_b = ctx.Event()
    b = ctx.Process(target=_saver, args=(folder, "B", (0.4, 0.0), start_b, locked))
    b.start()
    time.sleep(2.0)                           # both processes imported numba
    start.set()
    time.sleep(0.2)
    start_b.set()
    for p in (a, b):
        p.join(60)
        assert p.exitcode == 0
    f = numba_caching.IndexDataCacheFile(folder, "kernel", ("stamp", 1))
    return {k: f.load(k) for k in ("A", "B")}


def test_concurrent_saves_keep_each_signature_with_its_own_code(tmp_path):
    got = _race(str(tmp_path), locked=True)
    assert got == {"A": "data of A", "B": "data of B"}, got


def test_no_lock_no_save(tmp_path, monkeypatch):
    """Where no lock can be taken nothing is saved (the next process compiles again)
    rather than saving unlocked."""
    from pgas import numbacache
    numbacache.install()
    monkeypatch.setattr(numbacache, "_locked", _refused)
    f = numba_caching.IndexDataCacheFile(str(tmp_path), "kernel", ("stamp", 1))
    f.save("K", "data of K")
    assert f.load("K") is None
    monkeypatch.undo()
    f.save("K", "data of K")
    assert f.load("K") == "data of K"


class _refused:
    def __init__(self, path):
        pass

    def __enter__(self):
        return False

    def __exit__(self, *exc):
        return False
