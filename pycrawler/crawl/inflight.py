"""The URLs a crawl holds between the poll that hands them out and the flush that commits them.

:class:`InFlight` is the engine's slot (Scrapy's engine keeps the same state in its ``_Slot``):
the URLs in process, the finished ones waiting for the next flush (:class:`Finished`), and the
room left for more. The engine owns it and passes it to whoever starts or finishes URLs: the
fetch tasks, the cluster side (which finishes handed-over URLs without a fetch) and the flush.
"""

from __future__ import annotations

import dataclasses

from ..frontier.politeness import Outcome
from ..records.crawl_url import CrawlUrl, encode

NO_LINKS: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(slots=True, kw_only=True)
class Finished:
    """A URL whose fetch (or refusal, or handover) is over, waiting for the next flush; built by
    one of the named constructors."""

    url: str
    record: bytes | None                  # None: handed over to another worker, not fetched
    layer: int
    hop_path: str
    links: list[tuple[str, str]] | tuple[tuple[str, str], ...]  # (url, hop letter) to schedule
    outcome: Outcome
    forwarded: bool = False               # handed over: remembered in case it comes back

    @classmethod
    def fetched(cls, record: CrawlUrl, hop_path: str, links: list[tuple[str, str]], outcome: Outcome) -> Finished:
        """A fetch (whatever its status), ``record`` holding its outcome, with the links it found."""
        return cls(url=record.ori_url, record=encode(record), layer=record.layer, hop_path=hop_path, links=links,
                   outcome=outcome)

    @classmethod
    def failed(cls, record: CrawlUrl, hop_path: str, status: int) -> Finished:
        """A URL finished for good without a fetch's links (robots.txt precluded it, or its
        processing raised)."""
        return cls(url=record.ori_url, record=encode(record), layer=record.layer, hop_path=hop_path, links=NO_LINKS,
                   outcome=Outcome.failure(status_code=status))

    @classmethod
    def retry(cls, record: CrawlUrl, hop_path: str, status: int) -> Finished:
        """A URL to fetch again after its queue's retry backoff (robots.txt could not be read)."""
        return cls(url=record.ori_url, record=encode(record), layer=record.layer, hop_path=hop_path, links=NO_LINKS,
                   outcome=Outcome.retry(status_code=status))

    @classmethod
    def handed_over(cls, record: CrawlUrl, forwarded: bool) -> Finished:
        """A polled URL a cluster worker does not fetch: ``forwarded`` to its host's owner, or
        dropped as fetched by an earlier owner of its host."""
        return cls(url=record.ori_url, record=None, layer=record.layer, hop_path="", links=NO_LINKS,
                   outcome=Outcome.success(), forwarded=forwarded)


class InFlight:
    """The URLs in process: each holds a slot from the poll until the flush that commits its
    completion, so at most ``concurrency`` are in process (the most a kill -9 makes the next
    run fetch again); the finished ones wait here for that flush. ``max_pages`` (None: no
    limit) caps the URLs the crawl starts, those done before included."""

    def __init__(self, concurrency: int, max_pages: int | None, flush_pages: int):
        self.concurrency, self.max_pages = concurrency, max_pages
        # A finished URL keeps its slot until the flush: once a quarter of the slots wait for
        # one, the fetches run short of slots, so the flush comes then, not at its interval
        # (the 1M-page web's first 50k pages: 979 -> 1,157-1,204 pages/s, docs/benchmarks.md).
        self.flush_at = min(flush_pages, max(1, concurrency // 4))
        self.in_process = 0
        self._finished: list[Finished] = []
        self._free_workers = list(range(concurrency, 0, -1))  # the numbers crawl.log shows, lowest first

    @property
    def idle(self) -> bool:
        """Nothing in process: no fetch running, nothing waiting for a flush."""
        return self.in_process == 0

    def room(self, done: int) -> int:
        """How many more URLs may start, given the ``done`` ones (this run's and earlier runs')."""
        free = self.concurrency - self.in_process
        if self.max_pages is not None:
            free = min(free, self.max_pages - done - self.in_process)
        return free

    def start(self) -> None:
        """A polled URL goes to a fetch."""
        self.in_process += 1

    def worker(self) -> int:
        """The number of a free fetch worker (crawl.log's column), held until :meth:`free`."""
        return self._free_workers.pop()

    def free(self, worker: int) -> None:
        self._free_workers.append(worker)

    def abandon(self) -> None:
        """A started URL's fetch was cancelled or failed the crawl: it stays pending, for the next run."""
        self.in_process -= 1

    def finish(self, finished: Finished) -> bool:
        """A started URL is over; True when :attr:`flush_at` finished ones wait."""
        self._finished.append(finished)
        return len(self._finished) >= self.flush_at

    def finish_unfetched(self, finished: Finished) -> None:
        """A polled URL is over without a fetch (:meth:`Finished.handed_over`): it holds its slot
        until the flush too."""
        self.in_process += 1
        self._finished.append(finished)

    @property
    def waiting(self) -> bool:
        """Finished URLs wait for a flush."""
        return bool(self._finished)

    def take_finished(self) -> list[Finished]:
        """The finished URLs, for a flush; they keep their slots until :meth:`flushed`."""
        finished, self._finished = self._finished, []
        return finished

    def flushed(self, finished: list[Finished]) -> None:
        """The flush of ``finished`` is over (committed, or given up after a failure): their slots are free."""
        self.in_process -= len(finished)
