"""The offset of each locale's clock to locale 0's, measured by ping-pong (as NTP does).

A barrier's exit does not line the locales' timelines up: its locales leave it when the
messages of its tree reach them, up to a millisecond apart at 16 locales on one node.
:func:`measure` instead has locale 0 exchange a few round trips with every other locale
in turn, each side stamping its own clock (``time.perf_counter``, what
:mod:`pgas.comm.trace` records): locale 0 stamps ``t_send`` and ``t_recv`` around a round
trip, the other locale ``t_remote`` between them.  The remote stamp was taken at some
moment of ``[t_send, t_recv]`` on locale 0's clock, so the offset ``t_remote - (t_send +
t_recv) / 2`` is wrong by at most half the round trip; the shortest of the round trips
gives the estimate kept.  The offset is that at the measurement: clocks that run at
different rates (other nodes) drift from it over a long block; on one node
``perf_counter`` is the node's monotonic clock, and the offsets measured there are zero
to within their error bounds.

The messages travel on a communicator of their own (a duplicate of the library's, made at
the first measurement), so nothing else pgas sends can match them.  Every locale waits by
the library's polling (:func:`pgas.comm.waits.poll`: it yields the core to the locales
whose turn it is), and locale 0 alone decides how many round trips each locale makes,
telling it in each message: the locales cannot disagree on the count.
"""

from __future__ import annotations

import numpy as np

from . import runtime, trace, waits

#: Round trips locale 0 makes with each other locale; up to :data:`MAX_ROUNDS` while the
#: shortest so far is longer than :data:`GOOD_RTT` seconds (a loaded node).
ROUNDS = 8
MAX_ROUNDS = 32
GOOD_RTT = 100e-6

_PING, _DONE = 1.0, 2.0
_TAG = 1
_comm = None


def _clock_comm():
    """The communicator of the measurements (collective the first time)."""
    global _comm
    if _comm is None:
        _comm = runtime.comm().Dup()
    return _comm


def measure(zero: float) -> tuple[float, float, float]:
    """Collective: this locale's ``(shift, offset, error)``, seconds.  ``offset`` is its
    clock minus locale 0's (0 on locale 0), ``error`` the bound on the offset's error
    (half the shortest round trip; 0 on locale 0); ``zero`` is locale 0's time zero on its
    own clock (ignored elsewhere), and ``shift`` the value to subtract from this locale's
    :func:`pgas.comm.trace.now` readings to express them on locale 0's clock, counted from
    its ``zero``."""
    c = _clock_comm()
    me, size = c.Get_rank(), c.Get_size()
    msg = np.zeros(4)
    if me != 0:
        stamp = np.zeros(1)
        while True:
            req = c.Irecv(msg, source=0, tag=_TAG)
            waits.poll(req.Test)
            if msg[0] != _PING:
                break
            stamp[0] = trace.now()
            c.Send(stamp, dest=0, tag=_TAG)
        return float(msg[1] + msg[3]), float(msg[1]), float(msg[2])
    got = np.zeros(1)
    ping = np.array([_PING, 0.0, 0.0, 0.0])
    for k in range(1, size):
        rtt, offset = float("inf"), 0.0
        for i in range(MAX_ROUNDS):
            req = c.Irecv(got, source=k, tag=_TAG)
            t_send = trace.now()
            c.Send(ping, dest=k, tag=_TAG)
            waits.poll(req.Test)
            t_recv = trace.now()
            if t_recv - t_send < rtt:
                rtt, offset = t_recv - t_send, got[0] - (t_send + t_recv) / 2
            if i + 1 >= ROUNDS and rtt <= GOOD_RTT:
                break
        c.Send(np.array([_DONE, offset, rtt / 2, zero]), dest=k, tag=_TAG)
    return zero, 0.0, 0.0
