"""The TODO protocol: the seed book's ``Frontier`` (``putUrl`` / ``getNext``), in Python.

Every TODO store (pycrawler's own JE frontier, the book's ``BDBFrontier`` layout, the
work-queue frontier of :mod:`.workqueues`) implements it, so the crawler and the command line
need not know which one they drive. The batch forms are part of the protocol, not conveniences: a JE-backed
frontier hands a whole batch to the JVM in one crossing.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable

from ..records.crawl_url import CrawlUrl


class TodoFrontier(abc.ABC):
    """URLs waiting to be crawled. ``get_next`` removes what it returns (at-most-once: a
    record handed out is gone from the store, as in the book)."""

    #: The store layout this frontier reads and writes ("pycrawler", "book", ...).
    layout: str
    #: The order ``get_next`` follows ("key", "fifo", ...); see the implementation's docs.
    order: str

    @abc.abstractmethod
    def put_urls(self, batch: Iterable[CrawlUrl]) -> int:
        """Add every record of ``batch``, durably as one unit; returns how many were given."""

    def put_url(self, crawl_url: CrawlUrl) -> bool:
        """Add one record (the book's ``putUrl``); True once it is stored."""
        self.put_urls([crawl_url])
        return True

    @abc.abstractmethod
    def get_next_batch(self, n: int) -> list[CrawlUrl]:
        """Remove and return up to ``n`` records, in the frontier's order; fewer when it runs dry."""

    def get_next(self) -> CrawlUrl | None:
        """Remove and return the next record (the book's ``getNext``); None when empty."""
        batch = self.get_next_batch(1)
        return batch[0] if batch else None

    @abc.abstractmethod
    def __len__(self) -> int:
        """How many records wait."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the store; idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
