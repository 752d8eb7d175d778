"""Free-space watch over the folders a crawl writes to (Heritrix's ``DiskSpaceMonitor``).

A crawl that runs a disk full mid-write can only stop in a hurry; one that sees the free
space fall below a threshold stops on its own terms: it polls nothing more, lets the
fetches in flight finish, flushes, commits and closes, and the same command resumes once
space is freed. The threshold must cover what a crawl writes between two checks and on
its way out (a flush of finished pages, JE's closing checkpoint), hence a few hundred MB
by default rather than Heritrix's 8 GiB, which is sized for its larger JE logs and WARCs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import DiskFull

DEFAULT_MIN_FREE_MB = 256
_MB = 1 << 20


def free_bytes(path: str | Path) -> int:
    """Bytes an unprivileged process may still write on ``path``'s filesystem."""
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


class DiskSpaceMonitor:
    """Checks the filesystems of ``folders`` (each once) against ``min_free_mb``."""

    def __init__(self, folders: Iterable[str | Path], min_free_mb: int = DEFAULT_MIN_FREE_MB):
        self.min_free_mb = min_free_mb
        self.folders: list[Path] = []
        devices = set()
        for folder in folders:
            device = os.stat(folder).st_dev
            if device not in devices:
                devices.add(device)
                self.folders.append(Path(folder))

    def shortage(self) -> DiskFull | None:
        """The error to stop with if a watched filesystem is below the threshold, else None."""
        if self.min_free_mb <= 0:
            return None
        for folder in self.folders:
            free = free_bytes(folder)
            if free < self.min_free_mb * _MB:
                return DiskFull(f"only {free / _MB:,.1f} MB free on the filesystem of {folder} "
                                f"(--min-free {self.min_free_mb} MB): the crawl stopped with everything flushed; "
                                "free some space, then run the same command to resume")
        return None
