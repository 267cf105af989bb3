"""Parallel ``.npy`` files: :func:`save` and :func:`load` with no full copy anywhere.

Locale 0 writes (or reads) the header with plain Python; the data moves by
collective MPI-IO (:mod:`pgas.comm.io`), each locale writing or reading only
its own blocks through a block-cyclic file view.  The file is byte-identical
to ``np.save`` of the global array, so ``np.load`` reads it, and any ``.npy``
file of a supported dtype (written by NumPy, or by pgas at any locale count)
loads into any distribution.  :func:`save` replaces the file only once it is
whole (:mod:`pgas.io.atomic`) and leaves the CRC-32 of each part beside it,
which :func:`load` checks.
"""

from __future__ import annotations

import io
import json
import os
import zlib

import numpy as np

from .. import comm
from ..array.creation.constructors import empty
from ..array.creation.layouts import new_layout as _layout
from ..array.collective import checked
from ..array.core import DistArray
from ..array.index import check_dtype
from ..comm.io import read_darray, write_darray
from ..comm.userwarn import warn
from ..layout import Block, Distribution
from .atomic import fsync_path, remove_file, replace, target, write_file
from .blocks import big_blocks


def _header(shape, dtype) -> bytes:
    """The ``.npy`` header ``np.save`` writes for a C-ordered array of ``shape`` and ``dtype``."""
    d = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": tuple(shape)}
    buf = io.BytesIO()
    write = getattr(np.lib.format, "_write_array_header", None)
    if write is not None:
        write(buf, d, None)               # NumPy's own choice of format version, as np.save
    else:                                 # pragma: no cover - NumPy without the private helper
        try:
            np.lib.format.write_array_header_1_0(buf, d)
        except ValueError:
            buf = io.BytesIO()
            np.lib.format.write_array_header_2_0(buf, d)
    return buf.getvalue()


def _path(path) -> str:
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return path


def save(path, A: DistArray) -> None:
    """Collective: write ``A`` to the ``.npy`` file ``path``, as ``np.save(path, A.to_numpy())``.

    Parameters
    ----------
    path : str or os.PathLike
        The same on every locale, on a file system every locale sees.  Unlike
        ``np.save`` no ``.npy`` suffix is added.
    A : DistArray
        Any supported dtype and distribution.

    Notes
    -----
    Locale 0 writes the header; every locale then writes its own blocks in one
    collective ``MPI_File_write_all``.  Extra memory per locale: the MPI
    library's collective buffers only (no copy of ``A.local``).  Where ``A``'s
    blocks are tiny (Cyclic, small BlockCyclic blocks) MPI-IO would list every
    element of such a file view in its own memory (a whole file's worth for a
    Cyclic array, measured), so ``A`` goes out in strips of rows instead: each
    strip is copied to a Block array of about :data:`STRIP_BYTES` per locale
    (one statement) and written, a contiguous range of the file.

    The file is written under a temporary name beside ``path``, fsynced by every
    locale and renamed onto ``path`` only once every locale has succeeded
    (:mod:`pgas.io.atomic`): a save that fails leaves the previous file whole and
    raises the same error on every locale.  Saving to a symbolic link replaces the
    file it points to; the replaced file's permissions are kept.  The CRC-32 of
    each part of the data goes into ``path + ".pgas.json"`` (see :data:`SUMS`),
    replaced the same way; a locale whose storage is not its part's rows reads
    them back to sum them.
    """
    checked("pg.save({0})", A, args=(str(path),))
    if not isinstance(A, DistArray):
        raise TypeError(f"pg.save takes a DistArray, got {type(A).__name__} (use np.save for NumPy arrays)")
    path = _path(path)
    sums = {}
    replace(path, lambda tmp: sums.update(write(tmp, A, path)),
            before=lambda final: remove_file(final + SUMS),
            after=lambda final: write_file(final + SUMS, json.dumps({**sums, "file": _identity(final)}).encode()))


def write(tmp: str, A: DistArray, path: str | None = None) -> dict:
    """Collective: write ``A`` as the new ``.npy`` file ``tmp`` (errors name ``path``, by
    default ``tmp``), each locale's part fsynced, every locale's success agreed; returns
    the checksums (see :data:`SUMS`; :func:`read` takes them).  Nothing is renamed: the
    caller puts ``tmp`` in place (:func:`save`, :func:`pgas.checkpoint`)."""
    path = tmp if path is None else path
    header = _header(A.shape, A.dtype)
    err = None
    if comm.here() == 0:
        try:
            with open(tmp, "xb") as f:
                f.write(header)
                if A.size:
                    f.truncate(len(header) + A.size * A.dtype.itemsize)
        except OSError as e:
            err = _named(e, path)
    comm.agree(err)
    if A.size and big_blocks(A.layout, A.shape):
        _collective(write_darray, tmp, len(header), A.layout, A.local, name=path)
    elif A.size:
        strips = {}                       # one Block array per strip length (at most two)
        for start, stop in _strips(A.shape, A.dtype.itemsize):
            if stop - start not in strips:
                strips[stop - start] = empty((stop - start,) + A.shape[1:], A.dtype, Block())
            strip = strips[stop - start]
            strip[...] = A[start:stop]
            _collective(write_darray, tmp, len(header) + start * _row_bytes(A.shape, A.dtype.itemsize),
                        strip.layout, strip.local, name=path)
    parts = _parts(A.shape)
    err, crc = None, None
    try:
        if comm.here() < len(parts):
            r0, r1 = parts[comm.here()]
            if _rows_are_local(A.layout, A.shape, parts):
                crc = zlib.crc32(np.ascontiguousarray(A.local))
            else:                         # read back this locale's rows (just written: cached)
                rb = _row_bytes(A.shape, A.dtype.itemsize)
                crc = _crc_of(tmp, len(header) + r0 * rb, len(header) + r1 * rb)
        fsync_path(tmp)
    except OSError as e:
        err = _named(e, path)
    comm.agree(err)
    crcs = comm.allgather(crc)
    return {"format": "pgas .npy checksums", "version": 1, "algorithm": "crc32",
            "shape": list(A.shape), "descr": A.dtype.str, "offset": len(header), "locales": comm.num_locales(),
            "parts": [{"rows": [r0, r1], "crc32": c} for (r0, r1), c in zip(parts, crcs)]}


#: Suffix of the checksum file :func:`save` writes beside ``path`` (``path + SUMS``):
#: JSON holding the zlib CRC-32 of each part of the data, a part being the rows the
#: saving locale held in ``Block`` along axis 0, and the saved file's identity (inode,
#: size, modification time); :func:`load` verifies the parts while the file is the one
#: saved (a file rewritten since, by ``np.save`` say, loads with a warning instead).
SUMS = ".pgas.json"


def _identity(path: str) -> list[int]:
    """``[inode, size, modification time in ns]`` of the file ``path`` names."""
    st = os.stat(path)
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _parts(shape, p: int | None = None) -> list[tuple[int, int]]:
    """The row ranges of the checksummed parts: axis 0 split as Block splits it over ``p``
    locales (default: this job's), empty parts left out."""
    p = comm.num_locales() if p is None else p
    if not shape or not int(np.prod(shape)):
        return []
    b = -(-shape[0] // p)
    return [(k * b, min(shape[0], (k + 1) * b)) for k in range(p) if k * b < shape[0]]


def _rows_are_local(layout, shape, parts) -> bool:
    """Whether each locale's storage in ``layout`` is exactly its part's rows, in file order."""
    p = comm.num_locales()
    return (len(shape) == len(layout.grid) and tuple(layout.grid) == (p,) + (1,) * (len(shape) - 1)
            and bool(parts) and layout.blocks[0] == parts[0][1] - parts[0][0]
            and all(b >= n for b, n in zip(layout.blocks[1:], shape[1:])))


def _crc_of(path: str, start: int, stop: int) -> int:
    """CRC-32 of bytes ``start:stop`` of ``path``, read :data:`STRIP_BYTES` at a time."""
    crc, left = 0, stop - start
    buf = memoryview(bytearray(max(1, min(left, STRIP_BYTES))))
    with open(path, "rb") as f:
        f.seek(start)
        while left:
            n = f.readinto(buf[:min(left, len(buf))])
            if not n:
                raise OSError(f"{path}: ends before byte {stop}")
            crc = zlib.crc32(buf[:n], crc)
            left -= n
    return crc


def _named(e: OSError, path: str) -> OSError:
    """``e`` (about a temporary) as the same kind of OSError about ``path``."""
    return OSError(e.errno, e.strerror, path) if e.errno else OSError(f"{path}: {e}")


#: Per-locale bytes of one strip when tiny blocks go through Block strips.
STRIP_BYTES = 1 << 20


def _row_bytes(shape, itemsize: int) -> int:
    return int(np.prod(shape[1:], dtype=np.int64)) * itemsize


def _strips(shape, itemsize: int):
    """``(start, stop)`` row ranges of about :data:`STRIP_BYTES` per locale (at least a row)."""
    rows = max(1, comm.num_locales() * STRIP_BYTES // max(1, _row_bytes(shape, itemsize)))
    return [(r, min(r + rows, shape[0])) for r in range(0, shape[0], rows)]


def _collective(fn, path, offset, layout, buf, name=None, **kw) -> None:
    """Collective: ``fn`` (read_darray or write_darray) on ``path``; an error on any locale
    is raised on every locale as OSError naming ``name`` (default ``path``)."""
    err = None
    try:
        fn(path, offset, layout.shape, layout.grid, layout.blocks, buf, **kw)
    except Exception as e:                # noqa: BLE001 - MPI errors, raised on every locale below
        err = OSError(f"{name or path}: {e}")
    comm.agree(err)


def _read_header(path: str):
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"{path}: .npy format version {version} is not supported (1.0 and 2.0 are)")
        offset = f.tell()
        size = os.fstat(f.fileno()).st_size
    if dtype.hasobject or dtype.fields is not None:
        raise TypeError(f"{path}: dtype {dtype} cannot be loaded into a pgas array")
    check_dtype(dtype.newbyteorder("=") if dtype.byteorder != "|" else dtype)
    need = offset + int(np.prod(shape)) * dtype.itemsize
    if size < need:
        raise ValueError(f"{path}: file has {size} bytes, but its header describes {need}")
    return tuple(shape), bool(fortran), dtype.str, offset


def load(path, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: read the ``.npy`` file ``path`` into a DistArray with distribution ``dist``.

    Parameters
    ----------
    path : str or os.PathLike
        The same on every locale.
    dist : Distribution, optional
        Block (the default), Cyclic or BlockCyclic; any of them reads any file.
    name : str, optional
        How errors name the array.

    Returns
    -------
    DistArray

    Notes
    -----
    Locale 0 reads the header and shares it; every locale reads its own blocks
    in one collective ``MPI_File_read_all`` straight into its storage.  Files in
    Fortran order take one extra local-block buffer where every locale's block is
    at most :data:`STRIP_BYTES`; larger ones, and distributions with tiny blocks,
    read in strips of the file's rows (a Fortran file's run along the last axis),
    each into a Block array of about :data:`STRIP_BYTES` per locale, then copied
    into place by one statement (see :func:`save`);
    big-endian files are
    byte-swapped in place.  Errors (missing file, bad header, unsupported dtype,
    truncated data) are raised on every locale alike.

    Where :func:`save` left checksums beside the file (``path + ".pgas.json"``)
    and the file is still the one it saved (same inode, size and modification
    time; a file rewritten since, by ``np.save`` say, loads with a warning and
    unchecked) they are checked: a part whose CRC-32 differs, or a header that no longer
    matches them, is raised as ValueError on every locale, naming the part, its
    rows and the locale that wrote it.  Each locale checks the parts it read
    whole (same locale count, rows in Block along axis 0), or else reads back
    parts ``here(), here() + num_locales(), ...`` of the file.
    """
    checked("pg.load(...)", args=(str(path), repr(dist), name))
    return read(_path(path), dist, name)


def read(path: str, dist: Distribution | None = None, name: str | None = None, sums: dict | None = None,
         where: str | None = None, ghosts=None) -> DistArray:
    """Collective: :func:`load`, checking the checksums ``sums`` (as :func:`write` returned
    them, kept by the caller in the file ``where``, named in errors) instead of those beside
    ``path``; with ``sums`` given they are always checked.  ``ghosts``: the new array's
    ghost-cell widths (Block only), as the constructors take them."""
    info = None
    if comm.here() == 0:
        try:
            info = _read_header(path)
            info = info + (_read_sums(path, *info) if sums is None else _check_sums(path, where, sums, *info),)
        except Exception as e:            # noqa: BLE001 - shared below, raised on every locale
            info = e
    info = comm.bcast(info if not isinstance(info, Exception) else (type(info).__name__, str(info)), 0)
    if len(info) == 2:
        kind, text = info
        raise {"FileNotFoundError": FileNotFoundError, "TypeError": TypeError}.get(kind, ValueError)(text)
    shape, fortran, dstr, offset, sums = info
    if sums is not None and "stale" in sums:
        warn(sums["stale"])           # on every locale alike (locale 0's finding, shared)
        sums = None
    if not shape:
        raise ValueError(f"{path}: holds a 0-d array; pgas arrays have at least one dimension")
    file_dtype = np.dtype(dstr)
    native = file_dtype.newbyteorder("=") if file_dtype.byteorder != "|" else file_dtype
    A = DistArray._create(_layout(shape, dist, ghosts), native, name)
    if A.size and (fortran and _large(A) or not big_blocks(A.layout, shape) and not fortran):
        _read_strips(path, offset, A, file_dtype, fortran)
        _verify(path, sums, A, offset, False)
        return A
    if A.size:
        local = A.local                   # with ghost cells, not contiguous: read into a copy
        buf = np.empty(local.shape, native, order="F" if fortran else "C") if fortran or not local.flags.c_contiguous \
            else local
        _collective(read_darray, path, offset, A.layout, buf, fortran=fortran)
        if buf is not local:
            local[...] = buf
        if not file_dtype.isnative:
            A.local.byteswap(inplace=True)
    comm.barrier([A.store.window])
    _verify(path, sums, A, offset, not fortran and file_dtype.isnative)
    return A


def _large(A: DistArray) -> bool:
    """Whether any locale's block of ``A`` exceeds :data:`STRIP_BYTES` (agreed alike)."""
    return bool(comm.allreduce(np.int64(A.local.nbytes > STRIP_BYTES), "max"))


def _read_strips(path: str, offset: int, A: DistArray, file_dtype, fortran: bool) -> None:
    """Collective: read ``A`` from ``path`` in strips of rows of the file (each into a Block
    array of about :data:`STRIP_BYTES` per locale), each copied into place by one
    statement; a Fortran-ordered file's rows run along ``A``'s last axis (its strips
    are the transposed file's rows)."""
    shape = A.shape[::-1] if fortran else A.shape
    strips = {}
    for start, stop in _strips(shape, A.dtype.itemsize):
        if stop - start not in strips:
            strips[stop - start] = DistArray._create(_layout((stop - start,) + shape[1:], Block()), A.dtype, A.name)
        strip = strips[stop - start]
        _collective(read_darray, path, offset + start * _row_bytes(shape, A.dtype.itemsize), strip.layout,
                    strip.local)
        if not file_dtype.isnative:
            strip.local.byteswap(inplace=True)
        comm.barrier([strip.store.window])
        if fortran:
            A[(Ellipsis, slice(start, stop))] = strip.T
        else:
            A[start:stop] = strip


def _read_sums(path: str, shape, fortran: bool, dstr: str, offset: int):
    """The checksums :func:`save` wrote beside ``path`` (None if there are none), checked
    against the header just read."""
    spath = target(path) + SUMS
    try:
        with open(spath, "rb") as f:
            sums = json.loads(f.read())
    except FileNotFoundError:
        return None
    except ValueError as e:
        raise ValueError(f"{spath}: not a pgas checksum file ({e})") from None
    if not isinstance(sums, dict):
        raise ValueError(f"{spath}: not a pgas checksum file (holds a {type(sums).__name__})")
    if "file" in sums and sums["file"] != _identity(target(path)):
        return {"stale": f"{path} was changed after pg.save wrote it (by another program?): its checksums in "
                         f"{spath} no longer apply and are not checked; pg.save it again to renew them"}
    return _check_sums(path, spath, sums, shape, fortran, dstr, offset)


def _check_sums(path: str, spath: str, sums: dict, shape, fortran: bool, dstr: str, offset: int) -> dict:
    """The checksums ``sums`` (kept in the file ``spath``) as :func:`_verify` takes them, checked
    against the header of ``path``."""
    try:
        ok = (sums["algorithm"] == "crc32" and tuple(sums["shape"]) == tuple(shape) and not fortran
              and np.dtype(sums["descr"]) == np.dtype(dstr) and sums["offset"] == offset)
        parts = [(int(q["rows"][0]), int(q["rows"][1]), int(q["crc32"])) for q in sums["parts"]]
        locales = int(sums["locales"])
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise ValueError(f"{spath}: not a pgas checksum file, or not for {path} ({type(e).__name__}: {e})") from None
    if not ok:
        raise ValueError(f"{path}: its header (shape {tuple(shape)}, dtype {dstr}) does not match its checksum "
                         f"file {spath} (shape {tuple(sums['shape'])}, dtype {sums['descr']}): the file is damaged"
                         + (", or was rewritten by something other than pg.save (then remove the checksum file)"
                            if spath.endswith(SUMS) else ""))
    return {"locales": locales, "parts": parts}


def _verify(path: str, sums, A: DistArray, offset: int, in_place: bool) -> None:
    """Collective: check the CRC-32 of each part of ``path``'s data against ``sums``; a
    mismatch is raised as ValueError on every locale alike, naming the damaged parts.
    Each locale checks the parts it holds whole (``in_place``: the file's bytes, as read
    into ``A.local``), or else reads back parts ``here, here + num_locales, ...``."""
    if sums is None:
        return
    parts, me, p = sums["parts"], comm.here(), comm.num_locales()
    rb = _row_bytes(A.shape, A.dtype.itemsize)
    bad, err = [], None
    try:
        if in_place and sums["locales"] == p and _rows_are_local(A.layout, A.shape, [q[:2] for q in parts]):
            if me < len(parts) and zlib.crc32(np.ascontiguousarray(A.local)) != parts[me][2]:
                bad.append(me)
        else:
            for k in range(me, len(parts), p):
                r0, r1, crc = parts[k]
                if _crc_of(path, offset + r0 * rb, offset + r1 * rb) != crc:
                    bad.append(k)
    except OSError as e:
        err = OSError(f"{path}: {e}")
    comm.agree(err)
    bad = sorted(k for mine in comm.allgather(bad) for k in mine)
    if bad:
        what = "; ".join(f"part {k} (rows {parts[k][0]}:{parts[k][1]}, file bytes "
                         f"{offset + parts[k][0] * rb}:{offset + parts[k][1] * rb}, written by locale {k} "
                         f"of {sums['locales']})" for k in bad[:4])
        more = f" and {len(bad) - 4} more" if len(bad) > 4 else ""
        raise ValueError(f"{path}: checksum mismatch in {what}{more}: the data is damaged")
