"""numba's on-disk cache, safe when several processes compile at once.

pgas's kernels are compiled with ``@njit(cache=True)``, and every locale of a job
(and every job on the machine) shares one cache folder.  numba keeps, per
function, an index mapping each compiled signature to a data file
(``name.1.nbc``, ``name.2.nbc``, ...) and saves a new signature as: read the
index, take the first unused number, write the index, write the data.  Two
processes compiling *different* signatures of one function at once may both take
the same number; if the first writes its index last and the second its data
last, the index maps the first's signature to the second's machine code, and
every later process that loads it runs the wrong code (numba issue #4807: the
cache is not safe for concurrent processes).  pgas saw exactly this: a fused
kernel compiled for a C-contiguous operand ran for a strided one and read the
wrong elements, a silent wrong answer that lasted as long as the cache.

:func:`install` makes each save one critical section under an exclusive lock
on a file beside the index (``fcntl.flock``), and writes the data before the
index, so a process reading without the lock finds either no entry (and
compiles) or an entry whose data file is complete.  The cache folders' names
carry :data:`VERSION`, so caches written before the fix are not read.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager

#: Part of the kernel cache folder's name: caches written without the lock are not read.
VERSION = 2


def install() -> None:
    """Replace numba's ``IndexDataCacheFile.save`` with the locked one (once; a no-op
    where numba is missing or its cache class is not the one this was written for)."""
    try:
        from numba.core import caching
    except ImportError:
        return
    cls = getattr(caching, "IndexDataCacheFile", None)
    if cls is None or getattr(cls, "_pgas_locked", False):
        return
    if not all(hasattr(cls, m) for m in ("_load_index", "_save_index", "_save_data", "_data_name")):
        return
    cls.save = _save
    cls._pgas_locked = True


def _save(self, key, data) -> None:
    """``IndexDataCacheFile.save`` as one critical section: data first, then index.  Where
    no lock can be taken (no ``fcntl``, a folder that refuses locks) nothing is saved:
    the kernel is compiled again by the next process, never mixed up with another."""
    with _locked(self._index_path + ".lock") as held:
        if not held:
            return
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            used = set(overloads.values())
            name = next(n for n in (self._data_name(i) for i in itertools.count(1)) if n not in used)
        self._save_data(name, data)
        overloads[key] = name
        self._save_index(overloads)


@contextmanager
def _locked(path: str):
    """True while an exclusive lock on ``path`` is held; False where none can be taken."""
    try:
        import fcntl
        f = open(path, "a")
    except (ImportError, OSError):
        yield False
        return
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX)
        except OSError:                    # e.g. a network file system without locks
            yield False
            return
        yield True
    finally:
        f.close()                          # releases the lock
