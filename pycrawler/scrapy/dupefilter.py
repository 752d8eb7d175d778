"""A Scrapy duplicate filter on a pycrawler seen table, for Scrapy's own scheduler.

``DUPEFILTER_CLASS = "pycrawler.scrapy.DupeFilter"`` with ``PYCRAWLER_STATE``: the fingerprints
of ``REQUEST_FINGERPRINTER_CLASS`` (as 64-bit keys, :mod:`.fingerprints`) go into a seen table
in the state folder instead of a Python set (~70+ bytes a fingerprint, written to
``JOBDIR/requests.seen`` at close only), so a large crawl's seen set is not bounded by RAM and
outlives a crash.

Scrapy asks ``request_seen`` once per request and needs the answer at once:

- ``bloom`` (default here): a memory-mapped Bloom filter, checked and updated in Python, no JVM
  call; what it holds is in the page cache as soon as it is set, so it survives kill -9.
  Its price is its false-positive rate (0.001): that share of new requests is dropped.
- ``exact``: the JE set; a request not seen in this batch costs one JE lookup (one JVM call:
  there is no way to batch an answer Scrapy needs now). New fingerprints are written in
  batches of ``PYCRAWLER_BATCH``; a kill -9 forgets the unwritten batch, which can make those
  requests be fetched again, never lost.
- ``drum`` answers in batches only and is refused here (use :class:`~.scheduler.Scheduler`).

A seen set kept across runs is only safe beside a queue kept across runs: a request the filter
has passed is marked seen, and if the scheduler's queue then goes while it waits, no later run
fetches it (every link to it is filtered, silently and for ever). Scrapy's scheduler keeps its
queue only with ``JOBDIR``, and only through a clean close (its disk queues write their state
at close). So the filter refuses to start without ``JOBDIR``, and refuses a state folder whose
last crawl did not close (a kill, a crash, a second Ctrl-C): it marks the folder
(:data:`UNCLOSED_MARK`) while it is open. :class:`~.scheduler.Scheduler` keeps both, durably,
and resumes after any stop.
"""

from __future__ import annotations

import dataclasses
import logging

from scrapy.dupefilters import BaseDupeFilter

from ..atomic_write import write_atomically
from ..errors import BadInput, PycrawlerError
from ..seen.tables import open_visited
from .fingerprints import seen_keys
from .settings import PycrawlerSettings, refuse_to_start, small_jvm

logger = logging.getLogger(__name__)

TABLES = ("bloom", "exact")
UNCLOSED_MARK = "dupefilter.open"
"""In the state folder while a crawl has the filter open: found at open, the last crawl did not close."""
KEEPS_BOTH = 'SCHEDULER = "pycrawler.scrapy.Scheduler", which keeps its queue and seen set through any stop'


class DupeFilter(BaseDupeFilter):
    """Scrapy's ``BaseDupeFilter`` on a pycrawler seen table (``PYCRAWLER_SEEN``: ``bloom`` or ``exact``)."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.fingerprinter = crawler.request_fingerprinter
        self.debug = crawler.settings.getbool("DUPEFILTER_DEBUG")
        self.settings: PycrawlerSettings | None = None
        self.logged = False
        self.env = self.table = None
        self._unwritten: set[int] = set()
        self._refusal = None

    @classmethod
    def from_crawler(cls, crawler) -> DupeFilter:
        return cls(crawler)

    def open(self) -> None:
        """Open the seen table; a mistake is one error line and closes the spider (see
        :func:`.settings.refuse_to_start`); until then no request is called seen."""
        try:
            self._open()
        except PycrawlerError as exc:
            self._refusal = refuse_to_start(self.crawler, exc)

    def _open(self) -> None:
        settings = PycrawlerSettings.from_settings(self.crawler.settings, "pycrawler.scrapy.DupeFilter")
        if "PYCRAWLER_SEEN" not in self.crawler.settings:
            settings = dataclasses.replace(settings, seen="bloom")
        if settings.seen not in TABLES:
            raise BadInput(f"pycrawler.scrapy.DupeFilter answers per request: PYCRAWLER_SEEN must be "
                           f"{' or '.join(TABLES)}, not {settings.seen!r}")
        if not self.crawler.settings.get("JOBDIR"):
            raise BadInput("pycrawler.scrapy.DupeFilter keeps its seen set across runs, and Scrapy's scheduler keeps "
                           "its queue only with JOBDIR: without it, the requests seen but not fetched when this crawl "
                           f"stops would be filtered for ever by the next one; set JOBDIR, or use {KEEPS_BOTH}")
        self.settings = settings
        state = settings.state
        if (state / UNCLOSED_MARK).exists():
            raise BadInput(f"{state}: the last crawl with this seen set did not close (killed or crashed), so Scrapy's "
                           "JOBDIR queue lost what it held, and those requests would be filtered for ever; start "
                           f"again with a new PYCRAWLER_STATE and JOBDIR, or use {KEEPS_BOTH}")
        state.mkdir(parents=True, exist_ok=True)
        if settings.seen == "exact":
            from ..frontier.todo import JE_CONFIG
            from ..store import Environment

            small_jvm()
            self.env = Environment(state, create=True, durability="write_no_sync",
                                   cache_size=settings.je_cache_mb << 20, config=JE_CONFIG)
        self.table = open_visited(settings.seen, self.env, state, bloom_capacity=settings.bloom_capacity,
                                  option="PYCRAWLER_SEEN")
        write_atomically(state / UNCLOSED_MARK, "a crawl has this seen set open; pycrawler.scrapy.DupeFilter "
                                                "removes this file when it closes\n")

    def request_seen(self, request) -> bool:
        if self.table is None:   # refused to start (see open)
            return False
        key = seen_keys([self.fingerprinter.fingerprint(request)])
        if self.env is None:                      # bloom: check and set in one step, in Python
            return not self.table.add_many(key)[0]
        one = int(key[0])
        if one in self._unwritten or self.table.contains(one):
            return True
        self._unwritten.add(one)
        if len(self._unwritten) >= self.settings.batch:
            self._write()
        return False

    def _write(self) -> None:
        if self._unwritten:
            self.table.add_many(sorted(self._unwritten))
            self._unwritten = set()

    def close(self, reason: str) -> None:
        if self.table is None:
            return
        try:
            self._write()
            self.table.close()
            (self.settings.state / UNCLOSED_MARK).unlink(missing_ok=True)
        finally:
            if self.env is not None:
                self.env.close()
            self.table = self.env = None

    def log(self, request, spider) -> None:
        """As Scrapy's ``RFPDupeFilter``: the first duplicate (every one with ``DUPEFILTER_DEBUG``)
        at debug level, and the ``dupefilter/filtered`` count."""
        if self.debug or not self.logged:
            logger.debug("Filtered duplicate request: %(request)s%(more)s",
                         {"request": request, "more": "" if self.debug else
                          " - no more duplicates will be shown (see DUPEFILTER_DEBUG to show all duplicates)"},
                         extra={"spider": spider})
            self.logged = True
        self.crawler.stats.inc_value("dupefilter/filtered")
