"""What a crawl leaves for its users beside the JE state: crawl.log, WARC files, the link trace.

:class:`CrawlOutputs` opens crawl.log and the trace for one run, after repairing what a killed
run left (a torn last line of crawl.log or the trace, ``.open`` WARC files cut back to their
last complete record and closed; the fetcher processes write the WARC files, :mod:`.fetchers`),
and turns a failed write into one error that stops the crawl:
:class:`~pycrawler.errors.DiskFull` when the disk is full, :class:`OutputFailed` otherwise.
After a failure every later write or flush fails the same way, so nothing is appended
behind a hole, and the engine commits nothing more.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

from .. import failpoints
from ..atomic_write import sync_directory
from ..errors import DiskFull, PycrawlerError
from ..parse.links import Outlink
from .crawllog import CrawlLog
from .durable import cut_torn_line, write_failure
from .trace import TraceWriter
from .warc import repair_open_files


class OutputFailed(PycrawlerError):
    """Writing crawl.log, a WARC file or the trace failed (other than a full disk)."""


class CrawlOutputs:
    """crawl.log at ``log_path`` and the trace at ``trace_path`` (optional), the WARC files left
    ``.open`` in ``warc_dir`` repaired; ``fsync``: :meth:`flush` reaches the disk; ``progress``: a meter
    while the WARC files a kill left ``.open`` are repaired."""

    def __init__(self, log_path: Path, warc_dir: Path | None = None, trace_path: Path | None = None, *,
                 fsync: bool = False, progress: bool | None = None):
        self.repairs: list[str] = []
        self._error: PycrawlerError | None = None
        with self._writing():
            for path in (log_path, trace_path):
                if path is not None and (cut := cut_torn_line(path)):
                    self.repairs.append(f"{path.name}: cut a torn last line of {cut:,} bytes")
            if warc_dir is not None and warc_dir.is_dir():
                self.repairs += [repair.line() for repair in repair_open_files(warc_dir, progress=progress)]
            self.log = CrawlLog(log_path, fsync=fsync)
            self.trace = TraceWriter(trace_path, fsync=fsync) if trace_path is not None else None
            if fsync:  # a line file just created must not vanish with its folder's entry
                for folder in {log_path.parent, *([trace_path.parent] if trace_path else [])}:
                    sync_directory(folder)

    @contextlib.contextmanager
    def _writing(self):
        if self._error is not None:
            raise self._error
        try:
            yield
        except OSError as exc:
            self._failed(*write_failure(exc))
            raise self._error from exc

    def _failed(self, reason: str, where: str, disk_full: bool) -> None:
        if disk_full:
            self._error = DiskFull(f"the disk is full{where}: the crawl stopped; what it counts as fetched is "
                                   "in its outputs; free some space, then run the same command to resume")
        else:
            self._error = OutputFailed(f"writing the crawl's outputs failed{where}: {reason}")

    def failed_elsewhere(self, reason: str, where: str, disk_full: bool) -> None:
        """A fetcher's WARC file could not be written: fail as a write here does (``where``:
        `` (FILE)``)."""
        self._failed(reason, where, disk_full)
        raise self._error

    def log_line(self, **fields) -> None:
        """A crawl.log line for a URL not fetched (see :meth:`CrawlLog.log`)."""
        with self._writing():
            self.log.log(**fields)

    def fetched(self, line: str, *, outlinks: list[Outlink] | None) -> None:
        """A fetch attempt: its crawl.log ``line`` (its fetcher formatted it and wrote its WARC
        records), its outlinks in the trace (``outlinks`` None: the body was not parsed)."""
        with self._writing():
            self.log.write(line)
            if self.trace is not None and outlinks is not None:
                self.trace.write(link.url for link in outlinks)

    def flush(self) -> int:
        """Everything written so far reaches the OS (with ``fsync``, the disk): the engine
        calls this before it commits completions. Returns crawl.log's length. (The fetchers'
        WARC records reached it before their fetches were reported: :mod:`.fetchers`.)"""
        with self._writing():
            self.log.flush()
            failpoints.hit("outputs.log_flushed")
            if self.trace is not None:  # after crawl.log
                self.trace.flush()
            return self.log.size()

    def close(self) -> None:
        """Flush and close every output. After a failure the line files keep what reached
        them: the next run repairs them."""
        for output in self._open():
            if self._error is None:
                with self._writing():
                    output.close()
            else:
                with contextlib.suppress(OSError):
                    output.close()

    def _open(self) -> Iterable:
        return [output for output in (self.log, self.trace) if output is not None]
