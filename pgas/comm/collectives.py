"""Collective operations on the library's communicator, each waited for by the wait
policy: barriers (and ``pg.barrier()``'s agreement of one-sided writes), reductions,
scans, gathers, broadcasts and all-to-alls."""

from __future__ import annotations

import pickle

import numpy as np

from . import counters, runtime, trace
from .counters import record, record_barrier, record_collective, record_each
from .epochs import _epochs
from .process import here, mpi, mpi_type, num_locales
from .runtime import _windows, comm
from .waits import poll, yielding_wait


def barrier(windows=None, agree: bool = False, words: np.ndarray | None = None):
    """Wait for every locale; writes made before it (local stores and one-sided puts) are
    visible after it.  ``windows`` limits that to the given windows (a statement passes
    its arrays'), so the cost does not grow with the number of live arrays.  ``agree``
    (``pg.barrier``): the wait is a reduction of the windows this locale wrote one-sided
    since the last such barrier (:func:`mark_one_sided`), and the :func:`on_barrier`
    hooks learn which windows any locale wrote; ``words`` (uint64, with ``agree``) ride in
    the same reduction, or'ed bitwise over locales: the reduced words are returned."""
    global _one_sided
    t0 = trace.on and trace.now()
    wins = [w for w in _windows if w.in_use] if windows is None else windows
    for w in wins:
        w.complete()
        w.sync()
    record_barrier()
    if agree:
        head = 0 if words is None else len(words)
        mine = np.zeros(head + _WORDS, dtype=np.uint64)
        if head:
            mine[:head] = words
        if _one_sided:
            mine[head:] = np.frombuffer(_one_sided.to_bytes(8 * _WORDS, "little"), dtype=np.uint64)
            _one_sided = 0
        if t0:
            trace.waiting = "barrier (pg.barrier)"
        got = bitwise_or(mine, counted=False)  # a barrier, carrying the bits
    else:
        if t0:
            trace.waiting = "barrier"
        yielding_wait([comm().Ibarrier()])
    _epochs.all_seen = _epochs.mine            # every locale has completed what this one has
    for w in wins:
        w.sync()
    if t0:
        trace.waiting = None
        trace.add("mpi", "MPI_Barrier" if not agree else "MPI_Iallreduce (pg.barrier)", t0)
    if not agree:
        return None
    bits = int.from_bytes(got[head:].tobytes(), "little")
    if bits:
        for hook in _barrier_hooks:
            hook(bits)
    return got[:head]


def bitwise_or(words: np.ndarray, counted: bool = True) -> np.ndarray:
    """Collective: the bitwise or over locales of a uint64 array (one allreduce, waited
    for by the wait policy), on a communicator of its own: agreements of collective calls
    (:mod:`pgas.comm.check`) and ``pg.barrier()`` pair only with each other, never with a
    collective made inside another call that some locale made instead.  ``counted``: a
    collective for :mod:`pgas.comm.counters` (``pg.barrier()``'s counts as its barrier)."""
    if counted:
        record_collective()
    if not _agree_type:
        _agree_type.extend((mpi_type(np.dtype(np.uint64)), mpi().BOR))
    t0 = trace.on and trace.now()
    got = np.empty_like(words)
    comm()
    req = runtime._acomm.Iallreduce([words, _agree_type[0]], [got, _agree_type[0]], op=_agree_type[1])
    if t0:
        trace.waiting = trace.waiting or "agreement"
    if not req.Test():
        yielding_wait([req])
    if t0:
        if trace.waiting == "agreement":
            trace.waiting = None
        trace.add("mpi", "MPI_Allreduce (agreement of collective calls)", t0)
    return got


#: Windows this locale wrote one-sided since the last ``pg.barrier()``: bit ``id % BITS``.
_one_sided = 0
_WORDS = 4
#: How many words of one-sided bits ``pg.barrier()``'s reduction carries after its callers' words.
BARRIER_WORDS = _WORDS
BITS = 64 * _WORDS
_barrier_hooks: list = []
_agree_type: list = []                      # (MPI datatype, BOR), set at the first use


def mark_one_sided(window_id: int) -> None:
    """Record a one-sided write to window ``window_id`` (see :func:`barrier`)."""
    global _one_sided
    _one_sided |= 1 << (window_id % BITS)


def on_barrier(hook) -> None:
    """Register ``hook(bits)``, called at a ``pg.barrier()`` after which some locale's
    one-sided writes became visible: bit ``id % BITS`` of ``bits`` is set for every window
    some locale wrote one-sided (two windows may share a bit: a hook must accept extra
    ones).  Every locale calls it alike."""
    _barrier_hooks.append(hook)


_barriers = 0


def barrier_count() -> int:
    """How many ``pg.barrier()`` calls this locale has made (the same on every locale
    between two of them): one-sided writes become visible at one, so ghost cells filled
    before it are not current after it."""
    return _barriers


def count_user_barrier() -> None:
    """Count one ``pg.barrier()`` (see :func:`barrier_count`)."""
    global _barriers
    _barriers += 1


def allgather(obj) -> list:
    """Every locale's ``obj`` (pickled), in locale order, on every locale."""
    t0 = trace.on and trace.now()
    data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
    got = [pickle.loads(part) for part in allgatherv(data)]
    if t0:
        trace.add("mpi", "MPI_Allgather", t0)
    return got


def waited(request):
    """Wait for a started nonblocking collective ``request`` by the wait policy
    (:func:`yielding_wait`, which calls the :func:`on_stall` hooks when it goes on): what
    a blocking MPI call would do, except that a locale left waiting in it while the others
    are elsewhere is found."""
    record_collective()
    _wait_one(request)


def _wait_one(request) -> None:
    """Wait for ``request`` by the wait policy (counted as nothing: part of a caller's collective)."""
    if not request.Test():
        yielding_wait([request])


def allreduce(value, op: str = "sum", data: bool = False):
    """Reduce a scalar or NumPy array over all locales; ``op`` in sum, prod, min, max, land, lor, band, bor.
    ``data``: the value is data the caller computes with (counts, partial results), not a
    flag that synchronises: its messages are counted in the diagnostics (:func:`record_tree`)."""
    t0 = trace.on and trace.now()
    mop = _mpi_op(op)
    arr = np.array(value, ndmin=1)
    out = np.empty_like(arr)
    t = mpi_type(arr.dtype)
    _collective_wait(comm().Iallreduce([arr, t], [out, t], op=mop), "allreduce", f"MPI_Allreduce ({op})", t0)
    if data:
        record_tree(arr.nbytes)
    return out if _ndim(value) else out[0]


def record_tree(nbytes: int, down: bool = True) -> None:
    """Count a reduction of ``nbytes`` per locale as the messages of a binomial tree rooted at
    locale 0 would be: this locale's value to its parent and, with ``down`` (every locale
    gets the result), the result to each child: ``2 (P - 1)`` messages over all locales
    (``P - 1`` without ``down``), at most ``log2 P`` per locale.  What MPI really sends
    depends on its algorithm; this is the fewest messages a reduction can take, so a
    reduction of data (sums of counts, partial results) shows in the diagnostics as data
    moved, not as nothing.  Reductions that synchronise (flags, agreements of collective
    calls and errors: :func:`bitwise_or`, :func:`pgas.comm.agreement.agree`) are not counted."""
    if not counters.enabled():
        return
    me, P = here(), num_locales()
    if me:
        record(me & (me - 1), nbytes)
    if down:
        low = me & -me if me else 1 << max(P - 1, 0).bit_length()
        k = 1
        while k < low and me + k < P:
            record(me + k, nbytes)
            k <<= 1


def _collective_wait(req, waiting: str, label: str, t0) -> None:
    """Wait for collective ``req`` by the wait policy; under ``pg.trace`` (``t0`` its start) the
    wait is named ``waiting`` and the call recorded as an MPI span ``label``."""
    record_collective()
    if t0:
        trace.waiting = waiting
    if not req.Test():
        yielding_wait([req])
    if t0:
        trace.waiting = None
        trace.add("mpi", label, t0)


def exscan(value: np.ndarray) -> np.ndarray:
    """The sum of the arrays ``value`` (one shape and dtype on every locale) of the locales
    before this one, in locale order (zeros on locale 0): one ``MPI_Exscan``, log P steps,
    where an allgather would hand every locale all P arrays."""
    t0 = trace.on and trace.now()
    arr = np.ascontiguousarray(value)
    out = np.zeros_like(arr)
    t = mpi_type(arr.dtype)
    _collective_wait(comm().Iexscan([arr, t], [out, t], op=_mpi_op("sum")), "exscan", "MPI_Exscan (sum)", t0)
    record_tree(arr.nbytes)
    if here() == 0:
        out[...] = 0                    # MPI leaves locale 0's result undefined
    return out


def _ndim(value) -> int:
    """``np.ndim(value)``, without its cost for a Python number (the usual reduced value)."""
    return 0 if type(value) in (float, int, bool, complex) else np.ndim(value)


_OPS: dict = {}


def _mpi_op(op: str):
    """The MPI reduction operation named ``op`` (KeyError if none is)."""
    if not _OPS:
        MPI = mpi()
        _OPS.update(sum=MPI.SUM, prod=MPI.PROD, min=MPI.MIN, max=MPI.MAX,
                    land=MPI.LAND, lor=MPI.LOR, band=MPI.BAND, bor=MPI.BOR)
    return _OPS[op]


class PendingReduction:
    """A started :func:`iallreduce`; :meth:`wait` gives its value (what :func:`allreduce` returns)."""

    def __init__(self, value, op: str, data: bool = False) -> None:
        mop = _mpi_op(op)
        self._in = np.array(value, ndmin=1)
        self._scalar = not _ndim(value)
        self._out = np.empty_like(self._in)
        t = mpi_type(self._in.dtype)
        record_collective()
        if data:
            record_tree(self._in.nbytes)
        self._req = comm().Iallreduce([self._in, t], [self._out, t], op=mop)

    def wait(self):
        """Wait for the reduction (collective: every locale started it) and return its value."""
        if self._req is not None:
            traced = trace.on
            if traced:
                trace.waiting = "allreduce"
            if not self._req.Test():
                yielding_wait([self._req])
            if traced:
                trace.waiting = None
            self._req = None
        return self._out[0] if self._scalar else self._out


def iallreduce(value, op: str = "sum", data: bool = False) -> PendingReduction:
    """Start :func:`allreduce` of ``value`` and return at once; ``.wait()`` on the result
    gives the reduced value.  Other communication (a gather, an exchange) may run
    before the wait: MPI progresses the reduction while this locale waits for those,
    so the two latencies overlap.  Every locale must start the same reductions in
    the same order (as for any collective).  ``data``: as for :func:`allreduce`."""
    return PendingReduction(value, op, data)


def agreement_allgather(obj) -> list:
    """Every locale's ``obj`` (pickled, small), on the communicator of agreements: what
    locales that found their calls differ tell each other (:mod:`pgas.comm.check`)."""
    comm()
    record_collective()
    return runtime._acomm.allgather(obj)


def fence() -> None:
    """Complete every one-sided operation this locale started on any live window and order
    its local stores and loads with the other locales' one-sided access (``MPI_Win_flush_all``
    and ``MPI_Win_sync`` on each): what a lock does on acquiring and before releasing, so
    that the writes of one holder are seen by the next."""
    for w in [w for w in _windows if w.in_use]:
        w.flush()
        w.sync()


#: The tag of :func:`allreduce_with`'s messages (its tree's pairs are fixed, and MPI keeps the
#: order of one sender's messages of one tag, so successive reductions do not mix).
_TREE_TAG = 73


def allreduce_with(value, combine):
    """Every locale's ``value`` combined in locale order by ``combine(a, b)`` (associative;
    pickled objects, for small values): a binomial tree to locale 0 of O(log P) steps, where
    an allgather would hand every locale all P values, then the result broadcast.  Each
    message is waited for by the wait policy, as every other collective here, so a locale
    left waiting in it while the others are elsewhere is found by the stall probe (MPI's
    reduction with a Python operation is a blocking call that nothing can interrupt)."""
    record_collective()
    c, me, P = comm(), here(), num_locales()
    if P == 1:
        return value
    t0 = trace.on and trace.now()
    acc, d = value, 1
    while d < P:
        if me & d:                       # holds locales [me, me + d): hand them to me - d
            _send_pickled(c, acc, me - d)
            break
        if me + d < P:                   # holds [me, me + d); me + d holds what follows
            acc = combine(acc, _recv_pickled(c, me + d))
        d <<= 1
    out, nbytes = _bcast(acc if me == 0 else None, 0, _wait_one)
    record_to_all(0, nbytes)
    if t0:
        trace.add("mpi", "reduction tree", t0)
    return out


def _send_pickled(c, obj, dest: int) -> None:
    data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
    record(dest, data.nbytes)
    _wait_one(c.Isend([data, mpi().BYTE], dest, _TREE_TAG))


def _recv_pickled(c, source: int):
    MPI = mpi()
    status = MPI.Status()
    poll(lambda: c.Iprobe(source, _TREE_TAG, status))
    buf = np.empty(status.Get_count(MPI.BYTE), dtype=np.uint8)
    c.Recv([buf, MPI.BYTE], source, _TREE_TAG)
    return pickle.loads(buf)


def bcast_value(value, dtype, root: int):
    """One element of ``dtype`` from ``root`` on every locale (counted as one message per receiver)."""
    buf = np.array([value if here() == root else 0], dtype=dtype)
    waited(comm().Ibcast([buf, mpi_type(buf.dtype)], root=root))
    if here() == root:
        for r in range(num_locales()):
            if r != root:
                record(r, buf.itemsize)
    return buf[0]


def allgatherv(local: np.ndarray) -> list[np.ndarray]:
    """Every locale's 1-D array, in locale order, on every locale (one message per locale
    pair where the sender's array is not empty)."""
    local = np.ascontiguousarray(local).reshape(-1)
    counts = np.empty(num_locales(), dtype=np.int64)
    waited(comm().Iallgather(np.array([local.size], dtype=np.int64), counts))
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
    out = np.empty(int(counts.sum()), dtype=local.dtype)
    mt = mpi_type(local.dtype)
    waited(comm().Iallgatherv([local, mt], [out, (counts, displs), mt]))
    me = here()
    if local.size and counters.enabled():
        sent = np.ones(num_locales(), dtype=bool)
        sent[me] = False
        record_each(np.full(len(sent), local.nbytes, dtype=np.int64), sent)
    return [out[d:d + c] for d, c in zip(displs, counts)]


def bcast(obj, root: int):
    """``obj`` from ``root`` on every locale (pickled; for small values)."""
    return _bcast(obj, root, waited)[0]


def _bcast(obj, root: int, wait) -> tuple:
    """``(root's obj, its pickled size)`` on every locale: its size, then its bytes, each
    broadcast waited for by ``wait`` (:func:`waited`, or :func:`_wait_one` within another
    collective)."""
    c, mine = comm(), here() == root
    data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8) if mine else None
    size = np.array([0 if data is None else data.size], dtype=np.int64)
    wait(c.Ibcast([size, mpi_type(size.dtype)], root=root))
    buf = data if mine else np.empty(int(size[0]), dtype=np.uint8)
    wait(c.Ibcast([buf, mpi().BYTE], root=root))
    return (obj if mine else pickle.loads(buf)), int(size[0])


def alltoallv(send: list[np.ndarray], dtype, rcounts: np.ndarray | None = None) -> list[np.ndarray]:
    """Personalised exchange: ``send[r]`` goes to locale ``r``; returns what each locale sent here.
    One message per non-empty (source, target) pair.  ``rcounts[r]``, the elements locale ``r``
    sends here, when the caller knows them, saves the all-to-all of counts."""
    dtype = np.dtype(dtype)
    counts = np.fromiter((len(s) for s in send), dtype=np.int64, count=len(send))
    sbuf = np.concatenate([np.ascontiguousarray(s, dtype=dtype) for s in send]) if len(send) else np.empty(0, dtype)
    rbuf, rcounts = alltoallv_buffer(sbuf, counts, rcounts)
    rdis = np.cumsum(rcounts) - rcounts
    return [rbuf[a:a + c] for a, c in zip(rdis.tolist(), rcounts.tolist())]


def alltoallv_buffer(sbuf: np.ndarray, counts: np.ndarray, rcounts: np.ndarray | None = None,
                     out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`alltoallv` of one contiguous 1-D buffer holding ``counts[r]`` elements for each
    locale ``r`` in turn; returns what arrived, in locale order, and the elements from each
    locale (``rcounts``, computed by an all-to-all of counts unless given).  ``out``: a
    contiguous 1-D array of ``sbuf``'s dtype and of exactly the elements that arrive,
    received into straight (no copy after; the caller's storage), and returned."""
    me = here()
    counts = np.asarray(counts, dtype=np.int64)
    if rcounts is None:
        rcounts = np.empty_like(counts)
        waited(comm().Ialltoall(counts, rcounts))
    else:
        rcounts = np.asarray(rcounts, dtype=np.int64)
    sbuf = np.ascontiguousarray(sbuf)
    total = int(rcounts.sum())
    if out is None:
        rbuf = np.empty(total, dtype=sbuf.dtype)
    elif out.dtype != sbuf.dtype or out.ndim != 1 or out.size != total or not out.flags.c_contiguous:
        raise ValueError(f"alltoallv_buffer: out must be a contiguous 1-D {sbuf.dtype} array of {total} elements, "
                         f"got {out.dtype} of shape {out.shape}")
    else:
        rbuf = out
    mt = mpi_type(sbuf.dtype)
    waited(comm().Ialltoallv([sbuf, (counts, np.cumsum(counts) - counts), mt],
                             [rbuf, (rcounts, np.cumsum(rcounts) - rcounts), mt]))
    sent = counts.copy()
    sent[me] = 0
    record_each(sent * sbuf.dtype.itemsize, sent > 0)
    return rbuf, rcounts


def record_to_all(root: int, nbytes: int) -> None:
    """Count a broadcast of ``nbytes`` from ``root`` as one message to every other locale."""
    if here() == root:
        for r in range(num_locales()):
            if r != root:
                record(r, nbytes)
