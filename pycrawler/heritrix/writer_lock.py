"""Is a crawler writing this JE environment right now? Asked of ``je.lck`` without locking it.

A JE process that opens an environment for writing holds an exclusive (POSIX) lock on
``je.lck``; read-only openers hold only shared locks, so they can sit beside a writer. A
query with ``F_GETLK`` for a *shared* lock therefore reports a conflicting lock only when a
writer holds one, and names its process. The query takes no lock, so it can never break or
delay the crawler's.

Why pycrawler refuses a store with a live writer rather than reading beside it: Heritrix keeps
``pending`` and ``alreadySeenUrl`` as deferred-write databases, which reach the log only at a
sync or a checkpoint, so what a reader sees of a running crawl is an old, partial picture of
its queues, and the writer's cleaner may remove files from under it. A checkpoint is the
consistent picture a crawler leaves for readers.

POSIX locks belong to a process: closing *any* descriptor of ``je.lck`` drops every lock this
process holds on it. :class:`WriterProbe` keeps its descriptor open until the environment is
closed, so the probe never drops the shared lock of pycrawler's own read-only JE.
"""

from __future__ import annotations

import fcntl
import os
import struct
from pathlib import Path

# struct flock on Linux: l_type, l_whence (shorts), l_start, l_len (off_t), l_pid (pid_t).
_FLOCK = struct.Struct("@hhqqi4x")
LOCK_FILE = "je.lck"


class WriterProbe:
    """An open descriptor of ``path/je.lck`` (when there is one) that answers who writes."""

    def __init__(self, path: Path):
        self.path = Path(path) / LOCK_FILE
        self._fd = os.open(self.path, os.O_RDONLY) if self.path.is_file() else None

    def writer_pid(self) -> int | None:
        """The process holding the write lock, or None when no process writes the environment."""
        if self._fd is None:
            return None
        query = _FLOCK.pack(fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0)
        answer = _FLOCK.unpack(fcntl.fcntl(self._fd, fcntl.F_GETLK, query))
        return None if answer[0] == fcntl.F_UNLCK else answer[4]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def writer_pid(path: Path) -> int | None:
    """The process writing the JE environment at ``path`` now, or None: one question, its
    descriptor closed again. Only for a process that holds no JE of ``path`` open (closing the
    descriptor would drop that JE's shared lock: :class:`WriterProbe` keeps it open instead)."""
    probe = WriterProbe(path)
    try:
        return probe.writer_pid()
    finally:
        probe.close()
