"""What the crawl's outputs share to survive a crash: flushed (or fsynced) before JE commits, a
torn tail cut on resume.

A flush pushes the outputs to the operating system (:func:`sync_file`; with ``--fsync`` to the
disk, which a power loss then cannot undo either) before it commits anything in JE: the commit
order of :class:`~pycrawler.crawl.flush.Committer`. What a kill -9 can leave is a half-written
last line or record: the next run cuts it off before appending (:func:`cut_torn_line`,
:func:`pycrawler.crawl.warc.repair`).
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import failpoints
from ..errors import DISK_FULL_ERRNOS

_TAIL_CHUNK = 1 << 16


def write_failure(exc: OSError) -> tuple[str, str, bool]:
    """A failed write as :meth:`~pycrawler.crawl.outputs.CrawlOutputs.failed_elsewhere` takes
    it: (reason, `` (FILE)``, whether the disk is full); the fetchers' WARC writes fail so too."""
    return str(exc.strerror or exc), f" ({exc.filename})" if exc.filename else "", exc.errno in DISK_FULL_ERRNOS


def sync_file(file, fsync: bool) -> None:
    """Push ``file``'s buffers to the operating system; with ``fsync``, to the disk too."""
    file.flush()
    if fsync:
        os.fsync(file.fileno())


def cut_torn_line(path: str | Path) -> int:
    """Cut ``path`` back to its last complete line (ending in ``\\n``); returns the bytes cut.

    A missing file cuts nothing. A file with no newline at all is emptied."""
    try:
        file = open(path, "r+b")
    except FileNotFoundError:
        return 0
    with file:
        size = file.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - _TAIL_CHUNK)
            file.seek(start)
            newline = file.read(end - start).rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        if end < size:
            file.truncate(end)
            file.flush()
            os.fsync(file.fileno())
            failpoints.hit("durable.torn_line_cut")
        return size - end
