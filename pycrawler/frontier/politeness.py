"""Politeness: how long a work queue rests after each fetch, and how fetches end.

Mercator's rule (seeds/002): the next request to a server waits a multiple of the time the
last one took (10x by default), so a slow server is asked less often. Heritrix's
``delayFactor`` / ``minDelayMs`` / ``maxDelayMs`` bound that delay, and a robots.txt
``Crawl-delay`` raises it (honoured up to ``respect_crawl_delay_up_to`` seconds, Heritrix's
``respectCrawlDelayUpToSeconds``), even past the maximum.

Fetches end in an :class:`Outcome`: ``success`` and ``failure`` are final; ``retry`` is a
transient failure (a timeout, a refused connection, a 503) that the frontier retries with
exponential backoff until the retry budget is spent, when it becomes a final failure.
"""

from __future__ import annotations

import dataclasses

from ..errors import BadInput

SUCCESS, FAILURE, RETRY = "success", "failure", "retry"
FINAL_KINDS = (SUCCESS, FAILURE)


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """How a fetch ended. ``fetch_seconds``: how long it took (drives the delay);
    ``crawl_delay``: the host's robots.txt Crawl-delay in seconds, when known;
    ``status_code``: the protocol's code, for the record; ``retry_after``: for a retry, the wait
    the server asked for (HTTP ``Retry-After`` on a 429 or 503), when it named one;
    ``requested``: False when no request went to the server (a fetch replayed from the WARC
    files), so the queue does not rest."""

    kind: str = SUCCESS
    fetch_seconds: float = 0.0
    crawl_delay: float | None = None
    status_code: int = 0
    retry_after: float | None = None
    requested: bool = True

    def __post_init__(self):
        if self.kind not in (SUCCESS, FAILURE, RETRY):
            raise BadInput(f"an outcome is {SUCCESS!r}, {FAILURE!r} or {RETRY!r}, not {self.kind!r}")

    @classmethod
    def success(cls, fetch_seconds: float = 0.0, **kw) -> Outcome:
        return cls(SUCCESS, fetch_seconds, **kw)

    @classmethod
    def failure(cls, fetch_seconds: float = 0.0, **kw) -> Outcome:
        return cls(FAILURE, fetch_seconds, **kw)

    @classmethod
    def retry(cls, fetch_seconds: float = 0.0, **kw) -> Outcome:
        return cls(RETRY, fetch_seconds, **kw)


@dataclasses.dataclass(frozen=True, slots=True)
class Politeness:
    """The delay rule; every figure in seconds. ``Politeness.none()`` never waits (tests,
    benchmarks, a crawl of one's own server)."""

    delay_factor: float = 10.0
    min_delay: float = 3.0
    max_delay: float = 30.0
    respect_crawl_delay_up_to: float = 300.0
    retry_delay: float = 30.0          # first retry's wait; doubled per further attempt
    max_retry_delay: float = 900.0
    max_retries: int = 3               # transient failures before the URL fails for good

    def __post_init__(self):
        if min(self.delay_factor, self.min_delay, self.max_delay, self.retry_delay, self.max_retry_delay) < 0:
            raise BadInput("politeness delays and factors cannot be negative")
        if self.min_delay > self.max_delay:
            raise BadInput(f"min_delay {self.min_delay} exceeds max_delay {self.max_delay}")

    @classmethod
    def none(cls) -> Politeness:
        return cls(delay_factor=0.0, min_delay=0.0, max_delay=0.0, retry_delay=0.0, max_retry_delay=0.0)

    def delay(self, fetch_seconds: float, crawl_delay: float | None = None) -> float:
        """Seconds the queue rests after a fetch that took ``fetch_seconds``."""
        wait = min(max(fetch_seconds * self.delay_factor, self.min_delay), self.max_delay)
        if crawl_delay:
            wait = max(wait, min(crawl_delay, self.respect_crawl_delay_up_to))
        return wait

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds before retry number ``attempt`` (1 for the first): the exponential backoff, or
        the server's ``Retry-After`` when longer, honoured up to ``respect_crawl_delay_up_to``
        as a Crawl-delay is (the server's own word on its pace; a hostile day is not obeyed)."""
        wait = min(self.retry_delay * 2 ** (attempt - 1), self.max_retry_delay)
        if retry_after:
            wait = max(wait, min(retry_after, self.respect_crawl_delay_up_to))
        return wait
