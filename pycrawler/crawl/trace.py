"""``--trace FILE``: every extracted link, in the order the crawl extracted them, one per line.

The input of a URL-cache study (``pycrawler cache-sim``): each line is one lookup a URL-seen
cache would answer, so duplicates are kept and nothing is canonicalised or filtered here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..keys.urls import ENCODING, ERRORS


class TraceWriter:
    """Appends URLs to ``path`` (created if missing), buffered; :meth:`close` flushes."""

    def __init__(self, path: str | Path, *, buffer_size: int = 1 << 20):
        self.path = Path(path)
        self._file = open(self.path, "a", encoding=ENCODING, errors=ERRORS, newline="\n", buffering=buffer_size)
        self.count = 0

    def write(self, urls: Iterable[str]) -> None:
        """One page's outlinks, in order."""
        lines = [url + "\n" for url in urls]
        self._file.writelines(lines)
        self.count += len(lines)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
