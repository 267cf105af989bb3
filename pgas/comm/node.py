"""The node a locale runs on: how many locales share it, how many cores they have, and
what follows: how many threads each locale's BLAS / OpenMP pools may run, and how a
locale waits for messages.

Learned once, when the library's communicator is made (the first collective,
:func:`pgas.comm.runtime.comm`): the locales on this node are MPI's shared-memory
split of ``COMM_WORLD`` (``COMM_TYPE_SHARED``), and the node's cores are the union
of the CPU affinities (``os.sched_getaffinity``, else ``os.cpu_count()``) of those
locales, gathered once.  The node is *oversubscribed* when it runs more locales than
those cores.

- Threads per locale: ``max(1, cores // locales)`` (:func:`default_threads`), so 16
  locales on 16 cores run one BLAS thread each instead of 16 (256 threads fighting
  for 16 cores); ``$PGAS_THREADS`` (a positive whole number) overrides it, and
  ``pg.config(threads=N)`` overrides both (applied by :mod:`pgas.exec.threads`).
- Waits (:func:`wait_policy`): ``"yield"`` (poll, giving the core away between polls
  only if another process wants it) while every locale has a core of its own,
  ``"nap"`` (yield, then sleep between polls in point-to-point waits, see
  :data:`pgas.comm.p2p.SPINS`) when oversubscribed; ``$PGAS_WAIT`` = ``spin``
  (poll without yielding), ``yield`` or ``nap`` overrides.

Both variables must read alike on every locale (they are agreed with the planning
settings, :func:`pgas.comm.runtime.agree_on_environment`); a bad value raises the
same ``ValueError`` on every locale at the first collective.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

#: How a locale waits for messages: poll without yielding, poll and yield the core between
#: polls, or yield and then sleep between polls (point-to-point waits).
WAITS = ("spin", "yield", "nap")

#: The environment variables read here, each with how its value reads (stripped and
#: lower-cased, "" when unset); every locale must read them alike.
ENV = {"PGAS_THREADS": lambda v: v.lstrip("+0") or v,
       "PGAS_WAIT": lambda v: v or "auto"}


def default_threads(locales: int, cores: int) -> int:
    """Threads per locale on a node of ``locales`` locales sharing ``cores`` cores:
    the cores shared out evenly, at least one."""
    return max(1, cores // max(1, locales))


def oversubscribed(locales: int, cores: int) -> bool:
    """Whether ``locales`` locales on ``cores`` cores leave some locale without a core of its own."""
    return locales > cores


def wait_policy(locales: int, cores: int) -> str:
    """How a locale waits on a node of ``locales`` locales sharing ``cores`` cores:
    ``"yield"`` while each has a core of its own (a poll then finds its peer's message
    as soon as it lands; the yield returns at once on a core nobody else wants),
    ``"nap"`` when oversubscribed (a napping waiter leaves the run queue to the locales
    that have work)."""
    return "nap" if oversubscribed(locales, cores) else "yield"


def read_threads(raw: str) -> int | None:
    """``$PGAS_THREADS`` (stripped) as a number of threads, None when unset; a value that
    is not a positive whole number raises ``ValueError``."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"pgas: PGAS_THREADS must be a positive whole number (threads per locale), got {raw!r}")
    return n


def read_wait(raw: str) -> str | None:
    """``$PGAS_WAIT`` (stripped) as a wait policy, None when unset or ``auto``; another
    value not in :data:`WAITS` raises ``ValueError``."""
    raw = raw.strip().lower()
    if raw in ("", "auto"):
        return None
    if raw not in WAITS:
        raise ValueError(f"pgas: PGAS_WAIT must be one of {', '.join(WAITS)} (or auto), got {raw!r}")
    return raw


@dataclass(frozen=True)
class Node:
    """What a locale learned about its node at start-up."""

    #: Locales on this node (this one included).
    locales: int
    #: Cores the node's locales may run on, together (the union of their affinities).
    cores: int
    #: Threads per locale by default: ``$PGAS_THREADS``, else :func:`default_threads`.
    threads: int
    #: Where :attr:`threads` comes from: ``"PGAS_THREADS"`` or ``"machine"``.
    threads_from: str
    #: The wait policy in force (one of :data:`WAITS`).
    wait: str
    #: Where :attr:`wait` comes from: ``"PGAS_WAIT"`` or ``"machine"``.
    wait_from: str

    @property
    def oversubscribed(self) -> bool:
        """More locales on the node than cores for them."""
        return oversubscribed(self.locales, self.cores)


def decide(locales: int, cores: int, env=None) -> Node:
    """The node's settings from its ``locales`` and ``cores`` and the environment ``env``
    (``os.environ`` by default); raises ``ValueError`` for a bad ``PGAS_THREADS`` or
    ``PGAS_WAIT``."""
    env = os.environ if env is None else env
    threads = read_threads(env.get("PGAS_THREADS", ""))
    wait = read_wait(env.get("PGAS_WAIT", ""))
    return Node(locales, cores,
                threads if threads is not None else default_threads(locales, cores),
                "PGAS_THREADS" if threads is not None else "machine",
                wait if wait is not None else wait_policy(locales, cores),
                "PGAS_WAIT" if wait is not None else "machine")


def affinity() -> list[int]:
    """The CPUs this process may run on (``range(os.cpu_count())`` where the platform cannot say)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


_node: list = []
_hooks: list = []


def learn(world, MPI) -> Node:
    """Collective over ``world`` (the library's communicator, every locale calls it once):
    split it by node, gather the node's affinities, and decide (:func:`decide`); raises
    the same ``ValueError`` on every locale for a bad variable (they read alike, agreed
    before).  Kept for :func:`current`; the :func:`on_learned` hooks run once
    :func:`pgas.comm.runtime.comm` is made (:func:`run_hooks`)."""
    shared = world.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        every = shared.allgather(affinity())
        locales = shared.Get_size()
    finally:
        shared.Free()
    cores = len(set().union(*map(set, every)))
    node = decide(locales, cores)
    _node[:] = [node]
    return node


def current() -> Node | None:
    """What this locale learned at start-up, or None before the first collective."""
    return _node[0] if _node else None


def info() -> Node:
    """What this locale learned at start-up, making the library's communicator first if
    it is not made yet (collective then: call it on every locale)."""
    if not _node:
        from . import runtime

        runtime.comm()
    return _node[0]


def on_learned(hook) -> None:
    """Register ``hook(node)``, called on every locale once the node is learned (at once,
    if it is already)."""
    _hooks.append(hook)
    if _node:
        hook(_node[0])


def run_hooks() -> None:
    """Call the :func:`on_learned` hooks (by :func:`pgas.comm.runtime.comm`, once)."""
    for hook in _hooks:
        hook(_node[0])
