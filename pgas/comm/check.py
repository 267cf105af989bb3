"""Collective call checking: locales agree on which collective comes next.

Every locale of an SPMD program must make the same collective calls in the
same order.  When they do not (``if pg.here == 0: print(A[1, 2])``), MPI pairs
unrelated operations: the job hangs or, worse, returns a wrong value.  With
checking on (``$PGAS_CHECK=1`` or ``pg.config(check=True)``, the same on every
locale), each collective entry point first calls :func:`collective` with its
*signature*: what it is (a template such as ``"{0}.sum()"``, the ``{k}``
standing for its arrays), the arrays' identities (creation number, shape,
dtype), its relevant arguments, and the user's call site (the first stack
frame outside the ``pgas`` package).  The locales compare a 64-bit hash of it
in ONE small allreduce; only on a mismatch do they exchange the signatures, and
every locale raises the same :class:`CollectiveMismatch` naming what each group
of locales called and where::

    locale 0 called A.to_numpy() at job.py:12; locales 1-3 called A.sum() at job.py:14

That is the *strict* mode (``$PGAS_CHECK=1``, ``pg.config(check=True)``): it
costs a message per statement.  The default mode (``"auto"``, at two locales or
more) checks every call too, at almost no cost: a call that communicates with
neighbours at most or not at all (a statement, a ghost update, a ``forall``)
is only *folded*: appended to this locale's record of the calls made since the
locales last agreed (:func:`fold`; a replayed statement's entry is kept with it,
:func:`fold_repeat`), and the locales compare a 62-bit hash of that record
(:func:`history_words`, made once per agreement) inside the next call that reaches every locale anyway (a reduction,
``A[i]``, a print, a constructor, ``pg.barrier()``, the exchange of an ``update``
(:func:`pgas.comm.exchange` carries the hash and count in its own messages,
:func:`carried` / :func:`exchanged`: no reduction of its own), or at the latest
every :data:`PERIOD` folded calls and at the end of the program).  Only on a mismatch
do they exchange the calls they made since, and every locale raises the same
:class:`CollectiveMismatch` naming the first call that differs::

    locale 0 called a statement writing B at job.py:12; locale 1 called B.sum() at job.py:15
    (the 3rd collective call since the locales last agreed)

so no differing call can change a value a program sees (a reduction, an
element, a file) without every locale raising.  ``$PGAS_CHECK=0`` or
``pg.config(check=False)`` turns checking off.

This layer knows nothing of arrays: callers pass plain strings and integers
(and, for naming, the Python ``id`` of each array, looked up among the
caller's variables only when a message is written).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import sys
import threading
import zlib

import numpy as np

from . import agreement, collectives, epochs, node, process, runtime, waits

#: Whether every collective call is agreed before it runs (the strict mode; set through
#: ``pg.config(check=...)``, whose default :mod:`pgas.exec.settings` reads from ``$PGAS_CHECK``).
enabled = False
#: Whether calls are folded into the running hash and agreed at the next global collective
#: (the default mode, at two locales or more).
folding = False
#: The most calls folded between two agreements: the locales agree after this many
#: (which bounds both the memory of the record and how late a difference is found).
PERIOD = 1024

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: What call sites skip: the library's files and NumPy's (operators forward through its mixins);
#: not ``pgas/tools``, whose benchmarks are programs calling the library like a user's.
_LIBRARY = tuple(os.path.join(_PKG, name) + ("" if name.endswith(".py") else os.sep)
                 for name in sorted(os.listdir(_PKG)) if name not in ("tools", "__pycache__"))
_NUMPY = os.path.dirname(os.path.abspath(np.__file__)) + os.sep      # operators forward through its mixins
_SKIPPED = _LIBRARY + (_NUMPY,)
_MASK = (1 << 62) - 1


class CollectiveMismatch(RuntimeError):
    """Locales made different collective calls (or the same call with different
    arguments) at the same point of the program; raised on every locale alike."""


_mode = False


def set_mode(mode) -> None:
    """Checking ``True`` (strict), ``"auto"`` (folded, from the first collective on, at two
    locales or more) or ``False`` (off); every locale must do the same.  Calls still folded
    when folding ends are agreed first (collective then)."""
    global _mode
    _mode = mode
    _apply()


def _apply(_node=None) -> None:
    global enabled, folding, SLOTS
    fold_now = _mode == "auto" and runtime._comm is not None and process.num_locales() > 1
    if runtime._comm is not None:
        P = process.num_locales()
        SLOTS = P if P <= MAX_SLOTS else 0
    if folding and not fold_now and _log:
        agree_history()
    enabled, folding = _mode is True, fold_now
    if folding and not _hooked:
        _hook_exit()


node.on_learned(_apply)             # the library's communicator is made: the locale count is known


# -- the record of folded calls -----------------------------------------------------
_log: list = []          # (hash, op, arrays, args, site) of each call folded since the locales last agreed


def fold(h: int, op: str, arrays=(), args=(), site=None) -> None:
    """Record this locale's collective call ``op`` (its signature's hash ``h``, an integer;
    the rest only names it in messages: ``arrays`` as :func:`collective` takes them, without
    holding the arrays) for the next agreement; agree now if :data:`PERIOD` calls wait."""
    _log.append((h, op, arrays, args, site))
    if len(_log) >= PERIOD:
        agree_history()


#: NumPy scalar types whose ``hash`` is their value's, alike in every process (of the Python
#: number they equal; NaN aside, hashed by identity): a folded fill's value is hashed as it is.
_NUMBERS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdFD")
_NAN = 0x7FF8_0000_0000_0001            # a NaN fill, in a folded statement's hash
_getframe = sys._getframe


def repeat_tag(h: int, op: str, arrays) -> list:
    """What a call made again and again from one place (a replayed statement) keeps for
    :func:`fold_repeat`: its signature's hash ``h``, ``op`` and ``arrays`` (as :func:`fold`
    takes them), then how many frames above :func:`fold_repeat` its caller was the last
    time, the caller's code and instruction offset there, the record's entry made and, for
    a fill, the value it was made for."""
    return [h, op, arrays, 0, None, -1, None, None]


def fold_repeat(tag: list, fill=None) -> None:
    """:func:`fold` a call kept as ``tag`` (:func:`repeat_tag`), with scalar ``fill`` (a NumPy
    scalar: a row fill's value, part of the signature) if any: the cheap path of the
    folding mode.  The caller's frame is looked up where it was the last time; a call made
    from the same instruction appends the same entry to the record as the last time (no
    tuple made, no line number looked up; a fill's entry is made again, with the same
    site, when its value is not the last time's): a repeat costs a frame look-up, two
    comparisons and an append (and a fill the comparison of its value).  Equal values hash
    alike (NaN aside, which is equal to nothing and hashed again), so a value kept is the
    value's hash."""
    try:
        f = _getframe(tag[3])
    except ValueError:                      # a shallower stack than the last time
        f = _getframe()
    if fill is None:
        if f.f_code is tag[4] and f.f_lasti == tag[5]:
            _log.append(tag[6])
        else:
            _log.append(_repeat_entry(tag, tag[0], f))
    else:
        same = f.f_code is tag[4] and f.f_lasti == tag[5]
        entry = tag[6]
        if not (same and fill == tag[7]):   # (a NaN, equal to nothing, is hashed again)
            v = fill if type(fill) in _NUMBERS else fill.item()
            h = hash((tag[0], v if v == v else _NAN))
            entry = (h, *entry[1:]) if same else _repeat_entry(tag, h, f)
            tag[6], tag[7] = entry, fill
        _log.append(entry)
    if len(_log) >= PERIOD:
        agree_history()


def _repeat_entry(tag: list, h: int, f) -> tuple:
    """:func:`fold_repeat`'s entry for hash ``h`` called from frame ``f`` (``tag[3]`` frames
    above it), the caller's frame looked for first if ``f`` is not it; kept in ``tag``."""
    if f.f_code is not tag[4]:
        f, k = _getframe(1), 0              # (k: frames above fold_repeat)
        while f is not None and _in_library(f.f_code):
            f, k = f.f_back, k + 1
        if f is None:
            tag[4] = None
            return (h, tag[1], tag[2], (), None)
        tag[3], tag[4] = k, f.f_code
    tag[5] = f.f_lasti
    entry = tag[6] = (h, tag[1], tag[2], (), (f.f_code.co_filename, f.f_lineno))
    return entry


def site_of(frame):
    """``(file, line)`` of a frame (None for None): what a folded call keeps of its caller."""
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def stable_hash(obj) -> int:
    """A 62-bit hash of ``obj`` equal on every locale (Python's ``hash`` of strings is not):
    of its :func:`stable_repr`."""
    return _hash(stable_repr(obj))


def stable_repr(obj):
    """``obj`` with what prints differently in each process replaced: functions by their
    qualified names, NumPy arrays by :func:`fingerprint`, objects shown with an address by
    their type's name."""
    t = type(obj)
    if t is tuple or t is list:
        return tuple([stable_repr(x) for x in obj])
    if t in (int, float, str, bool, bytes, complex) or obj is None:
        return obj
    if t is dict:
        return tuple(sorted((repr(k), stable_repr(v)) for k, v in obj.items()))
    if isinstance(obj, np.ndarray):
        return ("ndarray", fingerprint(obj))
    if callable(obj) and hasattr(obj, "__qualname__"):
        return (getattr(obj, "__module__", None), obj.__qualname__)
    text = repr(obj)
    return text if " at 0x" not in text else type(obj).__qualname__


#: NumPy operands up to this many bytes are hashed whole (BLAKE2b); larger ones by BLAKE2b of
#: :data:`SAMPLES` elements spread over them and a CRC-32 of all their bytes, read a piece of
#: :data:`PIECE` bytes at a time (a non-contiguous operand is copied one piece at a time).
WHOLE = 1 << 16
SAMPLES = 1024
PIECE = 1 << 22


def _padding(dtype: np.dtype) -> int | None:
    """The bytes of each real part of a ``dtype`` value that hold it, where the rest is
    padding: x87's 80-bit long double (``np.longdouble`` on x86) fills 10 of its 12 or 16
    bytes and leaves the others uninitialised, so they differ between locales that hold the
    same value.  None where every byte counts."""
    if dtype.kind in "fc" and dtype.itemsize > (16 if dtype.kind == "c" else 8):
        part = dtype.itemsize // (2 if dtype.kind == "c" else 1)
        if part > 10 and np.finfo(dtype).nmant == 63:
            return part
    return None


def meaningful(a):
    """NumPy array or scalar ``a`` itself, or for a padded long double type (:func:`_padding`)
    an array of the 10 bytes of each real part: what has only bytes that are part of its values."""
    part = _padding(a.dtype)
    if part is None:
        return a
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(-1, part)[:, :10].copy()


def fingerprint(a: np.ndarray) -> tuple:
    """What tells NumPy operand ``a`` from another: its shape, dtype and a digest of its
    bytes (of its values' bytes only: :func:`meaningful`).  Every element counts: a small
    operand is hashed whole with BLAKE2b; a large one by BLAKE2b of evenly spread samples and
    a CRC-32 of all its bytes (zlib's, over a gigabyte a second), so two operands that differ
    anywhere are told apart (a difference that both misses the samples and is invisible to
    the CRC is one in 2**32 by chance)."""
    if _padding(a.dtype) is not None:
        shape, dtype = a.shape, a.dtype.str
        return (shape, dtype, *fingerprint(meaningful(a))[2:])
    flat = a.reshape(-1) if a.flags.c_contiguous or a.ndim <= 1 else None
    if a.nbytes <= WHOLE:
        return (a.shape, a.dtype.str, digest(np.ascontiguousarray(a).reshape(-1).view(np.uint8)))
    crc = 0
    if flat is not None and flat.flags.c_contiguous:
        crc = zlib.crc32(flat.view(np.uint8))
    elif flat is not None:
        step = max(1, PIECE // a.itemsize)
        for k in range(0, flat.size, step):
            crc = zlib.crc32(np.ascontiguousarray(flat[k:k + step]).view(np.uint8), crc)
    else:
        rows = max(1, PIECE // max(1, a[0].nbytes))
        for k in range(0, a.shape[0], rows):
            crc = zlib.crc32(np.ascontiguousarray(a[k:k + rows]).reshape(-1).view(np.uint8), crc)
    some = a.flat[np.arange(0, a.size, max(1, a.size // SAMPLES))]     # (only these elements copied)
    return (a.shape, a.dtype.str, crc, digest(some.view(np.uint8)))


def digest(data) -> int:
    """A 64-bit BLAKE2b digest of ``data`` (bytes or a byte array): values that differ
    between locales are told apart (a CRC's collisions can be made at will)."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


#: The words of an agreement (:func:`agree_words`): every agreement of the folding mode, an
#: element access and ``pg.barrier()`` reduce buffers of this one shape, so that two different
#: ones met at the same point still pair up and find that they differ.
WORDS = 20
_ACC, _COUNT, _FAILED, _DETAIL, _VALUE = 0, 2, 4, 5, 8       # pairs (x, ~x) at _ACC, _COUNT, _DETAIL
#: Where the words an agreement carries for its caller begin (:func:`agree_history`'s ``carry``:
#: a new array's window pool, :func:`pgas.comm.window.carried`), and how many there are.
_CARRY, CARRIED = 12, 8
_U64 = (1 << 64) - 1


#: Locales whose partial results ride in every agreement of the folding mode, each in a slot
#: of its own (16 bytes, and a bit of the presence word): all of them up to :data:`MAX_SLOTS`
#: locales, so a whole-array reduction is its own agreement (:func:`gather_partials`); none
#: beyond, where the slots would make every agreement large.
SLOTS = 0
MAX_SLOTS = 64


def width() -> int:
    """How many words an agreement has (:data:`WORDS`, the presence word and the slots)."""
    return WORDS + 1 + 2 * SLOTS


def agree_words(detail: int | None = None, failed: bool = False, value: np.ndarray | None = None,
                part: np.ndarray | None = None) -> np.ndarray:
    """This locale's words of an agreement (bitwise-or'ed over locales): the running hash and
    count of folded calls (zero when not folding), an error flag, a ``detail`` hash, the
    bytes of a ``value`` (up to 16; from one locale only) and this locale's partial result
    ``part`` (up to 16 bytes) in its slot."""
    w = np.zeros(width(), dtype=np.uint64)
    acc, count = history_words() if folding else (0, 0)
    k = 0 if detail is None else detail
    w[_ACC], w[_ACC + 1], w[_COUNT], w[_COUNT + 1] = acc, ~acc & _U64, count, ~count & _U64
    w[_FAILED] = int(failed)
    w[_DETAIL], w[_DETAIL + 1] = k, ~k & _U64
    if value is not None:
        w.view(np.uint8)[8 * _VALUE:8 * _VALUE + value.itemsize] = value.view(np.uint8)
    if part is not None:
        i = process.here()
        w[WORDS] = 1 << i
        at = 8 * (WORDS + 1 + 2 * i)
        w.view(np.uint8)[at:at + part.itemsize] = np.ascontiguousarray(part).reshape(1).view(np.uint8)
    return w


def gather_partials(op: str, arrays, args, part: np.ndarray | None, dtype,
                    error: BaseException | None = None) -> np.ndarray:
    """Collective (folding mode, :data:`SLOTS` set): agree on the calls folded so far and on
    this one (``op``, ``arrays``, ``args``, as :func:`fold_call` takes them) and gather every
    locale's partial result ``part`` (a 0-d array of ``dtype``, at most 16 bytes; None where
    a locale has none) in the same single reduction.  Returns the partials, in locale order.
    ``error``: this locale's error for the call, raised alike on every locale (see
    :func:`agree_history`) once the calls are found the same."""
    frame = call_site()
    fold_call(op, arrays, args, frame)
    out = _or(agree_words(failed=error is not None, part=None if part is None else np.asarray(part, dtype)))
    if agreed(out, frame):
        agreement.raise_agreed(error)
    present = int(out[WORDS])
    raw = out[WORDS + 1:].view(np.uint8)
    picks = [raw[16 * i:16 * i + dtype.itemsize] for i in range(SLOTS) if present >> i & 1]
    return np.concatenate(picks).view(dtype) if picks else np.empty(0, dtype)


def _differ(out: np.ndarray, at: int) -> bool:
    """Whether the pair ``(x, ~x)`` at ``at`` of a reduced agreement held different ``x``."""
    return bool(out[at] & out[at + 1])


def agreed(out: np.ndarray, frame=None) -> bool:
    """After an agreement reduced to ``out``: raise :class:`CollectiveMismatch` (collective)
    if the folded calls differ, else start a new record; True if some locale failed."""
    if _differ(out, _ACC) or _differ(out, _COUNT):
        history_mismatch(frame)
    if folding:
        reset()
    return bool(out[_FAILED])


def _or(words: np.ndarray) -> np.ndarray:
    """The bitwise or over locales of an agreement's words (one small allreduce, of the shape
    ``pg.barrier()``'s has: :data:`WORDS` and the barrier's own)."""
    n = len(words)
    return collectives.bitwise_or(np.concatenate([words, np.zeros(collectives.BARRIER_WORDS, dtype=np.uint64)]))[:n]


def agree_history(op: str = "", arrays=(), args=(), frame=None, error: BaseException | None = None,
                  carry: np.ndarray | None = None) -> np.ndarray | None:
    """Collective (folding mode): agree on the calls folded since the last agreement, then
    start a new record.  ``op`` (with ``arrays``, ``args``, ``frame``): a call agreed now
    itself, folded first (a reduction, say).  Raises :class:`CollectiveMismatch` on every
    locale if the calls differ, else ``error`` (an error this locale has for the call) on
    every locale if some locale has one (see :func:`pgas.comm.agreement.raise_agreed`).
    ``carry``: up to :data:`CARRIED` uint64 words that ride in the same reduction, or'ed
    bitwise over locales; the or'ed words are returned once the calls are found the same."""
    if op:
        fold_call(op, arrays, args, frame)
    w = agree_words(failed=error is not None)
    if carry is not None:
        w[_CARRY:_CARRY + len(carry)] = carry
    out = _or(w)
    if agreed(out, frame):
        agreement.raise_agreed(error)
    return None if carry is None else out[_CARRY:_CARRY + CARRIED]


_SIGNATURES: dict = {}      # (op, arrays' numbers, shapes and dtypes) -> the hash of a call without args
SIGNATURES = 4096


def fold_call(op: str, arrays=(), args=(), frame=None) -> None:
    """:func:`fold` a call by its signature (``op``, the arrays' numbers, shapes and dtypes,
    ``args``): what strict checking compares, less the call site.  The hash of a call
    without ``args`` is made once per signature (a call repeated in a loop: ``update``)."""
    sig = (op, tuple([a[:3] for a in arrays]))
    h = _SIGNATURES.get(sig) if not args else None
    if h is None:
        h = _hash((op, sig[1], stable_repr(args)))
        if not args:
            if len(_SIGNATURES) >= SIGNATURES:
                _SIGNATURES.clear()
            _SIGNATURES[sig] = h
    fold(h, op, arrays, args, site_of(frame))


#: Signatures of the calls :func:`fold_known` has seen agreed (at most :data:`KNOWN`; then
#: forgotten all at once, alike on every locale).
_known: set = set()
KNOWN = 4096


def fold_known(op: str, arrays=(), args=(), frame=None) -> None:
    """:func:`fold_call` for a call whose arguments decide which messages it exchanges with
    its neighbours (a ghost update, a shift): its first call with a signature is agreed
    at once, later ones only folded.  Locales passing different arguments (periodic on
    one locale only, other shifts) thus meet in that agreement and raise
    :class:`CollectiveMismatch`, instead of exchanging messages that do not pair (an MPI
    truncation error on one locale, a wait on another).  The locales of a program that
    makes the same calls see the same signatures in the same order, so they agree at the
    same calls; a locale repeating a signature that another does not is left to the
    stall probe (:func:`_on_stall`), which names the two calls."""
    h = _hash((op, tuple(a[:3] for a in arrays), stable_repr(args)))
    fold(h, op, arrays, args, site_of(frame))
    if h not in _known:
        agree_history(frame=frame)
        if len(_known) >= KNOWN:
            _known.clear()
        _known.add(h)


def reset() -> None:
    """Start a new record: the locales have just agreed on the one before."""
    global _agreements
    _agreements += 1
    _log.clear()


# -- stalled waits: locales that wait for each other at calls that differ -----------------
_agreements = 0          # how many agreements this locale has completed
_told = None             # the (agreements, count) this locale last told the others it waits at
_STALL_TAG = 71
_SHOWN = 64              # the last calls of a record that a stalled locale describes


def _on_stall() -> None:
    """A wait of this locale has gone on for a while (:func:`pgas.comm.waits.on_stall`): in
    the folding mode, tell the other locales which calls it made since the last agreement
    (once per point), and compare with what they told: if some locale's calls are not a
    prefix of this one's or the other way round, the two wait at calls that differ, for
    each other, forever: end the job with a :class:`CollectiveMismatch` naming them."""
    global _told
    if not folding:
        return
    c, MPI = runtime.stall_comm(), process.mpi()
    me, frame = process.here(), call_site()
    if _told != (_agreements, len(_log)):
        _told = (_agreements, len(_log))
        start = max(0, len(_log) - _SHOWN)
        state = (me, _agreements, [e[0] for e in _log], start, [_describe(e, frame) for e in _log[start:]])
        for r in range(process.num_locales()):
            if r != me:
                c.isend(state, dest=r, tag=_STALL_TAG)      # eager: small; completes without the receiver
    status = MPI.Status()
    while c.Iprobe(source=MPI.ANY_SOURCE, tag=_STALL_TAG, status=status):
        other = c.recv(source=status.Get_source(), tag=_STALL_TAG)
        text = _diverged(other, frame)
        if text:
            process.report_and_abort(CollectiveMismatch(text))


def _diverged(other, frame) -> str | None:
    """The message naming where this locale's calls and ``other``'s (a stalled locale's
    state) differ, or None if one is a prefix of the other (one is only behind)."""
    r, agreements, hashes, start, shown = other
    if agreements != _agreements:
        return None                                     # one of them is still finishing an agreement
    mine = [e[0] for e in _log]
    i = next((k for k, (a, b) in enumerate(zip(mine, hashes)) if a != b), None)
    if i is None:
        return None
    me = process.here()
    ours = _describe(_log[i], frame)
    theirs = shown[i - start] if i >= start else "another call"
    return (f"locale {me} called {ours} and locale {r} called {theirs} (the {_ordinal(i + 1)} collective call "
            f"since the locales last agreed); each waits there for the other, so the job ends")


waits.on_stall(_on_stall)


def history_words() -> tuple:
    """The hash of the calls folded since the locales last agreed and their count (for a
    collective that carries them itself): Python's hash of the tuple of their hashes, the
    same in every process (a tuple's hash is made from its items' and an integer's is its
    value modulo a prime: no per-process salt, unlike a string's), made once per agreement
    rather than per call; (0, 0) for none."""
    n = len(_log)
    return (hash(tuple([e[0] for e in _log])) & _MASK if n else 0), n


def carried() -> bytes:
    """What a collective that agrees on the folded calls in its own messages carries (a
    :func:`pgas.comm.exchange`): the running hash and count as 16 bytes, zeros when not
    folding (so every locale's messages have one shape whatever its mode)."""
    return np.array(history_words() if folding else (0, 0), dtype=np.uint64).tobytes()


def exchanged(differ: bool, frame=None) -> None:
    """Collective, after a call that carried every locale's :func:`carried` words to every
    locale (``differ``: whether any two differed, the same on every locale): raise
    :class:`CollectiveMismatch` on every locale naming the first call that differs, else
    start a new record (the locales have just agreed on this one)."""
    if differ:
        history_mismatch(frame)
    if folding:
        reset()


def history_mismatch(frame=None) -> None:
    """Collective, once every locale knows the folded calls differ: find the first that
    differs and raise :class:`CollectiveMismatch` naming what each locale called there."""
    frame = frame if frame is not None else call_site()       # names the arrays by the user's variables
    hashes = collectives.agreement_allgather([e[0] for e in _log])
    n = max(len(h) for h in hashes)
    first = next((i for i in range(n) if len({h[i] if i < len(h) else None for h in hashes}) > 1), n - 1)
    mine = _describe(_log[first], frame) if first < len(_log) else "nothing more"
    seen = collectives.agreement_allgather(mine)
    if all(c == seen[0] for c in seen):     # the same call with other values: its arguments, if they differ
        every = collectives.agreement_allgather(_log[first][3] if first < len(_log) else ())
        if len({repr(x) for x in every}) > 1 and not any(_holds_operand(x) for x in every):
            seen = [f"{c} with arguments {x!r}" for c, x in zip(seen, every)]
        else:
            seen = [f"{c} with values that differ between locales (a scalar, a NumPy operand, an index or "
                    f"an argument)" for c in seen]
    groups: dict[str, list[int]] = {}
    for r, c in enumerate(seen):
        groups.setdefault(c, []).append(r)
    reset()
    realign_statements()
    calls = "; ".join(f"{_locales(rs)} called {c}" for c, rs in groups.items())
    raise CollectiveMismatch(f"{calls} (the {_ordinal(first + 1)} collective call since the locales last agreed)")


def realign_statements() -> None:
    """Collective, before :class:`CollectiveMismatch` is raised on every locale: the locales
    may have run different statements (one ran a statement the others skipped), so their
    counts of completed statements, which one-sided operations wait on
    (:mod:`pgas.comm.epochs`), are set to the most of any; else a later ``A.get`` would wait
    forever for a statement the others never run."""
    epochs.realign(max(collectives.agreement_allgather(epochs.completed())))


def _holds_operand(args) -> bool:
    """Whether plain arguments hold a NumPy operand's fingerprint (``("np", ...)``,
    ``("ndarray", ...)``), which says nothing to a reader: such calls are said to differ
    in their values."""
    if type(args) is not tuple:
        return False
    if args and args[0] in ("np", "ndarray"):
        return True
    return any(_holds_operand(x) for x in args)


def _describe(entry, frame) -> str:
    _, op, arrays, args, site = entry
    try:
        text = op.format(*[_name(a, frame) for a in arrays])
    except (IndexError, KeyError, ValueError):
        text = op
    where = f" at {os.path.basename(site[0])}:{site[1]}" if site else ""
    return f"{text}{where}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def call_site():
    """The user's frame: the first one outside the ``pgas`` package (and NumPy, whose
    operator mixins forward ``A += 1`` to pgas); None if none."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_SKIPPED):
        f = f.f_back
    return f


_LIBRARY_CODE: dict = {}     # id(code object) -> (it, whether it is the library's or NumPy's): see _in_library
CODES = 1 << 16


def _in_library(code) -> bool:
    """Whether ``code`` (a frame's code object) is in a file that call sites skip: for a
    code object seen before, one look-up by its id (kept alive with it, so the id is not
    reused; a code object's own hash reads all its contents), not a comparison with
    every prefix."""
    got = _LIBRARY_CODE.get(id(code))
    if got is not None and got[0] is code:
        return got[1]
    if len(_LIBRARY_CODE) >= CODES:
        _LIBRARY_CODE.clear()
    skipped = code.co_filename.startswith(_SKIPPED)
    _LIBRARY_CODE[id(code)] = (code, skipped)
    return skipped


def _where(frame) -> str:
    if frame is None:
        return ""
    return f" at {os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


_hooked = False
_ended = False
_END = "the end of the program"


def _hook_exit() -> None:
    """Arrange a last check at interpreter exit, so a locale still waiting in a collective
    that the others never made gets a :class:`CollectiveMismatch` instead of hanging
    while they end.  It must run before the ``atexit`` handlers (freeing windows is
    collective too), so it goes where Python runs exit calls before them."""
    global _hooked
    _hooked = True
    try:
        threading._register_atexit(_at_exit)
    except (AttributeError, RuntimeError):           # not CPython >= 3.9, or already shutting down
        atexit.register(_at_exit)


def _at_exit() -> None:
    global _ended
    if _ended or not (enabled or folding) or process._MPI is None or process.mpi().Is_finalized():
        return
    if process.exit_status() not in (None, 0):
        return                        # sys.exit(N): the job ends with N (runtime's exit hook)
    _ended = True
    try:
        if enabled:
            collective(_END)
        else:
            agree_history(_END)
    except CollectiveMismatch as e:
        process.report_and_abort(e)


def at_end() -> None:
    """The last check (once), when a locale's script ends: under ``pgas run`` before it
    waits for the others, so a locale left in a collective they never made gets a
    :class:`CollectiveMismatch` rather than the watchdog's hang report."""
    _at_exit()


def _hash(obj) -> int:
    return int.from_bytes(hashlib.blake2b(repr(obj).encode(), digest_size=8).digest(), "little") & _MASK


def collective(op: str, arrays=(), args=(), detail=None, error: BaseException | None = None, show=None) -> None:
    """Collective: agree that every locale is making this call; raise otherwise.

    Parameters
    ----------
    op : str
        What the call is, as shown in messages: a template whose ``{0}``, ``{1}``...
        stand for ``arrays`` (``"{0}.sum()"``).  Part of the signature.
    arrays : tuple
        Per array a plain tuple ``(number, shape, dtype, id, name)``: the first three
        are the signature, ``id`` (the Python object id) and ``name`` only name it.
    args : tuple
        Further plain values that must agree (part of the signature).
    detail : hashable, optional
        Arguments compared only once every locale is known to make this call without
        an ``error`` (a scalar index): a difference is a mismatch too.
    error : BaseException, optional
        An error this locale already has for this call (an index out of range): if
        the signatures agree, it is raised on every locale (see :func:`agreement.agree`).
    show : callable, optional
        Makes the displayed call (``op`` with ``detail`` filled in) on a mismatch.
    """
    if not _hooked:
        _hook_exit()
    frame = call_site() if op != _END else None
    site = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None
    h = _hash((op, tuple(a[:3] for a in arrays), stable_repr(args), site))
    w = agree_words(None if error is not None or detail is None else _hash(detail), error is not None)
    w[_ACC], w[_ACC + 1] = h, ~h & _U64
    out = _or(w)
    if _differ(out, _ACC):
        _mismatch(op if show is None else show(), arrays, frame, error, args)
    if out[_FAILED]:
        agreement.raise_agreed(error)
    if _differ(out, _DETAIL):
        _mismatch(op if show is None else show(), arrays, frame, error, args)


def element(code: int, array: tuple, loc, error, value, dtype, show, written=None):
    """Collective, without strict checking: a scalar read (``code`` 1; ``value`` the owner's
    element as a 1-element array, else None) or write (``code`` 2) of element
    ``loc = (owner, offset)`` of ``array``.

    One agreement (:func:`agree_words`) agrees on the calls folded since the last one and
    this one (the kind and the array), then on the element, spreads any ``error`` (a bad
    index or value on some locale, raised on all alike) and, for a read, carries the
    owner's value; for a write, ``written`` (the value as stored, a NumPy array) is part of
    the element's agreement.  Returns the value read (or None)."""
    frame = call_site() if folding else None
    if folding:
        fold_call("{0}[...]" if code == 1 else "{0}[...] = ...", (array,), (), frame)
    detail = _hash((code, array[0], loc, None if written is None else digest(np.ascontiguousarray(meaningful(written)).tobytes())))
    out = _or(agree_words(None if error is not None else detail, error is not None, value))
    if agreed(out, frame):
        agreement.raise_agreed(error)
    if _differ(out, _DETAIL):
        _mismatch(show(), (array,), frame if frame is not None else call_site(), None)
    if code != 1:
        return None
    if value is not None:
        collectives.record_to_all(loc[0], dtype.itemsize)
    return out.view(np.uint8)[8 * _VALUE:8 * _VALUE + dtype.itemsize].view(dtype)[0]


def _mismatch(shown: str, arrays, frame, error, args=()) -> None:
    """Collective: exchange what each locale called and raise :class:`CollectiveMismatch`."""
    def calls(name) -> list[str]:
        try:
            text = shown.format(*[name(a) for a in arrays])
        except (IndexError, KeyError, ValueError):
            text = shown
        if error is not None:
            text += f" ({type(error).__name__}: {error})"
        return collectives.agreement_allgather(f"{text}{_where(frame)}")

    seen = calls(lambda a: _name(a, frame))
    if all(c == seen[0] for c in seen):     # the same text everywhere: name the arrays in full
        seen = calls(lambda a: f"{_name(a, frame)} (array #{a[0]}, {np.dtype(a[2])} of shape {a[1]})")
        if all(c == seen[0] for c in seen):
            every = collectives.agreement_allgather(args)
            seen = [f"{c} with arguments {x!r}" if any(every) else f"{c} with values that differ between locales"
                    for c, x in zip(seen, every)]
    groups: dict[str, list[int]] = {}
    for r, c in enumerate(seen):
        groups.setdefault(c, []).append(r)
    realign_statements()
    raise CollectiveMismatch("; ".join(f"{_locales(rs)} called {c}" for c, rs in groups.items()))


def _name(array: tuple, frame) -> str:
    """The caller's variable bound to the array with this id, else its name or number."""
    number, _, _, ident, name = array
    if frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            for var, val in scope.items():
                if id(val) == ident and getattr(val, "_seq", number) == number and not var.startswith("_"):
                    return var
    return name if name else f"array#{number}"


def _locales(ranks: list[int]) -> str:
    """``locale 0``, ``locales 1-3``, ``locales 0, 2``."""
    if len(ranks) == 1:
        return f"locale {ranks[0]}"
    runs, start = [], ranks[0]
    for a, b in zip(ranks, ranks[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a > start else f"{a}")
            start = b
    return "locales " + ", ".join(runs)


def barrier() -> None:
    """Collective: wait for every locale; writes made before it (local stores and one-sided
    puts) are visible after it.  (``pg.barrier``; checked like every collective.)"""
    if enabled:
        collective("pg.barrier()")
    frame = None
    if folding:
        frame = call_site()
        fold_call("pg.barrier()", frame=frame)
    out = collectives.barrier(agree=True, words=agree_words())
    agreed(out, frame)
    collectives.count_user_barrier()              # ghost cells stop being current (one-sided writes)
