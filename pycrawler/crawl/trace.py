"""``--trace FILE``: every extracted link, in the order the crawl extracted them, one per line.

The input of a URL-cache study (``pycrawler cache-sim``): each line is one lookup a URL-seen
cache would answer, so duplicates are kept and nothing is canonicalised or filtered here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..keys.urls import ENCODING, ERRORS
from .durable import sync_file


class TraceWriter:
    """Appends URLs to ``path`` (created if missing), buffered; :meth:`close` flushes."""

    def __init__(self, path: str | Path, *, buffer_size: int = 1 << 20, fsync: bool = False):
        self.path = Path(path)
        self.fsync = fsync  # flush() reaches the disk, not only the OS
        self._file = open(self.path, "a", encoding=ENCODING, errors=ERRORS, newline="\n", buffering=buffer_size)
        self.count = 0

    def write(self, urls: Iterable[str]) -> None:
        """One page's outlinks, in order."""
        lines = [url + "\n" for url in urls]
        self._file.writelines(lines)
        self.count += len(lines)

    def flush(self) -> None:
        """Every line written so far reaches the operating system (the disk, with ``fsync``)."""
        sync_file(self._file, self.fsync)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
