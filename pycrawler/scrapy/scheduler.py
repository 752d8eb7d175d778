"""A Scrapy scheduler on pycrawler's work-queue frontier: the crawl survives kill -9.

Scrapy's ``JOBDIR`` keeps the queue and the seen set through a clean stop only. Here every
request lives in the JE frontier of ``PYCRAWLER_STATE`` (:mod:`pycrawler.frontier.workqueues`)
until Scrapy has *processed* it, and the seen set is a pycrawler Visited table keyed by
Scrapy's request fingerprints, so ``scrapy crawl`` with the same folder resumes after any stop.

**Per request, no JVM call.** Scrapy calls :meth:`Scheduler.enqueue_request` and
:meth:`Scheduler.next_request` once per request; JE is reached in batches:

- ``enqueue_request`` fingerprints the request. A duplicate it can tell at once, in Python
  (its fingerprint is in the buffer, or in the URL cache, ``PYCRAWLER_URL_CACHE``), is refused
  there: it returns False, as Scrapy's scheduler does for a filtered request, and the engine
  sends ``request_dropped``. Any other request is appended to an in-memory buffer. The
  buffer goes to the frontier when it holds ``PYCRAWLER_BATCH`` requests, when the frontier has
  nothing ready, and before any request is finished: the requests the seen table does not hold
  are serialized (:mod:`.requests`; one that cannot be stored gets one error line naming it and
  is left out) and scheduled, the seen check by fingerprint and the enqueue of the new ones in
  one transaction per priority level. The duplicates found then (in that transaction, not one
  JE lookup per request) were accepted already: the scheduler sends their ``request_dropped`` itself
  (except with ``drum``, whose answers come without the request). Both kinds count in
  ``dupefilter/filtered``.
- ``next_request`` hands out requests the frontier read ahead from its queues' heads.

**In flight.** A handed-out request stays in the frontier, in process, until Scrapy has
processed it: downloaded, passed to its callback or errback, and what that yielded scheduled
(:mod:`.engine_view`). Then the buffer and the completions of every request found processed
are committed in one transaction (with ``exact`` or ``bloom``; with ``drum`` the completions
right after DRUM enqueues the buffer), so a request's children are durable no later than its
completion. After a kill -9 the next run
hands out again exactly the requests that were in flight, and the buffered requests are
yielded again by their re-fetched parents. At most ``CONCURRENT_REQUESTS`` requests are out at
a time (downloading, or their responses waiting for their callbacks: Scrapy alone would take
more while its callbacks lag), so that is the most a kill -9 can make the next run fetch again.

**Order.** A request's priority becomes its place in its queue (higher first; within a
priority last in, first out as Scrapy's default queues, or first in, first out when
``SCHEDULER_DISK_QUEUE`` names a FIFO queue: :func:`.settings.lifo_of`). Under the ``scrapy``
queue policy requests are spread over hash queues and Scrapy's
download slots keep the per-site concurrency and delays; under a work-queue policy (``host``,
``domain``...) the frontier is polite itself: one request per queue at a time, then a rest.

``dont_filter`` requests are queued even when their fingerprint was seen (and mark it seen).
``DUPEFILTER_CLASS`` is not used: the frontier's seen table is the duplicate filter.
"""

from __future__ import annotations

import collections
import itertools
import logging

from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler

from ..errors import BadInput, PycrawlerError
from ..frontier.politeness import Outcome
from ..frontier.todo import JE_CONFIG
from ..frontier.pending_records import MAX_PRECEDENCE
from ..frontier.workqueues import WorkQueueFrontier
from ..seen.cached import cached
from ..seen.synchronous import SynchronousVisited
from ..seen.tables import open_visited
from ..store import Environment
from .engine_view import EngineView
from .fingerprints import KEY_BYTES, seen_keys
from .requests import RequestEncoder, UnserializableRequest, loads, payload_of, to_record
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
        self._env = self._table = None        # the JE environment and seen table the frontier works in
        self._cache = None                    # the URL cache in front of the seen table, if any
        self._buffer: list[tuple[Request, bytes]] = []         # requests and their fingerprints, not yet written
        self._buffered: set[bytes] = set()                      # seen keys of the buffer's filtered requests
        self._ready: collections.deque = collections.deque()   # records taken from the frontier, not yet handed out
        self._out: dict[Request, object] = {}                   # handed out -> its frontier record

    @classmethod
    def from_crawler(cls, crawler) -> Scheduler:
        return cls(crawler)

    # -- life cycle ----------------------------------------------------------------------------
    def open(self, spider) -> None:
        """Open (or resume) the crawl state. A mistake in the settings or the state folder is
        one error line, and the spider closes with reason ``pycrawler_error``; until then this
        scheduler takes no request."""
        self.spider = spider
        self.encoder = RequestEncoder(spider)
        try:
            self._open()
        except PycrawlerError as exc:
            self._refusal = refuse_to_start(self.crawler, exc)

    def _open(self) -> None:
        settings = self.settings = PycrawlerSettings.from_settings(self.crawler.settings, "pycrawler.scrapy.Scheduler")
        settings.bind()
        self._cache = settings.url_cache()
        small_jvm()
        self._env = Environment(settings.state, create=True, durability="write_no_sync",
                                cache_size=settings.je_cache_mb << 20, config=JE_CONFIG)
        try:
            # The exact set lives in the frontier's environment, so a batch's seen check and
            # enqueue commit together.
            self._table = open_visited(settings.seen, self._env, settings.state, bloom_capacity=settings.bloom_capacity,
                                       option="PYCRAWLER_SEEN")
            visited = self._table if self._cache is None else cached(self._table, self._cache)
            self.frontier = WorkQueueFrontier(self._env, visited, create=True, canonicalizer="none",
                                              prefetch=PREFETCH, **settings.frontier_options())
        except BaseException:
            self._close_store()
            raise
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
            self._close_store()

    def _close_store(self) -> None:
        try:
            if self.frontier is not None:
                self.frontier.close()
            if self._table is not None:
                self._table.close()
        finally:
            if self._env is not None:
                self._env.close()
            self.frontier = self._table = self._env = None

    # -- Scrapy's scheduler interface --------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if self.frontier is None:   # refused to start (see open)
            return False
        fingerprint = self.fingerprinter.fingerprint(request)
        if not request.dont_filter:
            key = fingerprint[:KEY_BYTES]
            if key in self._buffered or self._cached(key):
                self.stats.inc_value("dupefilter/filtered")
                return False
            self._buffered.add(key)
        self._buffer.append((request, fingerprint))
        if len(self._buffer) >= self.settings.batch:
            self._write_buffer()
        return True

    def _cached(self, key: bytes) -> bool:
        """Whether the URL cache holds ``key`` (a hit, counted as one; a miss is left for the
        buffer's write, where the cache learns it once the seen table has it)."""
        if self._cache is None:
            return False
        keys = seen_keys([key])
        if not self._cache.contains(keys)[0]:
            return False
        self._cache.access(keys)
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
    def _write_buffer(self, with_completions: bool = False) -> None:
        """Schedule the buffered requests in the frontier: the ones not seen yet are stored,
        one schedule (one transaction) per priority level and kind (``dont_filter`` or not),
        in the order they came. ``with_completions``: the completions recorded in the frontier
        are committed with the last of them (:meth:`_reap`)."""
        buffer, self._buffer, self._buffered = self._buffer, [], set()
        rows = []
        for request, fingerprint in buffer:
            try:
                rows.append((request, self.encoder.dumps(request), fingerprint))
            except UnserializableRequest as exc:
                logger.error("%s", exc)
                self.stats.inc_value("scheduler/unserializable")
        totals = self.frontier.totals
        enqueued, duplicates, rejected = totals["enqueued"], totals["duplicates"], totals["rejected"]
        by_kind = sorted(rows, key=lambda row: (row[0].dont_filter, -row[0].priority))  # stable: arrival order
        groups = [(kind, list(group)) for kind, group in
                  itertools.groupby(by_kind, key=lambda row: (row[0].dont_filter, row[0].priority))]
        for n, ((force, priority), group) in enumerate(groups, 1):
            directive, precedence = frontier_order(priority)
            result = self.frontier.schedule([to_record(request.url, payload) for request, payload, _ in group],
                                            directive=directive, precedence=precedence, force=force,
                                            seen_keys=seen_keys([fingerprint for *_, fingerprint in group]),
                                            with_completions=with_completions and n == len(groups))
            if not force and result.unique is not None:
                self._dropped([request for (request, *_), new in zip(group, result.unique.tolist()) if not new])
        if not isinstance(self.frontier.visited, SynchronousVisited):
            self.frontier.flush()   # an asynchronous table (DRUM) resolves its checks and enqueues now
        elif with_completions and not groups:
            self.frontier.completed_many(())
        self._count("scheduler/enqueued", totals["enqueued"] - enqueued)
        self._count("scheduler/enqueued/pycrawler", totals["enqueued"] - enqueued)
        self._count("dupefilter/filtered", totals["duplicates"] - duplicates)
        if self._cache is not None:
            self.stats.set_value("pycrawler/url_cache/hits", self._cache.hits)
            self.stats.set_value("pycrawler/url_cache/misses", self._cache.misses)
        if totals["rejected"] > rejected:
            logger.error("pycrawler: %d requests without an absolute URL were not queued", totals["rejected"] - rejected)
            self._count("scheduler/rejected", totals["rejected"] - rejected)

    def _dropped(self, requests: list[Request]) -> None:
        """Send ``request_dropped`` for requests the seen table called seen: what Scrapy's engine
        sends when a scheduler refuses a request."""
        for request in requests:
            self.crawler.signals.send_catch_log(signals.request_dropped, request=request, spider=self.spider)

    def _reap(self) -> None:
        """Finish the handed-out requests the engine has processed: their completions are
        committed in the transaction that schedules the buffer (which holds what they yielded),
        so a request is never finished before its children are queued."""
        if not self._out:
            return
        held = self.engine.in_progress()
        done = [request for request in self._out if request not in held]
        if not done:
            return
        for request in done:
            self.frontier.completed(self._out.pop(request),
                                    Outcome.success(fetch_seconds=request.meta.get("download_latency", 0.0)))
        self._write_buffer(with_completions=True)

    def _count(self, key: str, n: int) -> None:
        if n:
            self.stats.inc_value(key, n)
