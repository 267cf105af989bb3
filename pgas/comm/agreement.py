"""Errors raised on every locale alike: an agreement on whether any locale failed, and
the first failing locale's error raised everywhere, naming the locales that failed."""

from __future__ import annotations

import sys

import numpy as np

from . import trace
from .collectives import allgather, waited
from .process import mpi
from .runtime import comm


class LocaleError(RuntimeError):
    """An error raised on every locale alike, carrying the message of the first locale that failed."""


def agree(error: BaseException | None) -> None:
    """Collective: if any locale passes an error, raise it on every locale alike.

    Use where locales may see different inputs (their own indices, say); errors
    that follow from replicated arguments are raised directly, with no messages.
    A locale that passed an error raises it; the others raise an instance of the
    same type that is also a :class:`LocaleError` (see :func:`raise_agreed`), so
    ``except IndexError`` catches it on every locale.
    """
    t0 = trace.on and trace.now()
    flags = np.array([0 if error is None else 1], dtype=np.int64)
    failed = np.empty_like(flags)
    waited(comm().Iallreduce([flags, mpi().INT64_T], [failed, mpi().INT64_T], op=mpi().SUM))
    if t0:
        trace.add("mpi", "MPI_Allreduce (agree on errors)", t0)
    if failed[0]:
        raise_agreed(error)


def raise_agreed(error: BaseException | None) -> None:
    """Collective, once every locale knows some locale failed: raise ``error`` here, or
    on a locale without one the first failing locale's error, as an instance of a
    subclass of both its type and :class:`LocaleError`, with ``.locale`` (the first
    failing locale, also set on the failing locales' own errors); plain
    :class:`LocaleError` if the type cannot be subclassed or made from a message.

    With several locales, every locale's message names the failing locales and what
    each said (:func:`where_failed`): ``"index 9 is out of bounds ... (on locale 1)"``,
    or ``"locale 1: index 9 ...; locale 3: index -20 ..."``; a failing locale's own
    error carries the same text.  Where a failing locale's message is not its one argument
    (an ``OSError``'s errno and text), every locale keeps the first one's message as it is."""
    own = error is not None and len(error.args) == 1 and isinstance(error.args[0], str) and \
        str(error) == error.args[0]                 # its message is its one argument: it can name the locales
    msgs = allgather(None if error is None else
                            (type(error).__module__, type(error).__qualname__, str(error), own))
    first = next(i for i, m in enumerate(msgs) if m is not None)
    if all(m is None or m[3] for m in msgs):
        text = where_failed([m[2] if m is not None else None for m in msgs])
    else:                                           # (an OSError's errno and text): as it said itself
        text = msgs[first][2]
    if error is not None:
        try:
            error.locale = first
            if own:
                error.args = (text,)
                if str(error) != text:          # its message is not read from its args (NumPy's AxisError)
                    fresh = type(error)(text)
                    fresh.locale = first
                    raise fresh.with_traceback(error.__traceback__) from error.__cause__
        except (AttributeError, TypeError):
            pass
        raise error
    module, qualname, _, _ = msgs[first]
    exc = _typed(module, qualname, text)
    if exc is None:
        exc = LocaleError(f"{qualname}: {text}")
    exc.locale = first
    raise exc


#: How many different messages :func:`where_failed` quotes.
QUOTED = 4


def where_failed(texts: list) -> str:
    """One message for every locale from each locale's error message (None where it had
    none), naming the failing locales: the message and ``(on locale k)`` (or ``(on locales
    1, 3)``) if they all said the same (unchanged at one locale, or if it already says
    ``locale k``), else ``locale k: message`` per message, the first :data:`QUOTED` of them,
    then the count of the others."""
    from .check import _locales

    if len(texts) == 1:
        return texts[0]
    said: dict[str, list[int]] = {}
    for r, t in enumerate(texts):
        if t is not None:
            said.setdefault(t, []).append(r)
    if len(said) == 1:
        (text, ranks), = said.items()
        if len(ranks) == 1 and f"locale {ranks[0]}" in text:
            return text
        return f"{text} (on {_locales(ranks)})"
    parts = [f"{_locales(ranks)}: {text}" for text, ranks in list(said.items())[:QUOTED]]
    rest = len(said) - QUOTED
    return "; ".join(parts) + (f"; and {rest} more message{'s' if rest > 1 else ''}" if rest > 0 else "")


_TYPED: dict = {}


def _typed(module: str, qualname: str, text: str):
    """An instance of the ``LocaleError`` subclass of the named exception type, or None."""
    try:
        cls = sys.modules[module]
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            return None
        if issubclass(cls, LocaleError):
            return cls(text)
        sub = _TYPED.get(cls)
        if sub is None:
            sub = _TYPED[cls] = type(cls.__name__, (cls, LocaleError), {"__module__": "pgas.comm"})
        return sub(text)
    except Exception:  # noqa: BLE001 - a layout conflict, a constructor needing other arguments...
        return None
