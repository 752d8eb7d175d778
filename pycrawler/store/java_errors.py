"""Translate JE's Java exceptions into pycrawler's one-line errors.

JE 3.3 throws a checked ``DatabaseException`` for nearly everything, so the message text
is what tells a locked environment from a corrupt log; JE 7 has subclasses for these.

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


def _message(exc) -> str:
    msg = str(exc.getMessage() or exc.getClass().getSimpleName())
    # JE prefixes "(JE 3.3.98) "; keep the part a user can act on, on one line.
    msg = re.sub(r"^\(JE [\d.]+\)\s*", "", msg)
    return " ".join(msg.split())


def _messages(exc) -> list[str]:
    """The messages of ``exc`` and of its causes: JE wraps a failed write's IOException (its
    RunRecoveryException says only "IOE during write")."""
    texts = []
    for _ in range(8):  # a cause chain is short; the bound guards against a cycle
        if exc is None:
            break
        texts.append(str(exc.getMessage() or ""))
        exc = exc.getCause()
    return texts


_C_LOCALE_TEXTS = frozenset({"No space left on device", "Disk quota exceeded"})


def _says_disk_full(text: str) -> bool:
    """Whether a Java exception's message is a ``strerror`` text of a full disk (module docstring)."""
    return any(full in text for full in _C_LOCALE_TEXTS | {os.strerror(n) for n in DISK_FULL_ERRNOS})


def translate(exc, where: str) -> PycrawlerError:
    """The pycrawler error for a JE exception raised while working on ``where``."""
    cls = str(exc.getClass().getName())
    msg = _message(exc)
    if m := _LOG_VERSION.search(msg):
        return SetupError(
            f"{where} has JE log version {m.group(2)}, newer than the loaded JE reads ({m.group(1)}): "
            "set PYCRAWLER_CLASSPATH to a folder holding a JE that reads it (a Heritrix 3 lib/ has je-7.5.11.jar)")
    if "DiskLimit" in cls or any(map(_says_disk_full, _messages(exc))):
        return DiskFull(f"{where}: the disk is full ({msg}): free some space, then rerun the same command")
    if "EnvironmentLocked" in cls or "lock" in msg.lower() and ("je.lck" in msg or "single writer" in msg):
        return StoreLocked(f"{where} is locked by another process (JE allows one writer): {msg}")
    if "DatabaseNotFound" in cls or "Database" in msg and "not found" in msg:
        return BadInput(f"{where}: {msg}")
    if any(s in cls + msg for s in ("Checksum", "checksum", "LogFileNotFound", "corrupt", "Corrupt", "EnvironmentFailure")):
        return BadInput(f"{where} is damaged: {msg}")
    return PycrawlerError(f"{where}: {cls.rsplit('.', 1)[-1]}: {msg}")


@contextlib.contextmanager
def je_errors(where: str):
    """Run a block, turning any Java exception into the matching pycrawler error."""
    import jpype

    try:
        yield
    except jpype.JException as exc:
        raise translate(exc, where) from exc
