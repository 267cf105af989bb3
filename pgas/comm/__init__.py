"""The only layer that talks to MPI (through mpi4py); it knows nothing of arrays."""

from . import check
from .check import CollectiveMismatch
from .diagnostics import CommDiagnostics, comm_diagnostics
from .runtime import (
                      LocaleError,
                      abort,
                      agree,
                      allgather,
                      allgatherv,
                      allreduce,
                      allreduce_with,
                      alltoallv,
                      barrier,
                      bcast,
                      bcast_value,
                      expect,
                      here,
                      library_version,
                      mpi4py_version,
                      notify,
                      num_locales,
                      report_and_abort,
                      statement_done,
                      await_target,
                      wait,
)
from .runtime import barrier_count, expect_values, notify_values          # h11: ghost reads
from .window import Window, allocate
from .exchange import KnownExchange, exchange, exchange_known  # h12: point-to-point exchanges
from .runtime import PendingReduction, iallreduce  # h12c: a reduction overlapped with other messages
from .runtime import arrived  # h12s: interior computed while the peers are not ready
from .runtime import mark_one_sided, on_barrier  # s25: one-sided writes agreed at pg.barrier()

__all__ = ["check", "CollectiveMismatch", "CommDiagnostics", "comm_diagnostics", "LocaleError", "abort", "agree", "allgather", "allreduce", "allreduce_with",
           "allgatherv", "alltoallv", "barrier", "bcast", "bcast_value", "here", "library_version", "mpi4py_version", "num_locales", "report_and_abort", "Window", "allocate",
           "notify", "expect", "wait", "statement_done", "await_target",
           "barrier_count", "notify_values", "expect_values", "exchange", "exchange_known", "KnownExchange",
           "PendingReduction", "iallreduce", "arrived", "mark_one_sided", "on_barrier"]
