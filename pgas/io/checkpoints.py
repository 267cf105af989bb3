"""Checkpoint and restart: a set of distributed arrays and small metadata, committed as one.

:func:`checkpoint` writes ``DIR/step-000123/``: each array as ``NAME.npy`` (the format of
:func:`pgas.save`, which ``np.load`` reads) and the manifest :data:`MANIFEST` (the step,
the user's metadata, each array's shape, dtype, distribution and the CRC-32 of each
part, and the manifest's own CRC-32).  The commit follows :func:`pgas.io.atomic.replace`:
everything goes into a temporary directory beside the target, every locale fsyncs its
parts, the locales agree that all succeeded, the manifest is written last, and locale 0
renames the directory into place and fsyncs ``DIR``.  A ``step-N`` directory is thus
always complete; an interrupted checkpoint leaves only a temporary (``.step-N.pgas-tmp-*``)
that :func:`restore` ignores and the next :func:`checkpoint` removes.  Older checkpoints
are pruned (``keep``) only after the new one has committed, each renamed aside before it
is removed, so a crash while pruning never leaves a partial ``step-N``.

:func:`restore` reads the newest complete checkpoint (or a given step) at any locale
count and into any distribution, checking every part's CRC-32.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import shutil
import zlib

import numpy as np

from .. import comm
from ..array.collective import checked, plain
from ..array.core import DistArray
from ..layout import Block, BlockCyclic, Cyclic, Distribution
from . import npy
from .atomic import fsync_path, replace, write_file

#: The manifest in each checkpoint directory: JSON, written last, before the commit.
MANIFEST = "pgas-checkpoint.json"
_STEP = re.compile(r"step-(\d+)")
_LEFTOVER = re.compile(r"\.step-\d+\.pgas-(tmp|old)-.+")
_FORMAT = "pgas checkpoint"


def step_dir(step: int) -> str:
    """The name of step ``step``'s checkpoint directory (``step-000123``)."""
    return f"step-{step:06d}"


class Checkpoint(dict):
    """What :func:`restore` returns: a dict of the arrays by name (``ck["u"]``, or
    ``ck.u`` where the name is not a dict method), with ``step``, ``meta`` (the metadata
    given to :func:`checkpoint`) and ``path`` (the checkpoint's directory)."""

    def __init__(self, arrays: dict, step: int, meta, path: str) -> None:
        super().__init__(arrays)
        self.step, self.meta, self.path = step, meta, path

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self:     # (copy and pickle look for hooks before __init__)
            raise AttributeError(f"checkpoint step {self.__dict__.get('step')} holds no array {name!r} (it holds "
                                 f"{', '.join(sorted(self)) or 'none'})")
        return self[name]

    def __repr__(self) -> str:
        return f"Checkpoint(step={self.step}, arrays={sorted(self)}, meta={self.meta!r})"


def checkpoint(dir, step, keep: int | None = 2, meta=None, **arrays) -> str:
    """Collective: save ``arrays`` and ``meta`` as checkpoint ``step`` in the directory ``dir``,
    committed as one: ``dir/step-000123/`` appears whole or not at all.

    Parameters
    ----------
    dir : str or os.PathLike
        The same on every locale, on a file system every locale sees; made if missing.
    step : int
        The step number (at least 0); an existing checkpoint of the same step is replaced
        (atomically).
    keep : int or None
        After the commit, keep this many complete checkpoints of steps up to ``step``
        (the new one included) and remove the older ones; None keeps all.
    meta : dict, list, str or number, optional
        Small metadata that JSON can hold (NumPy scalars are stored as Python numbers,
        tuples come back as lists); :func:`restore` returns it as ``.meta``.
    **arrays : DistArray
        The arrays, by name (a Python identifier): each becomes ``NAME.npy``.

    Returns
    -------
    str
        The checkpoint's directory.

    Notes
    -----
    Each array is written as :func:`pgas.save` writes it (one collective MPI-IO write;
    each locale fsyncs its part) into a temporary directory beside the target; the
    locales agree that every one succeeded, locale 0 writes the manifest (fsynced),
    renames the directory into place and fsyncs ``dir``.  Any failure (a full disk, an
    error on one locale) raises the same error on every locale and leaves the earlier
    checkpoints as they were; a locale dying leaves at worst a temporary
    ``.step-N.pgas-tmp-*``, which :func:`restore` ignores and the next checkpoint removes.
    """
    path = _dirpath(dir, "pg.checkpoint")
    step = _step(step, "pg.checkpoint")
    if keep is not None and (not _is_int(keep) or keep < 1):
        raise ValueError(f"pg.checkpoint: keep must be a positive integer or None, got {keep!r}")
    if not arrays:
        raise ValueError("pg.checkpoint: no arrays given (pass them as name=array)")
    for name, A in arrays.items():
        if not name.isidentifier():
            raise ValueError(f"pg.checkpoint: array name {name!r} is not a Python identifier")
        if not isinstance(A, DistArray):
            raise TypeError(f"pg.checkpoint: {name}= must be a DistArray, got {type(A).__name__}")
    try:
        meta = json.loads(json.dumps(meta, default=_plain))
    except (TypeError, ValueError) as e:
        raise TypeError(f"pg.checkpoint: meta must be data that JSON can hold ({e})") from None
    checked("pg.checkpoint(...)", *arrays.values(), args=(path, step, keep, tuple(arrays), plain(meta)))
    _on_zero(lambda: _prepare(path))
    final = os.path.join(path, step_dir(step))
    entries = {}

    def write(tmp: str) -> None:
        _on_zero(lambda: os.mkdir(tmp))
        for name, A in arrays.items():
            sums = npy.write(os.path.join(tmp, f"{name}.npy"), A, os.path.join(final, f"{name}.npy"))
            d = A.layout.dist
            entries[name] = {"file": f"{name}.npy", "shape": list(A.shape), "dtype": A.dtype.str,
                             "dist": {"kind": d.kind, "block": d.block and list(d.block),
                                      "grid": d.grid and list(d.grid)},
                             "grid": list(A.layout.grid), "ghosts": list(A.layout.ghosts or ()), "sums": sums}
        body = {"format": _FORMAT, "version": 1, "step": step, "locales": comm.num_locales(), "meta": meta,
                "arrays": entries}
        _on_zero(lambda: write_file(os.path.join(tmp, MANIFEST),
                                    json.dumps({**body, "crc32": _crc(body)}, indent=1).encode()))

    replace(final, write)
    if keep is not None:
        _on_zero(lambda: _prune(path, step, keep))
    return final


def restore(dir, step: int | None = None, dist=None) -> Checkpoint:
    """Collective: read a checkpoint written by :func:`checkpoint`, at any locale count.

    Parameters
    ----------
    dir : str or os.PathLike
        The directory given to :func:`checkpoint`.
    step : int, optional
        The step to read; by default the newest complete checkpoint.
    dist : Distribution or dict, optional
        The arrays' distribution: one for all, or ``{name: Distribution}`` for some.  By
        default each array gets the distribution it was saved with (its explicit grid
        only where it fits this job's locale count), and its ghost cells if it had any.

    Returns
    -------
    Checkpoint
        A dict of the arrays by name, with ``.step``, ``.meta`` and ``.path``.

    Notes
    -----
    Every part's CRC-32 is checked (each locale checks the parts it read whole, or reads
    its share back once more): damaged or truncated data is refused with a ValueError on
    every locale that names the array, the part, its rows and the locale that wrote it.
    Temporaries of interrupted checkpoints are ignored.  A missing directory or step
    raises FileNotFoundError on every locale.
    """
    path = _dirpath(dir, "pg.restore")
    checked("pg.restore(...)", args=(path, step, plain(dist)))
    if step is not None:
        step = _step(step, "pg.restore")
    if dist is not None and not isinstance(dist, (Distribution, dict)):
        raise TypeError(f"pg.restore: dist must be a Distribution or a dict of them by array name, got "
                        f"{type(dist).__name__}")
    found = _on_zero(lambda: _manifest(path, step))
    where = os.path.join(found["path"], MANIFEST)
    if isinstance(dist, dict):
        unknown = sorted(set(dist) - set(found["arrays"]))
        if unknown:
            raise ValueError(f"pg.restore: dist names {unknown}, which {where} does not hold (it holds "
                             f"{sorted(found['arrays'])})")
        bad = [k for k, v in dist.items() if not isinstance(v, Distribution)]
        if bad:
            raise TypeError(f"pg.restore: dist[{bad[0]!r}] must be a Distribution")
    arrays = {}
    for name, e in found["arrays"].items():
        d = dist.get(name) if isinstance(dist, dict) else dist
        d = _saved_dist(e["dist"], len(e["shape"])) if d is None else d
        ghosts = tuple(e["ghosts"]) if e["ghosts"] and d.kind == "block" else None
        try:
            A = npy.read(os.path.join(found["path"], e["file"]), d, name, sums=e["sums"], where=where, ghosts=ghosts)
        except ValueError as err:
            raise ValueError(f"checkpoint step {found['step']}, array {name!r}: {err}") from None
        if A.shape != tuple(e["shape"]) or A.dtype != np.dtype(e["dtype"]):
            raise ValueError(f"checkpoint step {found['step']}, array {name!r}: {e['file']} holds shape {A.shape} "
                             f"and dtype {A.dtype}, but {where} says {tuple(e['shape'])} and {e['dtype']}")
        arrays[name] = A
    return Checkpoint(arrays, found["step"], found["meta"], found["path"])


def _dirpath(dir, who: str) -> str:
    if not isinstance(dir, (str, bytes, os.PathLike)):
        raise TypeError(f"{who}: dir must be a path (str or os.PathLike), got {type(dir).__name__}")
    path = os.fspath(dir)
    path = os.fsdecode(path) if isinstance(path, bytes) else path
    if not path:
        raise ValueError(f"{who}: dir is empty")
    return path


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _step(step, who: str) -> int:
    if not _is_int(step) or step < 0:
        raise ValueError(f"{who}: step must be an integer at least 0, got {step!r}")
    return int(step)


def _plain(x):
    """JSON's fallback for NumPy scalars and small arrays (as Python numbers and lists)."""
    if isinstance(x, (np.generic, np.ndarray)) and x.size <= 1 << 16:
        return x.tolist()
    raise TypeError(f"{type(x).__name__} is not JSON serializable")


def _crc(body: dict) -> int:
    return zlib.crc32(json.dumps(body, sort_keys=True).encode())


def _on_zero(fn):
    """Collective: ``fn()`` on locale 0; its error raised on every locale alike, its result
    shared with every locale."""
    out, err = None, None
    if comm.here() == 0:
        try:
            out = fn()
        except Exception as e:                # noqa: BLE001 - raised on every locale below
            err = e
    comm.agree(err)
    return comm.bcast(out, 0)


def _steps(path: str) -> dict[int, str]:
    """The complete checkpoints in ``path``: ``{step: directory name}``."""
    out = {}
    for name in os.listdir(path):
        m = _STEP.fullmatch(name)
        if m and name == step_dir(int(m.group(1))) and os.path.isfile(os.path.join(path, name, MANIFEST)):
            out[int(m.group(1))] = name
    return out


def _prepare(path: str) -> None:
    """Locale 0: make ``path`` if missing; remove the temporaries of interrupted checkpoints
    and prunings."""
    if not os.path.isdir(path):
        if os.path.exists(path):
            raise NotADirectoryError(f"pg.checkpoint: {path} exists and is not a directory")
        os.makedirs(path, exist_ok=True)
        fsync_path(os.path.dirname(os.path.abspath(path)))
    gone = [n for n in os.listdir(path) if _LEFTOVER.fullmatch(n)]
    for n in gone:
        shutil.rmtree(os.path.join(path, n), ignore_errors=True)
    if gone:
        fsync_path(path)


def _prune(path: str, step: int, keep: int) -> None:
    """Locale 0: keep the ``keep`` newest complete checkpoints of steps up to ``step``; each older
    one is renamed aside (one atomic step: no partial ``step-N`` is ever seen) and removed."""
    older = sorted((s for s in _steps(path) if s < step), reverse=True)[keep - 1:]
    aside = []
    for s in older:
        name = step_dir(s)
        aside.append(os.path.join(path, f".{name}.pgas-old-{os.getpid()}-{secrets.token_hex(4)}"))
        os.rename(os.path.join(path, name), aside[-1])
    if aside:
        fsync_path(path)
    for a in aside:
        shutil.rmtree(a, ignore_errors=True)


def _manifest(path: str, step: int | None) -> dict:
    """Locale 0: the manifest of checkpoint ``step`` (default: the newest complete one) in
    ``path``, checked, with its directory as ``"path"``."""
    if not os.path.isdir(path):
        if os.path.exists(path):
            raise NotADirectoryError(f"pg.restore: {path} is not a directory")
        raise FileNotFoundError(f"pg.restore: no checkpoint directory {path}")
    steps = _steps(path)
    if step is None:
        if not steps:
            raise FileNotFoundError(f"pg.restore: {path} holds no complete checkpoint")
        step = max(steps)
    elif step not in steps:
        raise FileNotFoundError(f"pg.restore: {path} holds no complete checkpoint of step {step} (it holds steps "
                                f"{sorted(steps) or 'none'})")
    where = os.path.join(path, steps[step], MANIFEST)
    try:
        with open(where, "rb") as f:
            body = json.loads(f.read())
        crc = body.pop("crc32")
        ok = body["format"] == _FORMAT and body["step"] == step and isinstance(body["arrays"], dict)
        version = body["version"]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{where}: not a pgas checkpoint manifest ({type(e).__name__}: {e}): it is damaged") from None
    if not ok or _crc(body) != crc:
        raise ValueError(f"{where}: checksum mismatch in the checkpoint's manifest: it is damaged")
    if version != 1:
        raise ValueError(f"{where}: checkpoint format version {version} is not supported (1 is)")
    return {**body, "path": os.path.join(path, steps[step])}


def _saved_dist(d: dict, ndim: int) -> Distribution:
    """The distribution an array was saved with, its explicit grid kept where it fits this
    job's locale count."""
    grid = tuple(d["grid"]) if d["grid"] and math.prod(d["grid"]) == comm.num_locales() else None
    if d["kind"] == "block-cyclic":
        return BlockCyclic(tuple(d["block"]), grid=grid)
    return (Cyclic if d["kind"] == "cyclic" else Block)(grid=grid)
