"""How a locale waits: the wait policy (spin, yield, nap), polling requests and one-sided
reads, the stall hooks of a wait that goes on, and MPI handles that finalizers free on
MPI's own thread."""

from __future__ import annotations

import os
import threading
import time

from . import node as _nodes
from . import trace
from .process import _mpi_thread, mpi


def wait(requests) -> None:
    """Wait for the requests of :func:`notify` / :func:`expect`."""
    if requests:
        yielding_wait(requests)


def arrived(requests) -> bool:
    """True if every one of ``requests`` (of :func:`notify` / :func:`expect`) has completed
    (a test: never waits)."""
    return not requests or bool(mpi().Request.Testall(requests))


_yield = os.sched_yield if hasattr(os, "sched_yield") else (lambda: None)
#: How waits poll (one of :data:`pgas.comm.node.WAITS`): set from the node when the library's
#: communicator is made (:mod:`pgas.comm.node`); "nap" until then.
_wait = "nap"


def set_wait(policy: str) -> None:
    """Make waits poll by ``policy``: ``"spin"`` (no yield), ``"yield"`` (yield the core
    between polls) or ``"nap"`` (yield, and where a wait asks for it sleep after some polls)."""
    global _wait
    if policy not in _nodes.WAITS:
        raise ValueError(f"wait policy must be one of {_nodes.WAITS}, got {policy!r}")
    _wait = policy


def wait_mode() -> str:
    """The wait policy in force (see :func:`set_wait`)."""
    return _wait


def pause() -> None:
    """Between two polls of a waiting loop: yield the core, unless the policy is to spin."""
    if _wait != "spin":
        _yield()


#: Seconds a wait polls before the :func:`on_stall` hook is called (then again every
#: :data:`STALL_POLLS` polls); ``$PGAS_STALL_SECONDS`` sets it.
STALL = float(os.environ.get("PGAS_STALL_SECONDS", "5") or 5)
STALL_POLLS = 4096
_stall_hook: list = []


def on_stall(hook) -> None:
    """Register ``hook()``, called by a wait that has polled for :data:`STALL` seconds and
    again every :data:`STALL_POLLS` polls while it goes on (it may raise, or end the job)."""
    _stall_hook.append(hook)


def _stalled(since: float | None) -> float:
    """Every :data:`STALL_POLLS` polls of a wait: the time it started polling (set at the
    first call), and the stall hooks called once it has waited :data:`STALL` seconds."""
    now = time.monotonic()
    if since is None:
        return now
    if now - since > STALL:
        for hook in _stall_hook:
            hook()
    return since


def stall_probe(since: float | None) -> float | None:
    """For a waiting loop of its own (an exchange's, which receives as it polls): call every
    :data:`STALL_POLLS` polls with what the last call returned (None at first), as
    :func:`poll` does, so that its wait runs the :func:`on_stall` hooks too."""
    return _stalled(since)


def yielding_wait(requests, spins: int | None = None, nap: float = 5e-5) -> None:
    """Wait for ``requests``, polling as the node's wait policy says (:func:`set_wait`,
    :mod:`pgas.comm.node`).  ``"yield"`` and ``"nap"`` give the core away between polls:
    with more processes than cores (a shared machine) a spinning wait takes the time
    the peers need to get there; on an idle core the yield returns at once.  Under
    ``"nap"`` only, with ``spins``, after that many yielding polls the wait sleeps
    ``nap`` seconds between polls instead (it leaves the run queue; see
    :data:`pgas.comm.p2p.SPINS`).  ``"spin"`` polls without yielding.  A wait that
    goes on for :data:`STALL` seconds calls the :func:`on_stall` hooks."""
    if trace.on:
        _traced_wait(requests, spins, nap)
        return
    testall = mpi().Request.Testall
    poll(lambda: testall(requests), spins, nap)


#: Frees of MPI handles that a finalizer asked for on another thread (:func:`free_handles`).
_deferred: list = []


def free_handles(free) -> None:
    """Call ``free()``, which frees MPI handles (requests, datatypes: local calls, no message),
    from a finalizer (``__del__``, a ``weakref`` callback): now on the thread that initialised
    MPI, else at that thread's next wait (:func:`poll`).  MPI runs at ``MPI_THREAD_SINGLE``
    (``mpi4py.rc.threads`` is off), so no other thread may call it; but a finalizer runs on
    whichever thread the garbage collector runs on, that is any thread that allocates
    (``pgas run``'s progress sampler, a timer), while the main thread may be inside MPI (a
    wait releases the GIL).  An error of ``free()`` is dropped, as in a finalizer (a request
    still active, after a run that raised)."""
    if _mpi_thread[0] is None or threading.get_ident() == _mpi_thread[0]:
        _free_quietly(free)
    else:
        _deferred.append(free)


def free_deferred() -> None:
    """Call the frees :func:`free_handles` deferred (on the thread that initialised MPI)."""
    if threading.get_ident() != _mpi_thread[0]:
        return
    while _deferred:
        _free_quietly(_deferred.pop(0))


def _free_quietly(free) -> None:
    try:
        free()
    except Exception:                   # noqa: BLE001 - a finalizer's free: nothing to report it to
        pass


def poll(ready, spins: int | None = None, nap: float = 5e-5) -> None:
    """Call ``ready()`` (a one-sided read of another locale's memory, a test of requests for
    :func:`yielding_wait`) until it returns true, giving the core away between calls as the
    wait policy says: ``"yield"`` yields, ``"nap"`` yields and,
    after ``spins`` calls, sleeps ``nap`` seconds between them, ``"spin"`` does neither.
    A poll that goes on for :data:`STALL` seconds calls the :func:`on_stall` hooks."""
    if _deferred:
        free_deferred()
    k, since = 0, None
    spins = spins if _wait == "nap" else None
    while not ready():
        k += 1
        if _wait == "spin":
            pass
        elif spins is None or k < spins:
            _yield()
        else:
            time.sleep(nap)
        if not k % STALL_POLLS:
            since = _stalled(since)


def _traced_wait(requests, spins, nap) -> None:
    """:func:`yielding_wait` while tracing: the same polling, by ``Testsome`` so that the span
    names the receives completed last (their sources and tags, :func:`pgas.comm.trace.add_wait`)."""
    MPI = mpi()
    if _deferred:
        free_deferred()
    t0 = trace.now()
    statuses = [MPI.Status() for _ in requests]
    left, last, k, since = len(requests), [], 0, None
    while True:
        done = MPI.Request.Testsome(requests, statuses)
        if done is None:                          # none active left
            break
        if done:
            last = [(statuses[j].Get_source(), statuses[j].Get_tag()) for j in range(len(done))]  # (in completion order)
            left -= len(done)
            if left <= 0:
                break
            continue
        k += 1
        if not k % STALL_POLLS:
            since = _stalled(since)
        if _wait == "spin":
            continue
        if _wait != "nap" or spins is None or k < spins:
            _yield()
        else:
            time.sleep(nap)
    trace.add_wait(t0, [(s, g) for s, g in last if s >= 0 and g >= 0])
