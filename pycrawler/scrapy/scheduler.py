"""A Scrapy scheduler on pycrawler's work-queue frontier: the crawl survives kill -9.

Scrapy's ``JOBDIR`` keeps the queue and the seen set through a clean stop only. Here every
request lives in the JE frontier of ``PYCRAWLER_STATE`` (:mod:`pycrawler.frontier.workqueues`)
until Scrapy has *processed* it, and the seen set is a pycrawler Visited table keyed by
Scrapy's request fingerprints, so ``scrapy crawl`` with the same folder resumes after any stop.

**Per request, no JVM call.** Scrapy calls :meth:`Scheduler.enqueue_request` and
:meth:`Scheduler.next_request` once per request; JE is reached in batches:

- ``enqueue_request`` fingerprints the request and appends it to an in-memory buffer. The
  buffer goes to the frontier when it holds ``PYCRAWLER_BATCH`` requests, when the frontier has
  nothing ready, and before any request is finished: the requests the seen table does not hold
  are serialized (:mod:`.requests`; one that cannot be stored gets one error line naming it and
  is left out) and scheduled, the seen check by fingerprint and the enqueue of the new ones in
  one transaction per priority level. Duplicates are therefore found when the buffer is
  written, and counted in ``dupefilter/filtered``, and ``enqueue_request`` always returns True.
- ``next_request`` hands out requests the frontier read ahead from its queues' heads.

**In flight.** A handed-out request stays in the frontier, in process, until Scrapy has
processed it: downloaded, passed to its callback or errback, and what that yielded scheduled
(:mod:`.engine_view`). Then the buffer is written first and the request's completion after it,
in that order, so its children are durable before it is finished. After a kill -9 the next run
hands out again exactly the requests that were in flight, and the buffered requests are
yielded again by their re-fetched parents. At most ``CONCURRENT_REQUESTS`` requests are out at
a time (downloading, or their responses waiting for their callbacks: Scrapy alone would take
more while its callbacks lag), so that is the most a kill -9 can make the next run fetch again.

**Order.** A request's priority becomes its place in its queue (higher first; FIFO within a
priority). Under the ``scrapy`` queue policy requests are spread over hash queues and Scrapy's
download slots keep the per-site concurrency and delays; under a work-queue policy (``host``,
``domain``...) the frontier is polite itself: one request per queue at a time, then a rest.

``dont_filter`` requests are queued even when their fingerprint was seen (and mark it seen).
``DUPEFILTER_CLASS`` is not used: the frontier's seen table is the duplicate filter.
"""

from __future__ import annotations

import collections
import itertools
import logging

import numpy as np
from scrapy import Request
from scrapy.core.scheduler import BaseScheduler

from ..errors import BadInput, PycrawlerError
from ..frontier.politeness import Outcome
from ..frontier.workqueues import MAX_PRECEDENCE, WorkQueueFrontier
from ..seen.protocol import SynchronousVisited
from ..seen.tables import open_visited
from .engine_view import EngineView
from .fingerprints import seen_keys
from .requests import UnserializableRequest, dumps, loads, payload_of, to_record
from .settings import PycrawlerSettings, refuse_to_start, small_jvm

logger = logging.getLogger(__name__)

PREFETCH = 32
"""Head records the frontier reads per queue per JVM call: a refill of the scheduler's
read-ahead (``CONCURRENT_REQUESTS`` records) then seldom crosses into the JVM."""
LEVELS = (MAX_PRECEDENCE + 1) ** 2
"""Priority levels of the frontier's order: a directive byte and a precedence byte, 0..127 each."""


def frontier_order(priority: int) -> tuple[int, int]:
    """(directive, precedence) of a Scrapy priority: higher priorities sort first; priority 0 is
    the middle level, and priorities beyond +-8192 share the first or last level."""
    level = min(max(LEVELS // 2 - priority, 0), LEVELS - 1)
    return divmod(level, MAX_PRECEDENCE + 1)


class Scheduler(BaseScheduler):
    """``SCHEDULER = "pycrawler.scrapy.Scheduler"``; settings: :mod:`.settings`."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.settings: PycrawlerSettings | None = None
        self.stats = crawler.stats
        self.fingerprinter = crawler.request_fingerprinter
        self.engine = EngineView(crawler)
        self.concurrency = self.read_ahead = max(1, crawler.settings.getint("CONCURRENT_REQUESTS", 16))
        self.spider = None
        self.frontier: WorkQueueFrontier | None = None
        self._refusal = None                  # the spider_opened handler that closes a spider open refused
        self._table = None                    # a seen table the frontier does not own
        self._buffer: list[tuple[Request, bytes]] = []         # requests and their fingerprints, not yet written
        self._ready: collections.deque = collections.deque()   # records taken from the frontier, not yet handed out
        self._out: dict[Request, object] = {}                   # handed out -> its frontier record

    @classmethod
    def from_crawler(cls, crawler) -> "Scheduler":
        return cls(crawler)

    # -- life cycle ----------------------------------------------------------------------------
    def open(self, spider) -> None:
        """Open (or resume) the crawl state. A mistake in the settings or the state folder is
        one error line, and the spider closes with reason ``pycrawler_error``; until then this
        scheduler takes no request."""
        self.spider = spider
        try:
            self._open()
        except PycrawlerError as exc:
            self._refusal = refuse_to_start(self.crawler, exc)

    def _open(self) -> None:
        settings = self.settings = PycrawlerSettings.from_settings(self.crawler.settings, "pycrawler.scrapy.Scheduler")
        settings.bind()
        small_jvm()
        # The exact set lives in the frontier's environment (WorkQueueFrontier.open makes it),
        # so a batch's seen check and enqueue commit together.
        table = None if settings.seen == "exact" else open_visited(
            settings.seen, None, settings.state, bloom_capacity=settings.bloom_capacity, option="PYCRAWLER_SEEN")
        try:
            self.frontier = WorkQueueFrontier.open(settings.state, table, create=True, canonicalizer="none",
                                                   cache_size=settings.je_cache_mb << 20, prefetch=PREFETCH,
                                                   **settings.frontier_options())
        except BaseException:
            if table is not None:
                table.close()
            raise
        self._table = table
        pending = len(self.frontier)
        self.stats.set_value("pycrawler/resumed_requests", pending)
        logger.info("pycrawler: %s requests waiting in %s (%s seen table, %s queue policy)", pending,
                    settings.state, settings.seen, settings.queue_policy)

    def close(self, reason: str) -> None:
        """Write what is buffered and what is finished; requests the engine still holds stay
        in the frontier for the next run."""
        if self.frontier is None:
            return
        try:
            self._reap()
            self._write_buffer()
        finally:
            self.frontier.close()
            if self._table is not None:
                self._table.close()
            self.frontier = None

    # -- Scrapy's scheduler interface --------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if self.frontier is None:   # refused to start (see open)
            return False
        self._buffer.append((request, self.fingerprinter.fingerprint(request)))
        if len(self._buffer) >= self.settings.batch:
            self._write_buffer()
        return True

    def next_request(self) -> Request | None:
        if self.frontier is None:
            return None
        self._reap()
        if len(self._out) >= self.concurrency:
            return None   # the engine asks again when it has processed one
        while True:
            if not self._ready:
                self._ready.extend(self.frontier.next_batch(self.read_ahead))
            if not self._ready and self._buffer:
                self._write_buffer()
                self._ready.extend(self.frontier.next_batch(self.read_ahead))
            if not self._ready:
                wait = self.frontier.wait_time()
                if wait:
                    self.engine.wake_in(wait)
                return None
            record = self._ready.popleft()
            try:
                request = loads(payload_of(record), self.spider)
            except BadInput as exc:
                logger.error("%s; dropped %s", exc, record.ori_url)
                self.stats.inc_value("scheduler/unloadable")
                self.frontier.completed_many([(record, Outcome.failure())])
                continue
            self._out[request] = record
            self.stats.inc_value("scheduler/dequeued")
            self.stats.inc_value("scheduler/dequeued/pycrawler")
            return request

    def has_pending_requests(self) -> bool:
        if self.frontier is None:
            return False
        self._reap()
        return len(self) > 0

    def __len__(self) -> int:
        """Requests waiting: buffered, or in the frontier and not handed to the engine."""
        if self.frontier is None:
            return len(self._buffer)
        return len(self._buffer) + len(self.frontier) - self.frontier.in_process() + len(self._ready)

    # -- batches ---------------------------------------------------------------------------------
    def _write_buffer(self) -> None:
        """Schedule the buffered requests in the frontier: the ones not seen yet are stored,
        one schedule (one transaction) per priority level and kind (``dont_filter`` or not),
        in the order they came."""
        if not self._buffer:
            return
        buffer, self._buffer = self._buffer, []
        keys = seen_keys([fingerprint for _, fingerprint in buffer])
        rows = []
        for i in self._worth_storing(buffer, keys):
            request = buffer[i][0]
            try:
                rows.append((request, dumps(request, self.spider), keys[i]))
            except UnserializableRequest as exc:
                logger.error("%s", exc)
                self.stats.inc_value("scheduler/unserializable")
        totals = self.frontier.totals
        enqueued, duplicates, rejected = totals["enqueued"], totals["duplicates"], totals["rejected"]
        by_kind = sorted(rows, key=lambda row: (row[0].dont_filter, -row[0].priority))  # stable: arrival order
        for (force, priority), group in itertools.groupby(by_kind, key=lambda row: (row[0].dont_filter,
                                                                                    row[0].priority)):
            group = list(group)
            directive, precedence = frontier_order(priority)
            self.frontier.schedule([to_record(request.url, payload) for request, payload, _ in group],
                                   directive=directive, precedence=precedence, force=force,
                                   seen_keys=np.array([key for *_, key in group], dtype=np.uint64))
        if not isinstance(self.frontier.visited, SynchronousVisited):
            self.frontier.flush()   # an asynchronous table (DRUM) resolves its checks and enqueues now
        self._count("scheduler/enqueued", totals["enqueued"] - enqueued)
        self._count("scheduler/enqueued/pycrawler", totals["enqueued"] - enqueued)
        self._count("dupefilter/filtered", totals["duplicates"] - duplicates + len(buffer) - len(rows))
        if totals["rejected"] > rejected:
            logger.error("pycrawler: %d requests without an absolute URL were not queued", totals["rejected"] - rejected)
            self._count("scheduler/rejected", totals["rejected"] - rejected)

    def _worth_storing(self, buffer: list, keys: np.ndarray) -> list[int]:
        """Rows of the buffer to serialize: ``dont_filter`` ones, and the first of each
        fingerprint the seen table does not hold when it answers cheaply (exact, bloom). The
        schedule still decides; this only spares serializing requests it would drop."""
        if not isinstance(self.frontier.visited, SynchronousVisited):
            return list(range(len(buffer)))
        new = np.zeros(len(keys), dtype=bool)
        new[np.unique(keys, return_index=True)[1]] = True
        new &= ~self.frontier.visited.contains_many(keys)
        return [i for i, (request, _) in enumerate(buffer) if new[i] or request.dont_filter]

    def _reap(self) -> None:
        """Finish the handed-out requests the engine has processed, after writing the buffer
        (which holds what they yielded)."""
        if not self._out:
            return
        held = self.engine.in_progress()
        done = [request for request in self._out if request not in held]
        if not done:
            return
        self._write_buffer()
        self.frontier.completed_many(
            [(self._out.pop(request), Outcome.success(fetch_seconds=request.meta.get("download_latency", 0.0)))
             for request in done])

    def _count(self, key: str, n: int) -> None:
        if n:
            self.stats.inc_value(key, n)
