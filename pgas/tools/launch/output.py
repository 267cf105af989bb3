"""The locales' output under ``pgas run``: whole lines, each from one locale, optionally
tagged with it.

An MPI launcher forwards each process's output in the pieces the process wrote it (or
the launcher read it) in, so lines printed at the same time by several locales can
interleave mid-line (``pgas run`` also turns Python's buffering off when it writes to a
terminal, and ``print`` writes a line in several pieces).  Under ``pgas run`` each locale
(:mod:`pgas.tools.launch.runner`) connects its standard output and standard error to the
launcher's socket ``out.sock`` in the job directory instead, one connection per stream
whose first line names the locale and the stream, and moves them onto file descriptors 1
and 2, so whatever writes to them (Python, C code, child processes) goes there.  The
launcher (:class:`Collector`) reads every connection in a thread of its own and writes
whole lines only, one at a time: a line is held until its newline arrives (or its
stream ends), and with ``pgas run --tag`` each line starts with ``[k] ``, the locale's
number (as ``mpiexec -l`` or ``--tag-output`` do).
"""

from __future__ import annotations

import os
import socket
import sys
import threading

#: The socket's name in the job directory.
SOCKET = "out.sock"
_STREAMS = {"out": 1, "err": 2}


def connect(path: str, me: int) -> bool:
    """Locale ``me``'s side: send its standard output and error to the launcher's socket in
    job directory ``path``; False (nothing changed) if there is none to connect to."""
    where = os.path.join(path, SOCKET)
    if not os.path.exists(where):
        return False
    socks = []
    try:
        for name in _STREAMS:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            socks.append(s)
            s.connect(where)
            s.sendall(f"{me} {name}\n".encode())
    except OSError:
        for s in socks:
            s.close()
        return False
    sys.stdout.flush()
    sys.stderr.flush()
    for s, (name, fd) in zip(socks, _STREAMS.items()):
        os.dup2(s.fileno(), fd)
        s.close()
    return True


class Collector:
    """The launcher's side: accepts the locales' connections on ``out.sock`` in job directory
    ``path`` and calls ``write(stream, locale, lines)`` (``stream``: ``"out"`` or ``"err"``;
    whole lines, each ending with a newline) under one lock, so lines never mix."""

    def __init__(self, path: str, write) -> None:
        self.write = write
        self.lock = threading.Lock()
        self.readers: list[threading.Thread] = []
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(os.path.join(path, SOCKET))
        self._server.listen(64)
        self._closed = False
        self._accepting = threading.Thread(target=self._accept, daemon=True, name="pgas-output")
        self._accepting.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            t = threading.Thread(target=self._read, args=(conn,), daemon=True, name="pgas-output-reader")
            self.readers.append(t)
            t.start()

    def _read(self, conn: socket.socket) -> None:
        with conn:
            held = b""
            head = None
            while True:
                try:
                    chunk = conn.recv(1 << 16)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                held += chunk
                if head is None:
                    if b"\n" not in held:
                        continue
                    first, held = held.split(b"\n", 1)
                    try:
                        k, stream = first.decode().split()
                        head = (stream, int(k))
                    except ValueError:
                        return
                cut = held.rfind(b"\n") + 1
                if cut:
                    self._emit(head, held[:cut])
                    held = held[cut:]
            if head is not None and held:
                self._emit(head, held + b"\n")         # the stream ended without its last newline

    def _emit(self, head, data: bytes) -> None:
        lines = [line + "\n" for line in data.decode("utf-8", "surrogateescape").split("\n")[:-1]]
        with self.lock:
            self.write(head[0], head[1], lines)

    def join(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout`` seconds each) for the connections made so far to end."""
        for t in list(self.readers):
            t.join(timeout)

    def close(self) -> None:
        self._closed = True
        try:
            self._server.close()
        except OSError:
            pass
