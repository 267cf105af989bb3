"""Collective call checking (``pg.config(check=True)``), errors by type on every
locale, scalar access with per-locale indices, and statement errors raised
everywhere.  Each mismatch must raise the same error on EVERY locale (never a
hang); every test catches it on every locale and goes on, so the locales stay
in step."""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

import pgas as pg
from pgas import comm
from pgas.comm.check import _ordinal
from util import assert_matches, collective_verdict, raised_everywhere

FILE = os.path.basename(__file__)
P = comm.num_locales()
several = pytest.mark.skipif(P == 1, reason="a mismatch needs two locales")


def line(marker: str) -> int:
    """The line of this file holding ``# <marker>``."""
    with open(__file__) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# {marker}"):
                return n
    raise LookupError(marker)


def at(marker: str) -> str:
    return f"at {FILE}:{line(marker)}"


def others() -> str:
    """How messages name locales 1..P-1."""
    return "locale 1" if P == 2 else f"locales 1-{P - 1}"


@pytest.fixture
def checking():
    pg.config(check=True)
    try:
        yield
    finally:
        pg.config()


@pytest.fixture
def unchecked():
    pg.config(check=False)
    try:
        yield
    finally:
        pg.config()


def expect(text: str, *parts: str) -> None:
    missing = [p for p in parts if p not in text]
    collective_verdict(not missing, f"{missing} not in {text!r}")


# -- collective mismatches -----------------------------------------------------------
@several
def test_scalar_read_on_one_locale(checking):
    A = pg.zeros((3, 4))

    def job():
        if pg.here == 0:
            print(A[1, 2])  # read-one
        A.sum()  # sum-all

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A[1, 2] {at('read-one')}", f"{others()} called A.sum() {at('sum-all')}")
    assert A.sum() == 0.0                   # in step again


@several
def test_to_numpy_on_one_locale(checking):
    A = pg.ones(5)

    def job():
        if pg.here == 0:
            A.to_numpy()  # to-numpy
        A.sum()  # sum-after

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A.to_numpy() {at('to-numpy')}", f"{others()} called A.sum() {at('sum-after')}")


@several
def test_sum_on_one_locale(checking):
    A = pg.ones(5)

    def job():
        if pg.here == 0:
            A.sum()  # sum-one
        A.to_numpy()  # to-numpy-all

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A.sum() {at('sum-one')}", f"{others()} called A.to_numpy() {at('to-numpy-all')}")


@several
def test_assignment_on_some_locales(checking):
    A = pg.zeros(6)

    def job():
        if pg.here != 0:
            A[:] = 1  # assign-some
        return A.sum()  # sum-total

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A.sum() {at('sum-total')}", f"{others()} called A[:] = 1.0 {at('assign-some')}")
    assert_matches(A, np.zeros(6))


@several
def test_different_scalar_index(checking):
    A = pg.arange(8)

    def job():
        return A[pg.here]  # own-index

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A[0] {at('own-index')}", f"locale 1 called A[1] {at('own-index')}")


@several
def test_different_scalar_index_unchecked(unchecked):
    A = pg.arange(8)

    def job():
        return A[pg.here]  # own-index-unchecked

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A[0] {at('own-index-unchecked')}", "locale 1 called A[1]")
    assert A[3] == 3


@several
def test_scalar_write_different_index(checking):
    A = pg.zeros(8)

    def job():
        A[pg.here] = 5.0  # write-own

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A[0] = ... {at('write-own')}")
    assert_matches(A, np.zeros(8))


@several
def test_different_arrays_same_call(checking):
    A = pg.zeros(4)
    B = pg.zeros(4)

    def job():
        X = A if pg.here == 0 else B
        return X.sum()  # which-array

    text = raised_everywhere(job)
    expect(text, f"locale 0 called X (array #{A._seq}", f"called X (array #{B._seq}", at("which-array"))


@several
def test_statement_differs(checking):
    A = pg.zeros(6)
    B = pg.ones(6)

    def job():
        if pg.here == 0:
            A[1:] = B[:-1] + 1  # stmt-a
        else:
            A[:-1] = B[1:] * 2  # stmt-b

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A[1:6] = B[0:5] + 1 {at('stmt-a')}", f"{others()} called A[0:5] = B[1:6] * 2 {at('stmt-b')}")


@several
def test_inplace_and_constructor(checking):
    A = pg.zeros(4)

    def job():
        nonlocal A
        if pg.here == 0:
            A += 1  # inplace
        else:
            pg.zeros(3)  # construct

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A += 1 {at('inplace')}", f"{others()} called pg.zeros(3, dtype=float64) {at('construct')}")


@several
def test_forall_and_barrier(checking):
    A = pg.zeros(4)

    def job():
        if pg.here == 0:
            pg.forall(range(4), lambda i: A.__setitem__(i, i))  # forall-one
        pg.barrier()  # barrier

    text = raised_everywhere(job)
    expect(text, "locale 0 called pg.forall((range(0, 4)), ", at("forall-one"),
           f"{others()} called pg.barrier() {at('barrier')}")


@several
def test_irregular_ops(checking):
    A = pg.zeros(4)
    idx = np.array([0, 3])

    def job():
        if pg.here == 0:
            A.gather(idx)  # gather
        else:
            A.scatter(idx, 1.0)  # scatter

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A.gather(...) {at('gather')}", f"{others()} called A.scatter(...) {at('scatter')}")


@several
def test_diagnostics_block_on_one_locale(checking):
    A = pg.ones(4)

    def job():
        if pg.here == 0:
            with pg.comm_diagnostics():  # diagnostics
                pass
        A.sum()  # sum-diag

    text = raised_everywhere(job)
    expect(text, f"locale 0 called start of a pg.comm_diagnostics() block {at('diagnostics')}",
           f"{others()} called A.sum() {at('sum-diag')}")


@several
def test_read_against_write_unchecked(unchecked):
    A = pg.zeros(4)

    def job():
        if pg.here == 0:
            return A[1]  # read-unchecked
        A[1] = 2.0  # write-unchecked

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A[1] {at('read-unchecked')}", f"{others()} called A[1] = ... {at('write-unchecked')}")
    assert_matches(A, np.zeros(4))


@several
def test_same_line_other_arguments(checking):
    def job():
        return pg.zeros(4 + pg.here)  # sizes

    text = raised_everywhere(job)
    expect(text, "locale 0 called pg.zeros(4, dtype=float64)", "locale 1 called pg.zeros(5, dtype=float64)")


# -- errors by type on every locale ------------------------------------------------------
class Custom(ValueError):
    pass


class NeedsTwo(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a} {b}")


@pytest.mark.parametrize("make, kind", [
    (lambda: IndexError("index 9 out of range"), IndexError),
    (lambda: OverflowError("too big"), OverflowError),
    (lambda: Custom("custom"), Custom),
    (lambda: NeedsTwo("x", "y"), pg.LocaleError),
    (lambda: FileNotFoundError("nothing here"), pg.LocaleError),
])
def test_agree_raises_the_type_everywhere(make, kind):
    failing = P - 1
    try:
        comm.agree(make() if pg.here == failing else None)
        got = None
    except Exception as e:  # noqa: BLE001 - checked below
        got = e
    said = str(make()) if P == 1 else f"{make()} (on locale {failing})"     # every locale's message names it
    if pg.here == failing:
        ok = type(got) is type(make()) and (str(got) == said or len(make().args) != 1)
    else:
        ok = isinstance(got, kind) and isinstance(got, pg.LocaleError) and got.locale == failing
        if kind is not pg.LocaleError:
            ok = ok and str(got) == said
    collective_verdict(ok, f"{got!r}")


def test_agree_no_error_is_silent():
    comm.agree(None)


# -- scalar access errors on every locale --------------------------------------------------
@pytest.mark.parametrize("check", [False, True, "auto"])
def test_scalar_read_out_of_range_on_one_locale(check):
    pg.config(check=check)
    try:
        A = pg.arange(6)
        bad = P - 1
        for attempt in range(2):               # caught and continued: still in step
            try:
                A[99 if pg.here == bad else 2]
                got = None
            except IndexError as e:
                got = str(e)
            collective_verdict(got is not None and "out of bounds" in got, f"got {got!r}")
        assert A[5] == 5
    finally:
        pg.config()


@pytest.mark.parametrize("check", [False, True, "auto"])
def test_scalar_write_errors_on_one_locale(check):
    pg.config(check=check)
    try:
        A = pg.zeros(6, dtype=np.int32)
        bad = P - 1
        with pytest.raises(IndexError, match="out of bounds"):
            A[(99 if pg.here == bad else 1)] = 3
        with pytest.raises(OverflowError):
            A[1] = 2**40 if pg.here == bad else 3
        with pytest.raises(IndexError, match="too many indices"):
            A[(1, 2) if pg.here == bad else 1] = 3
        A[2] = 7
        assert_matches(A, np.array([0, 0, 7, 0, 0, 0], dtype=np.int32))
    finally:
        pg.config()


# -- statement compute errors on every locale (2 elements: some locales own none) -----------
@pytest.mark.parametrize("check", [False, True, "auto"])
def test_statement_errors_everywhere(check):
    pg.config(check=check)
    try:
        C = pg.zeros(2, dtype=np.int32)
        D = pg.ones(2, dtype=np.int32)
        X = pg.arange(2)
        with pytest.raises(OverflowError):
            C[:] = D[:] + 2**31
        with pytest.raises(OverflowError):
            C[:] = 2**40
        with pytest.raises(ValueError, match="negative integer powers"):
            X ** -1
        with pytest.raises(ValueError, match="negative integer powers"):
            C[:] = D[:] ** -2
        with pytest.raises(ValueError, match="negative integer powers"):
            pg.forall(range(2), lambda i: C.__setitem__(i, D[i] ** -1))
        with pytest.raises(OverflowError):
            pg.forall(range(2), lambda i: C.__setitem__(i, D[i] + 2**31))
        with pytest.raises(OverflowError):
            C += 2**31
        C[:] = D[:] ** 2 + 1
        assert_matches(C, np.array([2, 2], dtype=np.int32))
        assert_matches(X ** 2, np.array([0, 1]))
        assert_matches((D[:] * 1.5).eval(), np.array([1.5, 1.5]))
    finally:
        pg.config()


# -- correct programs are unaffected ----------------------------------------------------------
@pytest.mark.parametrize("check", [False, True, "auto"])
def test_correct_program_same_results(check):
    pg.config(check=check)
    try:
        a = np.arange(12.0).reshape(3, 4)
        A = pg.from_numpy(a, dist=pg.Cyclic())
        B = pg.zeros((3, 4), dist=pg.BlockCyclic(2))
        B[:, 1:] = A[:, :-1] * 2 + 1
        b = np.zeros((3, 4))
        b[:, 1:] = a[:, :-1] * 2 + 1
        assert_matches(B, b)
        A += 1
        a += 1
        assert A.sum() == a.sum() and A.max() == a.max() and A.mean() == a.mean()
        assert A[2, 3] == a[2, 3]
        A[0, 0] = -1.0
        a[0, 0] = -1.0
        np.testing.assert_array_equal(A.to_numpy(), a)
        v = pg.arange(6)
        pg.forall(range(5), lambda i: v.__setitem__(i, v[i + 1] * 2))
        assert_matches(v, np.array([2, 4, 6, 8, 10, 5]))
        w = pg.zeros(6, dtype=np.int64)
        w.update(np.array([1, 1, 4]), 1)
        got = w.gather(np.array([1, 4]))
        collective_verdict(list(got) == [2 * P, P], f"gather {got}")
        pg.barrier()
        assert (A[1:] + A[:-1]).sum() == (a[1:] + a[:-1]).sum()
    finally:
        pg.config()


def test_config_check_setting():
    pg.barrier()                              # the library's communicator is made: folding needs P
    assert pg.config(check=True)["check"] is True
    assert comm.check.enabled
    assert pg.config(check=False)["check"] is False
    assert not comm.check.enabled
    assert pg.config(check="auto")["check"] == "auto"
    assert not comm.check.enabled and comm.check.folding == (P > 1)
    with pytest.raises(ValueError, match="check must be True, False or 'auto'"):
        pg.config(check="yes")
    pg.config()
    env = os.environ.get("PGAS_CHECK", "").strip().lower()
    assert comm.check.enabled == (env not in ("", "auto", "0", "false", "no", "off"))
    assert comm.check.folding == (env in ("", "auto") and P > 1)


# -- the default mode: calls folded, compared at the next call that reaches every locale --------
@several
def test_folded_statement_on_some_locales(folding):
    A = pg.zeros(6, name="A")

    def job():
        if pg.here != 0:
            A[:] = 1  # folded-some
        return A.sum()  # folded-sum

    text = raised_everywhere(job)
    expect(text, f"locale 0 called A.sum() {at('folded-sum')}",
           f"{others()} called a statement writing A {at('folded-some')}", "1st collective call")
    total = A.sum()                         # in step again (A holds what each locale's statement wrote)
    collective_verdict(len(set(comm.allgather(float(total)))) == 1, f"sum {total}")
    # a one-sided read waits until its target has completed the statements this locale has:
    # after the mismatch the counts agree again, so it does not wait for a statement locale 0
    # never ran (it hung here before)
    got = (A.get((0,)), A.get((5,)))         # (locale 0 skipped the statement, the last locale ran it)
    collective_verdict(got == (0.0, 0.0 if P == 1 else 1.0), f"A[0], A[5] read {got}")


@several
def test_folded_scalar_differs(folding):
    A = pg.zeros(6)
    B = pg.ones(6)

    def job():
        B[:] = 1
        A[:] = float(pg.here)  # folded-scalar
        return A.sum()

    text = raised_everywhere(job)
    expect(text, f"called a statement writing A {at('folded-scalar')} with values that differ",
           "2nd collective call")


@several
@pytest.mark.parametrize("case", ["expression", "numpy", "fill", "index", "forall", "ufunc"])
def test_folded_values_differ(folding, case):
    A = pg.zeros(8)
    B = pg.arange(8.0)

    def job():
        if case == "expression":
            A[1:] = B[:-1] * (2 + pg.here)
        elif case == "numpy":
            A[:] = B[:] + np.arange(8.0) * pg.here
        elif case == "fill":
            A[0] = 1.0
            A[2:4] = np.float64(pg.here)
        elif case == "index":
            A[np.array([pg.here])] = 1
        elif case == "forall":
            pg.forall(range(pg.here, 8), lambda i: A.__setitem__(i, B[i]))
        else:
            np.add(A, pg.here, out=A)
        return A.sum()

    text = raised_everywhere(job)
    expect(text, {"forall": "locale 0 called pg.forall((range(0, 8))", "ufunc": "locale 0 called A += 0"}.get(
        case, "values that differ"))


@several
@pytest.mark.parametrize("where", [4320, 4321, 0, 99_999], ids=["sampled", "between", "first", "last"])
@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_folded_numpy_operand_large(folding, where, order):
    """A large NumPy operand that differs in one element anywhere (not only where a sample
    of it would look) raises, contiguous or not."""
    A = pg.zeros((100, 1000))
    v = np.zeros((100, 1000) if order != "strided" else (200, 1000), order="F" if order == "F" else "C")
    v.reshape(-1, order="A")[where] = pg.here + 1 if order != "strided" else 0
    if order == "strided":
        v[2 * (where // 1000), where % 1000] = pg.here + 1
        v = v[::2]

    def job():
        A[:] = v
        return A.sum()

    expect(raised_everywhere(job), "values that differ")


@several
@pytest.mark.parametrize("case", ["sum-barrier", "sum-max", "axis", "dtype", "shape", "dist", "update-op",
                                  "print", "element", "save"])
def test_folded_collectives_differ(folding, case, tmp_path_factory):
    A = pg.arange(12.0).reshape((3, 4)) if case == "axis" else pg.arange(12.0)
    first = pg.here == 0

    def job():
        if case == "sum-barrier":
            if first:
                A.sum()
            pg.barrier()
        elif case == "sum-max":
            A.sum() if first else A.max()
        elif case == "axis":
            A.sum(axis=pg.here % 2)
        elif case == "dtype":
            pg.zeros(8, dtype=np.float64 if first else np.int64)
        elif case == "shape":
            pg.zeros(8 + pg.here)
        elif case == "dist":
            pg.from_numpy(np.arange(8.0), dist=pg.Block() if first else pg.Cyclic())
        elif case == "update-op":
            A.update(np.array([1]), 1.0, op="add" if first else "max")
        elif case == "print":
            if first:
                str(A)
            A.sum()
        elif case == "element":
            A[pg.here]
        else:
            if first:
                A[:] = 2.0
            pg.save(str(tmp_path_factory.getbasetemp() / "folded.npy"), A)

    raised_everywhere(job)
    assert A.sum() == A.sum()               # in step again


@several
@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("case", ["op", "array", "bad-op", "ufunc.at"])
def test_folded_update_differs(folding, kind, case, monkeypatch):
    """An update is only folded, then agreed in its own exchange (no agreement of its own):
    called with another op, on another array or with an op that is no op on one locale, it
    raises the same CollectiveMismatch on every locale, naming the calls, whether the
    exchange messages every locale (dense) or ends by a consensus (sparse, as beyond
    DENSE_MAX locales)."""
    if kind == "sparse":
        monkeypatch.setattr(sys.modules["pgas.comm.exchange"], "DENSE_MAX", 1)
    A = pg.zeros(8, name="A")
    B = pg.zeros(8, name="B")
    first = pg.here == 0

    def job():
        B[:] = 1
        idx = np.array([pg.here, 7 - pg.here])
        if case == "op":
            A.update(idx, 1.0, op="add" if first else "max")  # update-op
        elif case == "array":
            (A if first else B).update(idx, 1.0, op="add")  # update-array
        elif case == "bad-op":
            A.update(idx, 1.0, op="add" if first else "bogus")  # update-bad-op
        else:
            (np.add if first else np.maximum).at(A, idx, 1.0)  # update-ufunc.at
        return A.sum()

    text = raised_everywhere(job)
    shown = "np.add.at(A, ...)" if case == "ufunc.at" else "A.update(..., op='add')"
    expect(text, f"locale 0 called {shown} {at('update-' + case)}", "2nd collective call")
    assert A.sum() == A.sum()               # in step again


@several
@pytest.mark.parametrize("mode", ["auto", True], ids=["folded", "strict"])
@pytest.mark.parametrize("case", ["periodic", "corners", "accumulate", "pshift", "pshift-plan", "sort-axis"])
def test_exchange_arguments_differ(mode, case):
    """A call whose arguments decide which messages it exchanges with its neighbours (a
    ghost update, a shift, an in-place sort along an axis), called with arguments it was
    not called with before and that differ on one locale, raises a CollectiveMismatch
    naming them on every locale (not an MPI error on one and a wait on another), also
    after calls with other arguments.  (A locale repeating earlier arguments where another
    passes new ones is named by the stall probe: tests/faults/test_diverge.py.)"""
    pg.config(check=mode)
    try:
        G = pg.zeros((8, 8), ghosts=1)
        A = pg.arange(64.0).reshape((8, 8))
        first = pg.here == 0
        G.update_ghosts(periodic=(False, True), corners=False)
        pg.pshift(A, [(3, 0)])

        def job():
            if case == "periodic":
                G.update_ghosts(periodic=first)  # exchange-periodic
            elif case == "corners":
                G.update_ghosts(periodic=True, corners=first)  # exchange-corners
            elif case == "accumulate":
                G.accumulate_ghosts(periodic=(first, False))  # exchange-accumulate
            elif case == "pshift":
                pg.pshift(A, [(1 if first else 2, 0)])  # exchange-pshift
            elif case == "pshift-plan":
                pg.pshift_setup(A, [(1, 0 if first else 1)])(A)  # exchange-pshift-plan
            else:
                A.sort(axis=0 if first else 1)  # exchange-sort-axis
            return A.sum()

        text = raised_everywhere(job)
        if case != "pshift-plan":
            expect(text, f"{at('exchange-' + case)} with arguments")
        assert A.sum() == A.sum()            # in step again
    finally:
        pg.config()


@several
def test_folded_agreed_every_period(folding, monkeypatch):
    monkeypatch.setattr(comm.check, "PERIOD", 8)
    A = pg.zeros(4)

    def job():
        for step in range(20):
            A[:] = float(step if pg.here == 0 or step < 5 else -step)  # folded-loop

    text = raised_everywhere(job)              # no reduction in the loop: the period's agreement finds it
    expect(text, f"called a statement writing A {at('folded-loop')} with values that differ", "6th collective call")


@several
def test_folded_correct_loop_no_messages(folding):
    A = pg.zeros((16, 16))
    B = pg.ones((16, 16))
    pg.barrier()
    for _ in range(10):
        A[1:-1, 1:-1] = 0.25 * (B[1:-1, :-2] + B[1:-1, 2:] + B[:-2, 1:-1] + B[2:, 1:-1])
    assert len(comm.check._log) == 10          # folded, not agreed one by one
    assert A.sum() == 14 * 14


def _put(X):
    X[1:] = X[1:] + 1.0  # repeat-helper


@several
def test_folded_repeat_named_where_it_was_made(folding):
    """A replayed statement made from two lines of one function, and from a helper called at
    two stack depths, is named by the line of the call that differs (a repeat's record
    entry is kept per instruction, not per statement).  (Statements without messages: one
    made on some locales only is found at the next agreement; the library's default
    protocol, under which statements are replayed.)"""
    pg.config(check="auto", protocol="auto")
    A = pg.zeros(6)
    B = pg.zeros(6)

    def job(helper: bool):
        for _ in range(3):
            B[1:] = B[1:] * 2.0  # repeat-b
            (lambda: _put(A))()
            _put(A)
        if pg.here != 0:                    # the same statement as the loop's, from another line
            if helper:
                _put(A)
            else:
                B[1:] = B[1:] * 2.0  # repeat-a
        return A.sum()  # repeat-sum

    text = raised_everywhere(lambda: job(False))
    expect(text, f"locale 0 called A.sum() {at('repeat-sum')}", f"{others()} called a statement writing B "
           f"{at('repeat-a')}", "10th collective call")
    text = raised_everywhere(lambda: job(True))
    expect(text, f"locale 0 called A.sum() {at('repeat-sum')}", f"{others()} called a statement writing A "
           f"{at('repeat-helper')}", "10th collective call")


@several
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint64", "complex128", "bool"])
def test_folded_fill_values(folding, dtype):
    """A repeated fill is folded with its value, whatever the dtype: the same values on every
    locale (NaN too, which Python hashes by identity; a value kept from one call to the next,
    or not) are no mismatch, another value in any one call is, the first or a later one.
    (The library's default protocol, under which statements are replayed.)"""
    pg.config(check="auto", protocol="auto")
    A = pg.zeros(6, dtype=dtype)
    zero, one = np.zeros(1, dtype)[0], np.ones(1, dtype)[0]
    nan = np.array(np.nan, dtype)[()] if dtype in ("float64", "float32", "complex128") else one

    def job(values):
        for v in values:
            A[2:] = v  # fill-loop
        return A.sum()

    base = [one, one, nan, nan, zero, one, one]
    job(base)
    for k in (0, 1, 3, 6):                  # locale 0 writes another value in call k + 1
        values = list(base)
        if pg.here == 0:
            values[k] = zero if base[k] is one else one
        text = raised_everywhere(lambda: job(values))
        expect(text, f"called a statement writing A {at('fill-loop')} with values that differ",
               f"the {_ordinal(k + 1)} collective call")


def test_locale_ranges():
    from pgas.comm.check import _locales
    assert _locales([0]) == "locale 0"
    assert _locales([1, 2, 3]) == "locales 1-3"
    assert _locales([0, 2]) == "locales 0, 2"
    assert _locales([0, 1, 3]) == "locales 0-1, 3"
    assert re.fullmatch(r"locales \d.*", _locales([1, 2]))


@pytest.mark.parametrize("check", [False, True, "auto"])
@pytest.mark.parametrize("dtype", [bool, np.int32, np.int64, np.float32, np.float64, np.complex128])
def test_scalar_read_every_dtype(check, dtype):
    pg.config(check=check)
    try:
        a = (np.arange(7) * 3 - 5).astype(dtype)
        if dtype is np.complex128:
            a = a + 1j * np.arange(7)
        A = pg.from_numpy(a, dist=pg.Cyclic())
        got = [A[i] for i in range(7)] + [A[-1]]
        ok = all(type(g) is type(a[i]) and g == a[i] for i, g in enumerate(got[:7])) and got[7] == a[-1]
        collective_verdict(ok, f"read {got}, expected {a}")
        with pg.comm_diagnostics() as d:
            A[6]
        collective_verdict(d.messages == P - 1, f"{d.messages} messages for one read")
    finally:
        pg.config()


@pytest.mark.parametrize("mode", [True, "auto"], ids=["strict", "folded"])
def test_long_double_operands_compared_by_their_values(mode):
    """On x86, ``np.longdouble`` fills 10 of its 16 bytes and leaves the rest uninitialised, so
    the same value's bytes differ between locales: a long double argument (a scalar, a NumPy
    operand, a fill) is compared by the bytes that hold its value, with no spurious mismatch,
    and a value that differs on one locale is still told apart."""
    pg.config(check=mode)
    try:
        g = np.arange(10.0)
        A = pg.from_numpy(g)
        q, qs = np.longdouble(0.3), np.array([0.3, 0.7], np.longdouble)
        one, many = np.quantile(A, q), np.quantile(A, qs)
        collective_verdict(one == np.quantile(g, q) and np.array_equal(many, np.quantile(g, qs)),
                           f"{one!r}, {many!r}")
        B = pg.zeros(10)
        B[2:5] = np.longdouble(1.5)
        B[0] = np.longdouble(2.5)
        assert_matches(B, np.array([2.5, 0, 1.5, 1.5, 1.5, 0, 0, 0, 0, 0]))
        if P > 1:
            raised_everywhere(lambda: np.quantile(A, np.longdouble(0.3) + pg.here))
    finally:
        pg.config()
