"""Translate JE's Java exceptions into pycrawler's one-line errors.

JE 3.3 throws a checked ``DatabaseException`` for nearly everything, so the message text
is what tells a locked environment from a corrupt log; JE 7 has subclasses for these. A store
whose databases use the writing program's own classes (a B-tree comparator: JE loads it to
open the store) fails deep in JE's recovery; the missing class, found among the causes, is
what the user needs to hear of.

A full disk is recognised by cause, never by text. A write refused for space reaches Java as
an ``IOException`` carrying no errno, only the C library's ``strerror`` text in the process's
locale; JE wraps it (JE 3.3: RunRecoveryException "IOE during write"; JE 7+: LogWriteException).
So an ``IOException`` among the causes is a full disk when the filesystem of the store, asked
again now, refuses this process a little space with the errno of a full disk (``ENOSPC`` or
``EDQUOT``, see :func:`_refuses_space`): what failed JE's write then fails ours. An
``IOException`` on a filesystem with room (a failing device, a file gone) is not a full disk,
whatever its text says. JE 7+'s own ``DiskLimitException`` (below ``je.freeDisk``) is one by
its class.
"""

from __future__ import annotations

import errno
import os
import re

from .. import jvm
from ..errors import DISK_FULL_ERRNOS, BadInput, DiskFull, PycrawlerError, SetupError, StoreLocked

_LOG_VERSION = re.compile(r"Expected log version (\d+) or earlier but found (\d+)")
_MISSING_CLASS = ("java.lang.ClassNotFoundException", "java.lang.NoClassDefFoundError")
_INVALID_CLASS = re.compile(r"java\.io\.InvalidClassException: ([\w.$]+); (.*)")
_SERIAL_VERSION_UIDS = re.compile(r"stream classdesc serialVersionUID = (-?\d+), "
                                  r"local class serialVersionUID = (-?\d+)")


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


def _is_a(throwable, class_name: str) -> bool:
    """Whether ``throwable``'s class is ``class_name`` or extends it (by name, so that py4j's
    proxies of a gateway's exceptions answer as JPype's do)."""
    cls = throwable.getClass()
    while cls is not None:
        if str(cls.getName()) == class_name:
            return True
        cls = cls.getSuperclass()
    return False


SPACE_PROBE_BYTES = 64 << 10
"""What the store's filesystem must still give for a failed write not to be a full disk's: a
write refused for space has first filled the filesystem to its last block."""


def _refuses_space(folder: str) -> bool:
    """Whether the filesystem of ``folder`` refuses this process :data:`SPACE_PROBE_BYTES` now
    for want of space or quota. Asked, as the failed write asked, by allocating them
    (``posix_fallocate``, which answers by errno) to an unnamed file there (``O_TMPFILE``: the
    folder gains no entry, even a read-only store's). A filesystem without unnamed files is
    judged by its free blocks (``statvfs``, blind to quotas)."""
    try:
        fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR):  # EISDIR: a kernel that predates O_TMPFILE
            return exc.errno in DISK_FULL_ERRNOS
        usage = os.statvfs(folder)
        free_blocks = usage.f_bfree if os.geteuid() == 0 else usage.f_bavail  # root may use the reserve
        return free_blocks * usage.f_frsize < SPACE_PROBE_BYTES
    try:
        os.posix_fallocate(fd, 0, SPACE_PROBE_BYTES)
    except OSError as exc:
        return exc.errno in DISK_FULL_ERRNOS
    finally:
        os.close(fd)
    return False


def _store_folder(where: str) -> str | None:
    """The folder of the store that ``where`` names: every caller names the store's folder first,
    maybe followed by `` database 'name'``, so it is the longest start of ``where`` ending at a
    space or at its end that is a folder."""
    ends = [len(where), *(i for i in range(len(where) - 1, 0, -1) if where[i] == " ")]
    return next((where[:end] for end in ends if os.path.isdir(where[:end])), None)


def _disk_full(exc, where: str) -> bool:
    """Whether ``exc``, raised while working on ``where``, is a full disk's (module docstring)."""
    causes = _causes(exc)
    if any(_is_a(cause, "com.sleepycat.je.DiskLimitException") for cause in causes):
        return True
    if not any(_is_a(cause, "java.io.IOException") for cause in causes):
        return False
    folder = _store_folder(where)
    return folder is not None and _refuses_space(folder)


def _missing_class(exc) -> str | None:
    """The name of the class whose absence caused ``exc``, if one did."""
    for cause in _causes(exc):
        if str(cause.getClass().getName()) in _MISSING_CLASS:
            return str(cause.getMessage() or "?").replace("/", ".")
    return None


def _class_version_mismatch(exc, where: str) -> SetupError | None:
    """The error for ``exc`` when Java could not read a stored object because the class path
    holds another version of its class (JE deserializes a B-tree comparator to open a store):
    the class named, and both ``serialVersionUID`` values when that is the difference. JE 7+
    chains Java's ``InvalidClassException``; JE 3.3 keeps only its text, in the message of the
    exception it wraps. JE's own outer message calls the log damaged (JE 7+: ``LOG_INTEGRITY``)
    or says nothing of use (JE 3.3: ``last LSN=...``)."""
    found = next(filter(None, (_INVALID_CLASS.search(str(cause.toString())) for cause in _causes(exc))), None)
    if found is None:
        return None
    name, reason = found.groups()
    uids = _SERIAL_VERSION_UIDS.search(reason)
    differs = (f"serialVersionUID {uids.group(1)}, and the class path has a version of the class with "
               f"serialVersionUID {uids.group(2)}" if uids else f"a form the class path's version of the class "
               f"cannot read ({reason.strip()})")
    return SetupError(f"{where} holds objects of the class {name} with {differs}: a class-version mismatch, not "
                      "damage: put the version of the class that the writing program used on PYCRAWLER_CLASSPATH")


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
    if mismatch := _class_version_mismatch(exc, where):
        return mismatch
    if m := _LOG_VERSION.search(msg):
        return SetupError(
            f"{where} has JE log version {m.group(2)}, newer than the loaded JE reads ({m.group(1)}): "
            "open it in a process of its own, where pycrawler chooses a JE that reads it")
    if _disk_full(exc, where):
        return DiskFull(f"{where}: the disk is full ({msg}): free some space, then run the same command to resume")
    if "EnvironmentLocked" in cls or "lock" in msg.lower() and ("je.lck" in msg or "single writer" in msg):
        return StoreLocked(f"{where} is locked by another process (JE allows one writer): {msg}")
    if "DatabaseNotFound" in cls or "Database" in msg and "not found" in msg:
        return BadInput(f"{where}: {msg}")
    if _out_of_heap(exc):   # JE then reports JAVA_ERROR, "recovery may not be possible": the store is not to blame
        heap = os.environ.get("PYCRAWLER_HEAP", jvm.DEFAULT_HEAP)
        return SetupError(f"{where}: the JVM ran out of heap (PYCRAWLER_HEAP={heap}): set PYCRAWLER_HEAP larger "
                          "(e.g. PYCRAWLER_HEAP=2g) and run the command again")
    if any(s in cls + msg for s in ("Checksum", "checksum", "LogFileNotFound", "corrupt", "Corrupt", "EnvironmentFailure")):
        return BadInput(f"{where} is damaged: {msg}")
    return PycrawlerError(f"{where}: {cls.rsplit('.', 1)[-1]}: {msg}")


class je_errors:  # a context manager named as the function it was, as contextlib's are
    """Run a block, turning any Java exception into the matching pycrawler error (``renames``:
    as :func:`translate` takes them).

    A class, not a generator: a generator's context manager throws the exception into the
    generator, which sets its traceback, and GraalPy refuses to set anything on a Java exception."""

    __slots__ = ("where", "renames")

    def __init__(self, where: str, renames: dict[str, str] | None = None):
        self.where, self.renames = where, renames

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, traceback) -> bool:
        if exc is not None and isinstance(exc, jvm.JavaException):
            raise translate(jvm.throwable(exc), self.where, self.renames) from exc
        return False
