"""Replacing a file or directory only once its new contents are whole.

Every writer of :mod:`pgas.io` goes through :func:`replace`: the locales write into a
temporary beside the target (same directory, so the final rename is atomic), each
locale flushes and fsyncs what it wrote, one small collective agrees that every
locale succeeded, and only then locale 0 renames the temporary onto the target and
fsyncs the directory.  On any failure the target is untouched, the temporary is
removed and every locale raises the same error.  A locale that dies mid-save leaves
the target whole (and at worst a temporary named ``.NAME.pgas-tmp-*`` beside it).

A directory (a zarr store) cannot be renamed over a non-empty one; where the
platform has ``renameat2(RENAME_EXCHANGE)`` (Linux) the two are swapped atomically,
elsewhere the old one is first renamed aside.  The old contents are then removed.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shutil
import stat

from .. import comm


def target(path: str) -> str:
    """The file that saving to ``path`` replaces: a symbolic link's target (so the
    link itself stays), else ``path`` (without a trailing separator)."""
    path = path.rstrip(os.sep) or path
    return os.path.realpath(path) if os.path.islink(path) else path


def _beside(final: str, kind: str) -> str:
    """Collective: one name beside ``final`` for every locale, picked by locale 0."""
    token = comm.bcast(f"{os.getpid()}-{secrets.token_hex(4)}" if comm.here() == 0 else None, 0)
    head, tail = os.path.split(final)
    return os.path.join(head, f".{tail}.pgas-{kind}-{token}")


def fsync_path(path: str) -> None:
    """Flush ``path`` (a file or a directory) to stable storage.  File systems that
    cannot fsync a directory (EINVAL) are passed over."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) if os.path.isdir(path) else os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF) or not os.path.isdir(path):
            raise
    finally:
        os.close(fd)


def fsync_tree(path: str, files: bool = True) -> None:
    """fsync every directory under ``path`` (and every file, if ``files``), deepest first."""
    for root, dirs, names in os.walk(path, topdown=False):
        if files:
            for n in names:
                fsync_path(os.path.join(root, n))
        fsync_path(root)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


_RENAME_EXCHANGE = 2


def _exchange(a: str, b: str) -> bool:
    """Swap the paths ``a`` and ``b`` atomically (Linux ``renameat2``); False where the
    C library or the file system cannot."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), b)


def _into_place(tmp: str, final: str) -> None:
    """Locale 0: put ``tmp`` where ``final`` is, atomically for a file; fsync the directory."""
    parent = os.path.dirname(final) or "."
    if os.path.isdir(tmp) and os.path.lexists(final):
        if _exchange(tmp, final):
            fsync_path(parent)
            _remove(tmp)                              # now the old contents
            return
        aside = os.path.join(parent, os.path.basename(tmp).replace(".pgas-tmp-", ".pgas-old-"))
        os.rename(final, aside)
        try:
            os.rename(tmp, final)
        except BaseException:
            os.rename(aside, final)
            raise
        fsync_path(parent)
        _remove(aside)
        return
    if os.path.lexists(final) and not os.path.isdir(final):
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(final).st_mode))     # the replaced file's permissions
        except OSError:
            pass
    os.replace(tmp, final)
    fsync_path(parent)


def replace(path: str, write, before=None, after=None) -> None:
    """Collective: ``write(tmp)`` on every locale (itself collective, raising its errors
    on every locale alike, and leaving each locale's part flushed and fsynced), then
    ``tmp`` atomically becomes ``path`` (a symbolic link's target, see :func:`target`).
    ``before(final)`` and ``after(final)``, if given, run on locale 0 just before and
    just after that rename (``final`` being the file replaced).

    On any error the temporary is removed, ``path`` is untouched (unless ``after``
    failed), and every locale raises the same error."""
    final = target(path)
    tmp = _beside(final, "tmp")
    try:
        write(tmp)
        err = None
        if comm.here() == 0:
            try:
                if before is not None:
                    before(final)
                _into_place(tmp, final)
                if after is not None:
                    after(final)
            except Exception as e:            # noqa: BLE001 - raised on every locale below
                err = e
        comm.agree(err)
    except BaseException:
        if comm.here() == 0:
            _remove(tmp)
        raise


def write_file(path: str, data: bytes) -> None:
    """Replace the small file ``path`` by ``data`` atomically, from this locale alone:
    a temporary beside it, fsynced, renamed into place, the directory fsynced."""
    head, tail = os.path.split(path)
    tmp = os.path.join(head, f".{tail}.pgas-tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
    fsync_path(head or ".")


def remove_file(path: str) -> None:
    """Remove ``path`` if it exists, and fsync its directory."""
    if os.path.lexists(path):
        os.unlink(path)
        fsync_path(os.path.dirname(path) or ".")


def agree_synced(path: str, error: BaseException | None = None, fsync=None) -> None:
    """Collective: each locale fsyncs what it wrote (``fsync()``, by default ``path``
    itself) unless it already failed with ``error``; then every locale raises the first
    failure alike, or all go on.  The one collective of a save's success."""
    if error is None:
        try:
            fsync() if fsync is not None else fsync_path(path)
        except Exception as e:                # noqa: BLE001
            error = e
    comm.agree(error)
