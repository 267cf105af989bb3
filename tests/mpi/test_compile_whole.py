"""Whole-array arithmetic inside a compiled step (``B[...] = A * 2.0 + C``, ``np.sqrt(A)``,
``(A + C)[1:-1]``, ``np.add(A, C, out=B)``): recorded as the statements its views would
make, replayed bit-identical to the function run plainly (and to NumPy), operands of
different distributions and reads of the target included; an expression used any other
way, or after a statement wrote what it reads, makes the step run plainly with a named
reason."""

import numpy as np
import pytest
from util import collective_verdict, raises_alike

import pgas as pg
from pgas.comm import check

N = 10


@pytest.fixture(autouse=True)
def _defaults():
    yield
    pg.config()


def _arrays(dists):
    rng = np.random.default_rng(7)
    data = [rng.random((N, N)) - 0.25 for _ in dists]
    return data, [pg.from_numpy(d, dist=dist) for d, dist in zip(data, dists)]


def _same(got, want, what: str) -> None:
    g = [a.to_numpy() if hasattr(a, "to_numpy") else a for a in got]
    collective_verdict(all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in zip(g, want)),
                       lambda: f"{what}: the compiled step and the plain run differ")


def _whole(A, B, C, s):
    B[...] = A * 2.0 + C
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[:-2, 1:-1] + B[2:, 1:-1])
    B[1:-1] = (A + C)[1:-1]
    A[1:] = (A * s + C)[:-1]              # reads the rows of the target it writes
    C[:] = -A
    B[...] = np.sqrt(abs(A)) + 1
    A[...] = A + A.T                      # a transposed read of the target
    np.add(A, C, out=B)
    B -= 0.5 * C                          # same_kind, as NumPy's in-place operators
    C[...] = A * s


@pytest.mark.parametrize("dists", [(pg.Block(),) * 3, (pg.Block(), pg.Cyclic(), pg.BlockCyclic(3))],
                         ids=["same", "mixed"])
@pytest.mark.parametrize("protocol", ["auto", "packed"])
def test_whole_array_arithmetic_replays_bit_identical(dists, protocol):
    pg.config(protocol=protocol)
    data, got = _arrays(dists)
    _, want = _arrays(dists)
    step = pg.compile(_whole)
    for k in range(3):
        s = 0.5 + 0.25 * k
        step(*got, s)
        _whole(*want, s)
        _whole(*data, s)                  # NumPy
    _same(got, [w.to_numpy() for w in want], "plain run")
    _same(got, data, "NumPy")
    text = pg.explain(step)
    assert step.stats["records"] == 1 and step.stats["replays"] == 2 and step.stats["plain"] == 0, text
    assert "10 statements recorded" in text and "add(multiply(array, 2.0), array)" in text, text
    if protocol == "auto" and not check.enabled:
        assert step.stats["fast"] == 2 * 10 and step.stats["slow"] == 0, text


def _scale_in_place(A, s):
    A *= s


def test_in_place_cast_that_numpy_refuses_raises_alike():
    A = pg.from_numpy(np.arange(N * N, dtype=np.int32).reshape(N, N))
    step = pg.compile(_scale_in_place)
    for _ in range(2):
        raises_alike(TypeError, lambda: step(A, 2.5), "an int array scaled in place by a float")
    raises_alike(TypeError, lambda: _scale_in_place(A, 2.5), "the same, run plainly")
    step(A, 3)                            # another signature: an int casts
    step(A, 2)
    collective_verdict(np.array_equal(A.to_numpy(), np.arange(N * N, dtype=np.int32).reshape(N, N) * 6),
                       "an int array scaled in place twice")


def _reduced(A, B, C, s):
    B[...] = (A * 2.0).sum()


def _printed(A, B, C, s):
    print(A + C)


def _broadcast_indexed(A, B, C, s):
    B[1:] = (A + C[0])[1:]


def _held_across_a_write(A, B, C, s):
    t = A * 3.0
    A[...] = C
    B[...] = t


def _view_expression_held(A, B, C, s):
    t = A[1:] + s
    A[...] = C
    B[1:] = t


@pytest.mark.parametrize("fn, reason", [
    (_reduced, "(multiply(array, 2.0)) other than as the value of an assignment (.sum)"),
    (_printed, "(add(array, array)) other than as the value of an assignment (printed)"),
    (_broadcast_indexed, "other than as the value of an assignment (indexed with slice(1, None, None)"),
    (_held_across_a_write, "(multiply(array, 3.0)) after a statement wrote"),
    (_view_expression_held, "(add(array[view (9, 10)], s)) after a statement wrote")])
def test_whole_array_expression_used_otherwise_runs_plainly(fn, reason, capsys):
    data, got = _arrays((pg.Block(),) * 3)
    _, want = _arrays((pg.Block(),) * 3)
    step = pg.compile(fn)
    step(*got, 0.5)                       # the first call: plainly, as the function would run
    fn(*want, 0.5)
    _same(got, [w.to_numpy() for w in want], fn.__name__)
    text = pg.explain(step)
    assert "runs its function plainly" in text and reason in text, text
    assert step.stats["plain"] == 1 and step.stats["replays"] == 0
    capsys.readouterr()


def _where_default(A, B, C, s):
    np.add(A, C, out=B, where=True)       # NumPy's default where=, spelt out
    np.multiply(B[1:], s, out=A[1:], where=True)


def test_explicit_default_where_is_recorded():
    """``where=True`` is every ufunc's default: the step records it as the call without it
    (it ran plainly, naming where= as unsupported, though the function runs)."""
    data, got = _arrays((pg.Block(),) * 3)
    step = pg.compile(_where_default)
    for k in range(3):
        step(*got, 0.5 + k)
        _where_default(*data, 0.5 + k)
    _same(got, data, "where=True")
    assert step.stats["plain"] == 0 and step.stats["replays"] == 2, pg.explain(step)
