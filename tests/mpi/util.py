"""Assertions for multi-locale tests whose verdict every locale agrees on.

Each locale checks what it can see; the verdict is then agreed collectively,
so either every locale passes or every locale raises the same
``AssertionError`` (naming the failing locales and the first one's reason),
and no locale goes on alone into the next collective.
"""

from __future__ import annotations

import contextlib
from typing import Callable

import numpy as np
from hypothesis import strategies as st

import pgas as pg
from pgas import comm
from pgas.layout import grids


def collective_verdict(ok: bool, msg: str | Callable[[], str] = "") -> None:
    """Collective: raise ``AssertionError`` on every locale if ``ok`` is false on any.
    ``msg`` (a string, or a function making one, called only on failure) says why."""
    __tracebackhide__ = True
    mine = None if ok else (msg() if callable(msg) else str(msg))
    if comm.allreduce(np.int32(0 if ok else 1), "sum") == 0:
        return
    reasons = comm.allgather(mine)
    bad = [r for r, m in enumerate(reasons) if m is not None]
    raise AssertionError(f"failed on locale{'s' if len(bad) > 1 else ''} {', '.join(map(str, bad))}; "
                         f"locale {bad[0]}: {reasons[bad[0]]}")


def same_as_numpy(got, want, what: str) -> None:
    """Collective: ``got`` (a DistArray, lazy view or expression, or a scalar) equals NumPy's
    ``want`` in type, shape, dtype and values (NaNs equal), on every locale alike."""
    __tracebackhide__ = True
    got = got if hasattr(got, "_storage") or not hasattr(got, "eval") else got.eval()
    got = got.to_numpy() if hasattr(got, "to_numpy") else got
    ok = (type(np.asarray(got)) is type(np.asarray(want)) and np.shape(got) == np.shape(want)
          and np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want, equal_nan=True))
    collective_verdict(ok, lambda: f"{what}: got {got!r}, NumPy {want!r}")


def raises_alike(err, call, what: str) -> None:
    """Collective: ``call()`` raises NumPy's ``err`` on every locale alike."""
    __tracebackhide__ = True
    try:
        call()
    except Exception as e:                  # noqa: BLE001
        collective_verdict(isinstance(e, err), lambda e=e: f"{what}: raised {type(e).__name__}: {e}, NumPy {err.__name__}")
        return
    collective_verdict(False, f"{what}: ran, NumPy raises {err.__name__}")


def raised_everywhere(fn, kind=pg.CollectiveMismatch) -> str:
    """Collective: ``fn()`` must raise ``kind`` on every locale, with the same message;
    returns the message."""
    try:
        fn()
        got = None
    except kind as e:
        got = str(e)
    texts = comm.allgather(got)
    collective_verdict(all(t is not None for t in texts), f"{kind.__name__} not raised everywhere: {texts}")
    collective_verdict(all(t == texts[0] for t in texts), f"different messages: {texts}")
    return got


def assert_matches(A, expected, rtol: float = 1e-7, atol: float = 0.0, check_dtype: bool = True) -> None:
    """Collective: ``A`` (a DistArray) equals the NumPy array ``expected``, checked by
    every locale on the elements it owns (so storage placement is checked too).

    Floating and complex values are compared with ``rtol``/``atol`` (NaNs equal),
    others exactly.  Raises ``AssertionError`` on every locale alike, naming the
    first differing global index and both values."""
    __tracebackhide__ = True
    expected = np.asarray(expected)
    if tuple(A.shape) != expected.shape:
        collective_verdict(False, f"shape {tuple(A.shape)} != expected {expected.shape}")
    if check_dtype and A.dtype != expected.dtype:
        collective_verdict(False, f"dtype {A.dtype} != expected {expected.dtype}")
    me = comm.here()
    want = expected[np.ix_(*A.layout.owned(me))]
    got = np.asarray(A.local)
    if got.shape != want.shape:
        collective_verdict(False, f"local part has shape {got.shape}, owns {want.shape} elements")
    if np.issubdtype(got.dtype, np.inexact) or np.issubdtype(want.dtype, np.inexact):
        same = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        same = got == want
    ok = bool(np.all(same))

    def why() -> str:
        bad = np.argwhere(~same)
        loc = tuple(int(k) for k in bad[0])
        g = A.layout.global_index(me, loc)
        return (f"{len(bad)} of {same.size} owned elements differ; first at global index {g}: "
                f"got {got[loc]}, expected {want[loc]}")

    collective_verdict(ok, why)


def points(dom):
    """Every point of a domain tuple (a range, or a function of the outer variables giving
    one, per variable), by nested Python loops."""
    out = [()]
    for item in dom:
        new = []
        for p in out:
            r = item(*p[:item.__code__.co_argcount]) if callable(item) else item
            new += [p + (x,) for x in (range(r) if isinstance(r, int) else r)]
        out = new
    return out


@contextlib.contextmanager
def unchecked():
    """Collective-call checking off inside (restored after): for counting messages, since
    under PGAS_CHECK=1 each ghost-cell read is also fetched, to verify it."""
    from pgas.exec import settings

    was = settings.get("check")
    pg.config(check=False)
    try:
        yield
    finally:
        pg.config(check=was)


@st.composite
def a_dist(draw, ndim: int, max_block: int = 5):
    """A hypothesis strategy: Block, Cyclic or BlockCyclic (block 1..``max_block``) over
    the default grid or any grid of this job's locales for ``ndim`` dimensions."""
    grid = draw(st.sampled_from([None] + grids(pg.num_locales, ndim)))
    kind = draw(st.sampled_from(["block", "cyclic", "bc"]))
    if kind == "block":
        return pg.Block(grid)
    if kind == "cyclic":
        return pg.Cyclic(grid)
    return pg.BlockCyclic(draw(st.integers(1, max_block)), grid)


def check_kernel(kernel, dist, steps: int) -> None:
    """Run a benchmark kernel (:mod:`pgas.tools.bench.kernels`) at its tiny size for ``steps``
    steps on ``dist`` and compare every result array with its NumPy reference."""
    state = kernel.setup(kernel.tiny, dist)
    for t in range(steps):
        kernel.step(state, t)
    want = kernel.reference(kernel.tiny, steps)
    for key in kernel.result:
        assert_matches(state[key], want[key], rtol=1e-12)


def equal_exactly(got, want) -> bool:
    """``got`` and ``want`` have the same shape, dtype and values (NaNs equal)."""
    got, want = np.asarray(got), np.asarray(want)
    return (got.shape == want.shape and got.dtype == want.dtype
            and np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"))


def check_exactly(got, want, what="") -> None:
    """Collective: a DistArray or a replicated value equals NumPy's exactly (a float array's
    signs of zero too)."""
    if isinstance(got, pg.DistArray):
        assert_matches(got, want)
        if got.dtype.kind == "f":
            g = got.to_numpy()
            collective_verdict(np.array_equal(np.signbit(g), np.signbit(np.asarray(want))),
                               f"{what}: signs of zero differ: {g} vs {want}")
        return
    collective_verdict(equal_exactly(got, want), f"{what}: got {got!r}, expected {want!r}")


def mixed_dists(nd):
    """Block, Cyclic and BlockCyclic(2) over the default grid, then one kind per other grid of
    ``nd`` dimensions (rotating)."""
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]
    for i, g in enumerate(grids(pg.num_locales, nd)):
        out.append([pg.Block(g), pg.Cyclic(g), pg.BlockCyclic(3, g)][i % 3])
    return out


#: Key dtypes of the sorting and reduction property tests.
KEY_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.int8, np.bool_]


def keys_of(draw_list, dtype):
    """Drawn integers as keys of ``dtype`` (parity for bool)."""
    a = np.array(draw_list, dtype=np.int64)
    if dtype == np.bool_:
        return (a % 2).astype(bool)
    return a.astype(dtype)
