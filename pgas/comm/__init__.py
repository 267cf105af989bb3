"""The only layer that talks to MPI (through mpi4py); it knows nothing of arrays."""

from . import check
from .check import CollectiveMismatch
from .diagnostics import CommDiagnostics, comm_diagnostics
from .exchange import KnownExchange, exchange, exchange_known  # point-to-point exchanges
from .agreement import LocaleError, agree
from .collectives import (
    PendingReduction,  # a reduction overlapped with other messages
    allgather,
    allgatherv,
    allreduce,
    allreduce_with,
    alltoallv,
    alltoallv_buffer,
    barrier,
    barrier_count,  # ghost reads
    bcast,
    bcast_value,
    exscan,
    fence,  # a lock's memory ordering
    iallreduce,
    mark_one_sided,  # one-sided writes agreed at pg.barrier()
    on_barrier,
)
from .epochs import await_target, statement_done
from .notify import expect, expect_values, notify, notify_values
from .process import abort, here, library_version, mpi4py_version, num_locales, report_and_abort
from .waits import (
    arrived,  # interior computed while the peers are not ready
    free_handles,  # finalizers: MPI handles freed on MPI's thread
    poll,
    wait,
)
from .window import Window, allocate

__all__ = ["check", "CollectiveMismatch", "CommDiagnostics", "comm_diagnostics", "LocaleError", "abort", "agree", "allgather", "allreduce", "allreduce_with",
           "allgatherv", "alltoallv", "alltoallv_buffer", "barrier", "bcast", "bcast_value", "here", "library_version", "mpi4py_version", "num_locales", "report_and_abort", "Window", "allocate",
           "notify", "expect", "wait", "statement_done", "await_target",
           "barrier_count", "notify_values", "expect_values", "exchange", "exchange_known", "KnownExchange",
           "PendingReduction", "iallreduce", "exscan", "arrived", "mark_one_sided", "on_barrier", "fence", "poll",
           "free_handles"]
