"""The ``PYCRAWLER_*`` Scrapy settings, read once per crawler.

==============================  ==========  ====================================================
setting                         default     meaning
==============================  ==========  ====================================================
``PYCRAWLER_STATE``             (required)  the state folder: one JE environment (and
                                            ``visited.bloom`` or ``drum/``); the same folder
                                            resumes the crawl
``PYCRAWLER_SEEN``              ``exact``   the seen table: ``exact`` (JE set), ``bloom``,
                                            ``drum`` (:mod:`pycrawler.seen.tables`)
``PYCRAWLER_BLOOM_CAPACITY``    10,000,000  requests a new Bloom filter is sized for (FPR 0.001)
``PYCRAWLER_QUEUE_POLICY``      ``scrapy``  ``scrapy``: requests spread over
                                            ``PYCRAWLER_QUEUES`` hash queues with no delay of
                                            their own, Scrapy's download slots (``DOWNLOAD_DELAY``,
                                            ``CONCURRENT_REQUESTS_PER_DOMAIN``) pace the sites;
                                            or a work-queue assignment (``host``, ``domain``,
                                            ``surt``, ``bkdr-host:N``...): one request per queue
                                            at a time, and the queue rests ``PYCRAWLER_DELAY``
``PYCRAWLER_QUEUES``            256         hash queues of the ``scrapy`` policy
``PYCRAWLER_DELAY``             ``polite``  the work-queue policies' rest after each fetch, as
                                            ``pycrawler crawl --delay``: ``polite``, seconds
                                            or a factor of the fetch time (``5x``)
``PYCRAWLER_URL_CACHE``         (none)      a URL cache in front of the seen table, as
                                            ``pycrawler crawl --url-cache``: ``POLICY:SIZE``
                                            or ``SIZE`` (CLOCK), e.g. ``clock:50000``
``PYCRAWLER_BATCH``             1000        requests buffered before they are written to JE
``PYCRAWLER_JE_CACHE_MB``       64          JE's cache; the JVM's heap is ``PYCRAWLER_HEAP``
                                            (128m unless set, :func:`small_jvm`): raise both
                                            together for a seen set of many millions
==============================  ==========  ====================================================

Order within a priority follows Scrapy's ``SCHEDULER_DISK_QUEUE``: last in, first out unless it
names a FIFO queue (:func:`lifo_of`); a state folder keeps the order it was created with.

Mistakes are reported when the scheduler or duplicate filter opens: one error line, and the
spider closes with reason ``pycrawler_error`` (:func:`refuse_to_start`). The seen table and the queue policy are kept in the folder (``scrapy.json``): resuming with
others is refused, since the stored queues and seen keys would be misread.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from pathlib import Path

from ..atomic_write import write_atomically
from ..errors import BadInput, PycrawlerError

KEPT = ("seen", "queue_policy")
KEPT_FILE = "scrapy.json"
SCRAPY_POLICY = "scrapy"


@dataclasses.dataclass(frozen=True)
class PycrawlerSettings:
    """The pycrawler side of a Scrapy crawler's settings."""

    state: Path
    seen: str = "exact"
    bloom_capacity: int = 10_000_000
    queue_policy: str = SCRAPY_POLICY
    queues: int = 256
    delay: str = "polite"
    batch: int = 1000
    je_cache_mb: int = 64
    lifo: bool = True
    url_cache_spec: str | None = None

    @classmethod
    def from_settings(cls, settings, component: str) -> PycrawlerSettings:
        """Read Scrapy ``settings``; ``component`` names who needs them in the error for a
        missing ``PYCRAWLER_STATE``."""
        state = settings.get("PYCRAWLER_STATE")
        if not state:
            raise BadInput(f"{component} needs PYCRAWLER_STATE, the folder that keeps the crawl's state "
                           "(e.g. -s PYCRAWLER_STATE=crawls/myspider)")
        defaults = cls(Path(state))
        numbers = {name: settings.getint(f"PYCRAWLER_{name.upper()}", getattr(defaults, name))
                   for name in ("bloom_capacity", "queues", "batch", "je_cache_mb")}
        for name, value in numbers.items():
            if value < 1:
                raise BadInput(f"PYCRAWLER_{name.upper()} must be a positive integer, not {value}")
        return cls(Path(state), seen=settings.get("PYCRAWLER_SEEN", defaults.seen),
                   queue_policy=settings.get("PYCRAWLER_QUEUE_POLICY", defaults.queue_policy),
                   delay=str(settings.get("PYCRAWLER_DELAY", defaults.delay)), lifo=lifo_of(settings),
                   url_cache_spec=settings.get("PYCRAWLER_URL_CACHE") or None, **numbers)

    def bind(self) -> None:
        """Record the kept settings in a new state folder; refuse ones that differ from the
        folder's (after checking that they name a seen table and a queue policy)."""
        from ..frontier.assignment import get_assignment
        from ..seen.tables import SEEN_TABLE_PATHS

        if self.seen not in SEEN_TABLE_PATHS:
            raise BadInput(f"PYCRAWLER_SEEN must be one of {', '.join(SEEN_TABLE_PATHS)}, not {self.seen!r}")
        get_assignment(self.frontier_options()["assignment"])
        path = self.state / KEPT_FILE
        mine = {name: getattr(self, name) for name in KEPT}
        if path.exists():
            kept = json.loads(path.read_text())
            for name in KEPT:
                if kept.get(name, mine[name]) != mine[name]:
                    raise BadInput(f"{self.state} was crawled with PYCRAWLER_{name.upper()}={kept[name]!r}; resume it "
                                   f"with the same setting (got {mine[name]!r}) or use another PYCRAWLER_STATE")
        else:
            self.state.mkdir(parents=True, exist_ok=True)
            write_atomically(path, json.dumps(mine, indent=1) + "\n")

    def url_cache(self):
        """A new URL cache as ``PYCRAWLER_URL_CACHE`` names it (:mod:`pycrawler.seen.cache`), or None."""
        if self.url_cache_spec is None:
            return None
        from ..seen.cache import cache_from_spec

        return cache_from_spec(str(self.url_cache_spec), option="PYCRAWLER_URL_CACHE")

    def frontier_options(self) -> dict:
        """The work-queue frontier's assignment and politeness for the queue policy."""
        from ..frontier.politeness import Politeness

        if self.queue_policy == SCRAPY_POLICY:
            return {"assignment": f"bkdr:{self.queues}", "politeness": Politeness.none(), "lifo": self.lifo}
        from ..crawl.settings import parse_delay

        return {"assignment": self.queue_policy, "politeness": parse_delay(self.delay), "lifo": self.lifo}


def lifo_of(settings) -> bool:
    """Whether requests of one priority leave last in, first out, as Scrapy's own queues do:
    its disk queue setting (``SCHEDULER_DISK_QUEUE``, since these requests are kept on disk)
    names a LIFO queue by default (``PickleLifoDiskQueue``); a FIFO one (``PickleFifoDiskQueue``,
    Scrapy's recipe for a breadth-first crawl) makes it first in, first out."""
    queue = settings.get("SCHEDULER_DISK_QUEUE") or ""
    name = queue if isinstance(queue, str) else getattr(queue, "__qualname__", "")
    return "fifo" not in name.rpartition(".")[2].lower()


def small_jvm() -> None:
    """Have the JVM, when this process has not started it yet, start as ``pycrawler crawl``'s
    does (a 128 MB heap, JE's cache 64 MB of it, the serial collector, the C1 compiler only:
    ``pycrawler.jvm.CRAWL_JVM``), unless ``PYCRAWLER_HEAP`` or ``PYCRAWLER_JVM_OPTS`` say
    otherwise. The scheduler's JVM side is the crawl's: short batches. The JVM itself starts
    with the first store opened, on the JE that store needs."""
    from .. import jvm

    if not jvm.started():
        for name, value in jvm.CRAWL_JVM.items():
            os.environ.setdefault(name, value)


def refuse_to_start(crawler, error: PycrawlerError):
    """Report a pycrawler error met while a component opens (bad settings, a state folder that
    another crawl holds) as one error line, and have the spider closed with reason
    ``pycrawler_error`` as soon as it is open: Scrapy (2.19) closes a spider cleanly when a
    ``spider_opened`` handler raises ``CloseSpider``, not when a scheduler's ``open`` does
    (Scrapy 2.11 logs that ``CloseSpider`` as an error; the refusing component then takes no
    request, so the spider finishes at once).
    Returns the handler, which the caller keeps (Scrapy holds handlers by weak reference)."""
    from scrapy import signals
    from scrapy.exceptions import CloseSpider

    logging.getLogger("pycrawler.scrapy").error("%s", error)

    def close(spider):
        raise CloseSpider("pycrawler_error")

    crawler.signals.connect(close, signal=signals.spider_opened)
    return close
