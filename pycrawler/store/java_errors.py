"""Translate JE's Java exceptions into pycrawler's one-line errors.

JE 3.3 throws a checked ``DatabaseException`` for nearly everything, so the message text
is what tells a locked environment from a corrupt log; JE 7 has subclasses for these. A store
whose databases use the writing program's own classes (a B-tree comparator: JE loads it to
open the store) fails deep in JE's recovery; the missing class, found among the causes, is
what the user needs to hear of.

A write refused for space reaches Java as an ``IOException`` whose message is the C library's
``strerror`` text in the process's locale (the JVM runs in this process, so Python's
:func:`os.strerror` gives the same text in the same locale): a full disk is recognised by that
text for ``ENOSPC`` and ``EDQUOT``, in the locale in force and in the C locale, as well as by
JE's own disk-limit exceptions (JE 7+).
"""

from __future__ import annotations

import contextlib
import os
import re

from ..errors import DISK_FULL_ERRNOS, BadInput, DiskFull, PycrawlerError, SetupError, StoreLocked

_LOG_VERSION = re.compile(r"Expected log version (\d+) or earlier but found (\d+)")
_MISSING_CLASS = ("java.lang.ClassNotFoundException", "java.lang.NoClassDefFoundError")


def _message(exc) -> str:
    msg = str(exc.getMessage() or exc.getClass().getSimpleName())
    # JE prefixes "(JE 3.3.98) "; keep the part a user can act on, on one line.
    msg = re.sub(r"^\(JE [\d.]+\)\s*", "", msg)
    return " ".join(msg.split())


def _causes(exc) -> list:
    """``exc`` and its causes: JE wraps a failed write's IOException (its RunRecoveryException
    says only "IOE during write"), and a missing class in two EnvironmentFailureExceptions."""
    chain = []
    for _ in range(8):  # a cause chain is short; the bound guards against a cycle
        if exc is None:
            break
        chain.append(exc)
        exc = exc.getCause()
    return chain


_C_LOCALE_TEXTS = frozenset({"No space left on device", "Disk quota exceeded"})


def _says_disk_full(text: str) -> bool:
    """Whether a Java exception's message is a ``strerror`` text of a full disk (module docstring)."""
    return any(full in text for full in _C_LOCALE_TEXTS | {os.strerror(n) for n in DISK_FULL_ERRNOS})


def _messages(exc) -> list[str]:
    return [str(cause.getMessage() or "") for cause in _causes(exc)]


def _missing_class(exc) -> str | None:
    """The name of the class whose absence caused ``exc``, if one did."""
    for cause in _causes(exc):
        if str(cause.getClass().getName()) in _MISSING_CLASS:
            return str(cause.getMessage() or "?").replace("/", ".")
    return None


def _out_of_heap(exc) -> bool:
    return any(str(cause.getClass().getName()) == "java.lang.OutOfMemoryError" for cause in _causes(exc))


def translate(exc, where: str, renames: dict[str, str] | None = None) -> PycrawlerError:
    """The pycrawler error for a JE exception raised while working on ``where``; ``renames``:
    paths JE's message may name -> the path to name instead (a read-only view's folder -> the
    store's own)."""
    cls = str(exc.getClass().getName())
    msg = _message(exc)
    for shown, meant in (renames or {}).items():
        msg = msg.replace(shown, meant)
    if missing := _missing_class(exc):
        return SetupError(
            f"{where} needs the class {missing} of the program that wrote it (JE loads such classes, a "
            "B-tree comparator say, to open the store): put that program's jar on PYCRAWLER_CLASSPATH")
    if m := _LOG_VERSION.search(msg):
        return SetupError(
            f"{where} has JE log version {m.group(2)}, newer than the loaded JE reads ({m.group(1)}): "
            "open it in a process of its own, where pycrawler chooses a JE that reads it")
    if "DiskLimit" in cls or any(map(_says_disk_full, _messages(exc))):
        return DiskFull(f"{where}: the disk is full ({msg}): free some space, then run the same command to resume")
    if "EnvironmentLocked" in cls or "lock" in msg.lower() and ("je.lck" in msg or "single writer" in msg):
        return StoreLocked(f"{where} is locked by another process (JE allows one writer): {msg}")
    if "DatabaseNotFound" in cls or "Database" in msg and "not found" in msg:
        return BadInput(f"{where}: {msg}")
    if _out_of_heap(exc):   # JE then reports JAVA_ERROR, "recovery may not be possible": the store is not to blame
        from ..jvm import DEFAULT_HEAP

        heap = os.environ.get("PYCRAWLER_HEAP", DEFAULT_HEAP)
        return SetupError(f"{where}: the JVM ran out of heap (PYCRAWLER_HEAP={heap}): set PYCRAWLER_HEAP larger "
                          "(e.g. PYCRAWLER_HEAP=2g) and run the command again")
    if any(s in cls + msg for s in ("Checksum", "checksum", "LogFileNotFound", "corrupt", "Corrupt", "EnvironmentFailure")):
        return BadInput(f"{where} is damaged: {msg}")
    return PycrawlerError(f"{where}: {cls.rsplit('.', 1)[-1]}: {msg}")


@contextlib.contextmanager
def je_errors(where: str, renames: dict[str, str] | None = None):
    """Run a block, turning any Java exception into the matching pycrawler error (``renames``:
    as :func:`translate` takes them)."""
    import jpype

    try:
        yield
    except jpype.JException as exc:
        raise translate(exc, where, renames) from exc
