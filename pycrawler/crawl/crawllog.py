"""``DIR/crawl.log``: one line per fetch attempt, in Heritrix 3's crawl.log format.

Columns, space-separated, as Heritrix's ``UriProcessingFormatter`` writes them (an empty
value is ``-``):

====  ======================  ================================================================
 #    column                  form
====  ======================  ================================================================
 1    log time                ISO 8601 UTC with milliseconds: ``2024-05-01T12:00:00.123Z``
 2    fetch status            right-aligned in 5: HTTP status or a negative fetch code
 3    size                    right-aligned in 10: body bytes received, ``-`` for none
 4    URL                     as fetched
 5    discovery path          hop letters from the seed (``LLER``); ``-`` for a seed
 6    via                     the URL it was found on; ``-`` for a seed
 7    MIME type               Content-Type cut at ``;``, ``,`` or a space; ``no-type`` if none
 8    worker                  ``#`` and the fetch slot number, zero-padded to 3
 9    fetch time + duration   17-digit UTC ``yyyyMMddHHmmssSSS`` of the start, ``+``, ms
10    digest                  ``sha1:`` base32 of the payload
11    source tag              the seed a URL descends from (``-``: not tracked)
12    annotations             comma-separated: ``lenTrunc``, ``timeTrunc``, ``decodeTrunc``...
====  ======================  ================================================================

Tools that read Heritrix logs (crawl-log analysers, deduplication indexers) read these.
The file is appended to, so a resumed crawl continues its log.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from pathlib import Path

from ..fetch.result import FetchResult
from .digest import payload_digest
from .durable import sync_file

NO_VALUE = "-"
NO_TYPE = "no-type"
_MIME_END = re.compile(r"[\s;,]")


def _split_millis(epoch: float) -> tuple[time.struct_time, int]:
    seconds, millis = divmod(round(epoch * 1000), 1000)
    return time.gmtime(seconds), millis


def iso_millis(epoch: float) -> str:
    """``2024-05-01T12:00:00.123Z`` (Heritrix's log time)."""
    moment, millis = _split_millis(epoch)
    return time.strftime("%Y-%m-%dT%H:%M:%S", moment) + f".{millis:03d}Z"


def digits17(epoch: float) -> str:
    """``20240501120000123`` (Heritrix's 17-digit date)."""
    moment, millis = _split_millis(epoch)
    return time.strftime("%Y%m%d%H%M%S", moment) + f"{millis:03d}"


def truncate_mime(content_type: str | None) -> str:
    """The media type alone, as Heritrix's ``MimetypeUtils.truncate``: ``no-type`` when missing."""
    mime = _MIME_END.split(content_type.strip(), 1)[0] if content_type else ""
    return mime or NO_TYPE


def format_line(*, status: int, url: str, hop_path: str = "", via: str | None = None, size: int | None = None,
                content_type: str | None = None, worker: int = 0, fetch_began: float | None = None,
                duration_ms: float | None = None, digest: str | None = None, source_tag: str | None = None,
                annotations: Iterable[str] = (), logged_at: float | None = None) -> str:
    """One crawl.log line (with its newline) from its fields; see the module docstring."""
    fetch_time = (f"{digits17(fetch_began)}+{int(duration_ms or 0)}" if fetch_began is not None else NO_VALUE)
    return " ".join((
        iso_millis(time.time() if logged_at is None else logged_at),
        f"{status:>5}",
        f"{NO_VALUE if size is None else size:>10}",
        url,
        hop_path or NO_VALUE,
        via or NO_VALUE,
        truncate_mime(content_type),
        f"#{worker:03d}",
        fetch_time,
        digest or NO_VALUE,
        source_tag or NO_VALUE,
        ",".join(annotations) or NO_VALUE,
    )) + "\n"


def fetch_line(result: FetchResult, *, hop_path: str = "", via: str | None = None, worker: int = 0,
               source_tag: str | None = None, annotations: Iterable[str] = ()) -> str:
    """The line of one fetch attempt (``annotations`` add to the fetch's own): what a fetcher
    process formats, payload digest included, for the crawl's one crawl.log."""
    answered = result.status > 0
    return format_line(
        status=result.status, url=result.url, hop_path=hop_path, via=via,
        size=len(result.payload) if answered else None,
        content_type=result.header("Content-Type") if answered else None,
        worker=worker, fetch_began=result.started, duration_ms=result.duration_ms,
        digest=payload_digest(result.payload) if answered else None, source_tag=source_tag,
        annotations=[*result.annotations, *annotations])


class CrawlLog:
    """Appends crawl.log lines to ``path``; :meth:`log_fetch` for fetches, :meth:`log` for the rest
    (e.g. a URL robots.txt precluded, status -9998, never fetched)."""

    def __init__(self, path: str | Path, *, buffer_size: int = 1 << 16, fsync: bool = False):
        self.path = Path(path)
        self.fsync = fsync  # flush() reaches the disk, not only the OS
        self._file = open(self.path, "a", encoding="utf-8", errors="surrogatepass", newline="\n",
                          buffering=buffer_size)

    def log(self, **fields) -> None:
        """A line from :func:`format_line`'s fields."""
        self._file.write(format_line(**fields))

    def log_fetch(self, result: FetchResult, *, hop_path: str = "", via: str | None = None, worker: int = 0,
                  source_tag: str | None = None, annotations: Iterable[str] = ()) -> None:
        """The line for one fetch attempt (``annotations`` add to the fetch's own)."""
        self._file.write(fetch_line(result, hop_path=hop_path, via=via, worker=worker, source_tag=source_tag,
                                    annotations=annotations))

    def write(self, line: str) -> None:
        """A line formatted elsewhere (a fetcher process's :func:`fetch_line`)."""
        self._file.write(line)

    def flush(self) -> None:
        """Every line written so far reaches the operating system (the disk, with ``fsync``)."""
        sync_file(self._file, self.fsync)

    def size(self) -> int:
        """The file's length in bytes, lines flushed so far (:meth:`flush`)."""
        return os.fstat(self._file.fileno()).st_size

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> CrawlLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
