"""The HPC Challenge RandomAccess stream against a transcription of HPCC's own code."""

import numpy as np
from hypothesis import given, settings, strategies as st

from pgas.tools.bench.hpcc_rng import PERIOD, RandomStream, hpcc_starts_reference, lane_starts, starts, step


def test_step_is_the_hpcc_recurrence():
    a = np.array([1, 1 << 63, (1 << 64) - 1, 0x123456789ABCDEF], dtype=np.uint64)
    want = [((int(v) << 1) & ((1 << 64) - 1)) ^ (7 if int(v) >> 63 else 0) for v in a]
    assert [int(v) for v in step(a)] == want


def test_starts_matches_stepping():
    ran = np.ones(1, dtype=np.uint64)
    seq = [1]
    for _ in range(200):
        ran = step(ran)
        seq.append(int(ran[0]))
    assert [int(v) for v in starts(np.arange(201))] == seq


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.integers(min_value=-PERIOD, max_value=3 * PERIOD))
def test_starts_matches_hpcc_reference(n):
    assert int(starts(np.array([n], dtype=object))[0]) == hpcc_starts_reference(n)


def test_period_and_edges():
    assert hpcc_starts_reference(PERIOD) == 1
    assert int(starts([PERIOD])[0]) == 1 and int(starts([0])[0]) == 1
    assert int(starts([PERIOD + 5])[0]) == int(starts([5])[0])


def serial_stream(first, count):
    out, ran = [], starts([first])
    for _ in range(count):
        ran = step(ran)
        out.append(int(ran[0]))
    return out


def test_stream_lanes_cover_the_locale_substream():
    first, count = 4 * 64 * 3, 4 * 64
    serial = serial_stream(first, count)
    for lanes in (1, 8, 64):
        blocks = np.array(list(RandomStream(first, count, lanes)))      # (count / lanes, lanes)
        assert [int(v) for v in blocks.T.ravel()] == serial          # run k is positions k*len + 1 ...


def test_uneven_stream_gives_each_update_once():
    for first, count, lanes in [(40, 173, 16), (0, 5, 8), (7, 0, 4), (3, 1000, 1024), (11, 33, 32)]:
        blocks = list(RandomStream(first, count, lanes))
        assert all(len(b) <= lanes for b in blocks)
        got = sorted(int(v) for b in blocks for v in b)
        assert got == sorted(serial_stream(first, count)), (first, count, lanes)


@settings(max_examples=15, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2 * PERIOD), st.integers(0, 2 ** 40), st.integers(0, 40))
def test_lane_starts_equal_starts(first, stride, lanes):
    want = starts(np.array([first + j * stride for j in range(lanes)], dtype=object))
    got = lane_starts(first, stride, lanes)
    assert got.dtype == np.uint64 and got.tolist() == want.tolist()
