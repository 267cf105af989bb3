"""The locale's worker threads (pgas.exec.workers): blocks, thresholds, errors and
floating-point flags of the pool's calls."""

import platform
import threading

import pytest

from pgas.exec import fperr, workers


@pytest.fixture
def threads(monkeypatch):
    def set_count(n):
        monkeypatch.setattr(workers, "count", lambda: n)
    return set_count


def test_bounds_cover_the_range_in_near_equal_blocks():
    for n in (0, 1, 7, 100, 101):
        for k in (1, 2, 3, 8):
            b = workers.bounds(n, k)
            assert len(b) == k and b[0][0] == 0 and b[-1][1] == n
            assert all(x[1] == y[0] for x, y in zip(b, b[1:]))
            assert max(s - a for a, s in b) - min(s - a for a, s in b) <= 1


def test_ways_split_only_large_tasks(threads):
    threads(1)
    assert workers.ways(1 << 30, 1 << 15) == 1
    threads(4)
    assert workers.ways(workers.SPLIT_MIN - 1, 1000) == 1
    assert workers.ways(workers.SPLIT_MIN, 1000) == 2            # blocks of at least SPLIT_MIN / 2
    assert workers.ways(1 << 30, 1000) == 4
    assert workers.ways(1 << 30, 3) == 3                          # at least a row each
    threads(16)
    assert workers.ways(1 << 30, 1000) == workers.MAX_BLOCKS      # past it, the hand-overs cost more


def test_run_returns_in_order_and_uses_the_pool(threads):
    threads(3)
    names = workers.run([(lambda i: (i, threading.current_thread().name), (i,)) for i in range(5)])
    assert [i for i, _ in names] == list(range(5))
    assert names[0][1] == threading.current_thread().name
    assert all(n.startswith("pgas-worker") for _, n in names[1:])


def test_an_error_in_a_block_is_raised_after_every_block_ended(threads):
    threads(2)
    done = []

    def block(i):
        if i == 1:
            raise ValueError("block 1")
        done.append(i)
    with pytest.raises(ValueError, match="block 1"):
        workers.run([(block, (i,)) for i in range(4)])
    assert sorted(done) == [0, 2, 3]


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86 flag bits")
def test_a_pool_threads_floating_point_flags_reach_the_caller(threads):
    threads(2)
    clear, test, bits = fperr._fenv()
    clear(sum(bits.values()))
    workers.run([(lambda: None, ()), (lambda: fperr.raise_flags(bits["divide"]), ())])
    assert test(sum(bits.values())) == bits["divide"]
    clear(sum(bits.values()))


def test_a_split_float_sum_is_numpys_for_every_float_width():
    import numpy as np

    from pgas.array.reductions import threaded
    rng = np.random.default_rng(1)
    for dtype in (np.float16, np.float32, np.float64):
        x = rng.standard_normal(1 << 19).astype(dtype)
        for ways in (2, 4, 8):
            got = threaded.local(np.sum, "sum", x, {}, ways)
            assert got == np.sum(x) and got.dtype == np.sum(x).dtype, (dtype, ways)
