"""The exceptions the command line turns into one clear line and an exit code.

Library code raises these (never a bare Java exception) so that a caller can catch
one family, and so the CLI never shows a stack trace for a user's mistake.
"""

import errno

DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
"""The errnos of a write refused for space: a full filesystem, or the user's quota spent."""


class PycrawlerError(Exception):
    """Something the user can fix; the message says what, and ideally how."""

    exit_code = 1


class BadInput(PycrawlerError):
    """The input (a path, a store, a file, an argument) is not what the command needs."""

    exit_code = 2


class SetupError(PycrawlerError):
    """The machine lacks something pycrawler needs (Java, the bridge jar, a newer JE)."""

    exit_code = 3


class StoreLocked(PycrawlerError):
    """Another process holds the environment's write lock (JE allows one writer)."""

    exit_code = 4


class DiskFull(PycrawlerError):
    """A filesystem the command writes to is full or below its free-space threshold: free
    space, then rerun the same command (exit 75, sysexits' EX_TEMPFAIL: try again later)."""

    exit_code = 75


def as_disk_full(exc: BaseException) -> DiskFull | None:
    """The :class:`DiskFull` for an ``OSError`` of a full disk, else None. Known by its errno,
    never its text, which is in the process's locale."""
    if not isinstance(exc, OSError) or exc.errno not in DISK_FULL_ERRNOS:
        return None
    where = f" ({exc.filename})" if exc.filename else ""
    return DiskFull(f"the disk is full{where}: free some space, then rerun the same command")
