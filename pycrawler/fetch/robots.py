"""robots.txt: fetched once per host, cached (in memory, and optionally on JE), obeyed.

The rules are read as RFC 9309's reference parser reads them (:mod:`.robots_rules`). A host
here is scheme + host + port (``http://example.com:8080``), since each is a separate server
with its own robots.txt.

What a robots.txt fetch's outcome means depends on the reading (``pycrawler crawl --robots``):

- ``rfc9309`` (the default), RFC 9309 2.3.1: 2xx: the body's rules (at most
  :data:`MAX_ROBOTS_BYTES`); 3xx: followed up to :data:`MAX_ROBOTS_REDIRECTS` hops, then
  allow all; 4xx but 429: allow all; 5xx, 429 and no answer (DNS, connect, timeout, reset: a
  negative status): complete disallow, the host's URLs wait
  (:data:`~pycrawler.fetch.status.ROBOTS_PREREQUISITE_FAILURE`, -61) and robots.txt is
  fetched again after a backoff, until it succeeds or has failed ``max_failures`` times in a
  row: then the host's URLs are finished with -61 (see :meth:`RobotsCache.gave_up`);
- ``heritrix``, Heritrix 3's ``CrawlServer.updateRobots``: any HTTP answer but 2xx allows
  all (what a crawl continued from Heritrix saw); no answer waits as above;
- ``ignore``: nothing fetched, everything allowed (only for one's own servers).

A failed fetch is retried ``retry_delay`` seconds later, the delay doubling per failure up to
``max_retry_delay`` (the crawl passes its retry policy: its URLs retry in step). Successful
entries expire after ``ttl`` seconds (Heritrix's default: a day). With ``store`` (any object
with ``get(key)`` / ``put(key, value)`` on bytes, e.g. a :class:`pycrawler.store.Database`)
fetched robots.txt survive a restart; expired records there are refetched like missing ones.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import struct
import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import BadInput
from . import robots_rules
from . import status as fetch_status

if TYPE_CHECKING:
    from .client import Fetcher

MAX_ROBOTS_BYTES = 500 * 1024
MAX_ROBOTS_REDIRECTS = 5
DEFAULT_TTL = 24 * 3600.0
DEFAULT_RETRY_DELAY = 30.0        # the first retry of a failed robots.txt: a page's first retry
DEFAULT_MAX_RETRY_DELAY = 900.0   # Heritrix's retry delay, the cap of the doubling
DEFAULT_MAX_FAILURES = 4          # fetches in a row, as a page's tries (1 + the frontier's 3 retries)
ALLOWED = 0
"""The verdict for a URL robots.txt lets the crawler fetch (any other verdict is a fetch status code)."""

AGENT = "pycrawler"
"""The product token robots.txt's groups name pycrawler by (``User-agent: pycrawler``)."""

RFC9309, HERITRIX, IGNORE = "rfc9309", "heritrix", "ignore"
READINGS = (RFC9309, HERITRIX, IGNORE)
"""How robots.txt is read: ``pycrawler crawl --robots``'s values (the module's docstring)."""

ROBOTS_STANDINGS = ("fetched", "absent", "error", "disallows_root")
"""What robots.txt says of a host as a whole (:meth:`RobotsPolicy.standing`)."""

_RECORD = struct.Struct(">BdiI")  # format version, fetched at (epoch s), status, attempts; then the body
_RECORD_VERSION = 1


def host_key(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lowercased, default port dropped: whose robots.txt applies."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


def unreachable(status: int, reading: str = RFC9309) -> bool:
    """Does a robots.txt fetch ending in ``status`` disallow the whole host for now (and get
    retried)? No answer always does; 5xx and 429 too as RFC 9309 reads them."""
    return status <= 0 or (reading == RFC9309 and (status >= 500 or status == 429))


@dataclasses.dataclass(slots=True)
class RobotsPolicy:
    """One host's robots.txt outcome: the final fetch status, when, and the rules it held."""

    host: str
    status: int                   # HTTP status of the final answer, or a negative fetch status
    fetched_at: float             # epoch seconds
    body: bytes = b""
    attempts: int = 1             # consecutive failed fetches so far, counting this one (1 on success)
    reading: str = RFC9309
    _rules: dict[str, robots_rules.Rules] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @property
    def valid(self) -> bool:
        """False while the host is disallowed for want of a robots.txt (:func:`unreachable`)."""
        return not unreachable(self.status, self.reading)

    def rules(self, agent: str) -> robots_rules.Rules | None:
        """The rules for ``agent``: None when everything is allowed (no robots.txt) or nothing is known."""
        if not 200 <= self.status < 300:
            return None
        rules = self._rules.get(agent)
        if rules is None:
            rules = self._rules[agent] = robots_rules.parse(self.body, agent)
        return rules

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """The ``Sitemap:`` URLs of the robots.txt, as written, in order."""
        rules = self.rules(AGENT)
        return () if rules is None else rules.sitemaps

    def allows(self, url: str, agent: str) -> bool:
        rules = self.rules(agent)
        return True if rules is None else rules.allows(url)

    def crawl_delay(self, agent: str) -> float | None:
        """The ``Crawl-delay`` for ``agent`` (or ``*``) in seconds; None when robots.txt sets none."""
        rules = self.rules(agent)
        return None if rules is None else rules.crawl_delay

    def standing(self, agent: str) -> str:
        """One of :data:`ROBOTS_STANDINGS`: ``error`` (no usable answer: the host's URLs wait
        for the next try), ``absent`` (no robots.txt: everything allowed), else the rules were
        fetched, and ``disallows_root`` when they exclude the host's ``/`` for ``agent`` (a
        host closed to the crawler, or all but the paths it allows), ``fetched`` otherwise."""
        if not self.valid:
            return "error"
        if self.rules(agent) is None:
            return "absent"
        return "fetched" if self.allows(f"{self.host}/", agent) else "disallows_root"

    def expired(self, now: float, ttl: float, retry_delay: float, max_retry_delay: float) -> bool:
        if self.valid:
            return now - self.fetched_at >= ttl
        doublings = min(self.attempts - 1, 64)  # past the cap anyway; 2 ** attempts overflows a float
        return now - self.fetched_at >= min(retry_delay * 2.0 ** doublings, max_retry_delay)

    def pack(self) -> bytes:
        return _RECORD.pack(_RECORD_VERSION, self.fetched_at, self.status, self.attempts) + self.body

    @classmethod
    def unpack(cls, host: str, record: bytes, reading: str = RFC9309) -> RobotsPolicy | None:
        """The policy stored as ``record``; None for a record this version cannot read (refetch it)."""
        if len(record) < _RECORD.size or record[0] != _RECORD_VERSION:
            return None
        _, fetched_at, status, attempts = _RECORD.unpack_from(record)
        return cls(host, status, fetched_at, bytes(record[_RECORD.size:]), attempts, reading)


class RobotsCache:
    """robots.txt per host for one crawler ``agent`` (the token robots.txt groups name, e.g. ``pycrawler``).

    ``await cache.verdict(url)`` is :data:`ALLOWED` (0), ``ROBOTS_PRECLUDED`` (-9998) or
    ``ROBOTS_PREREQUISITE_FAILURE`` (-61: the host's robots.txt is unreachable; the URL waits,
    unless :meth:`gave_up`); concurrent calls for one host share one fetch.
    ``cache.crawl_delay(url)`` answers from what is cached, without waiting, for the queue's
    politeness delay. ``reading`` is one of :data:`READINGS`.
    """

    def __init__(self, fetcher: Fetcher, agent: str = AGENT, *, reading: str = RFC9309, ttl: float = DEFAULT_TTL,
                 retry_delay: float = DEFAULT_RETRY_DELAY, max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
                 max_failures: int = DEFAULT_MAX_FAILURES, store=None, memory_entries: int = 100_000,
                 clock=time.time):
        if reading not in READINGS:
            raise BadInput(f"robots.txt reading is one of {', '.join(READINGS)}, not {reading!r}")
        self.fetcher, self.agent, self.reading = fetcher, agent, reading
        self.ttl, self.retry_delay, self.max_retry_delay = ttl, retry_delay, max_retry_delay
        self.max_failures, self.store, self.clock = max_failures, store, clock
        self.memory_entries = memory_entries
        self.fetches = 0  # robots.txt fetch attempts made (redirect hops included)
        self.standings: collections.Counter[str] = collections.Counter()  # of the policies in memory
        self._policies: collections.OrderedDict[str, RobotsPolicy] = collections.OrderedDict()
        self._pending: dict[str, asyncio.Future] = {}

    async def verdict(self, url: str) -> int:
        """May ``url`` be fetched? :data:`ALLOWED`, or the fetch status code that says why not."""
        if self.reading == IGNORE:
            return ALLOWED
        policy = await self.policy(url)
        if not policy.valid:
            return fetch_status.ROBOTS_PREREQUISITE_FAILURE
        return ALLOWED if policy.allows(url, self.agent) else fetch_status.ROBOTS_PRECLUDED

    def gave_up(self, url: str) -> bool:
        """Has ``url``'s host's robots.txt failed ``max_failures`` times in a row? Then its
        URLs stop waiting and are finished with -61: a host that never answers does not hold
        the crawl forever. It is asked again once its last failure's backoff has passed, and
        a success opens it to the URLs found afterwards."""
        policy = self._policies.get(host_key(url))
        return policy is not None and not policy.valid and policy.attempts >= self.max_failures

    def crawl_delay(self, url: str) -> float | None:
        """The cached ``Crawl-delay`` of ``url``'s host, or None (none set, or not fetched yet)."""
        policy = self._policies.get(host_key(url))
        return None if policy is None or self.reading == IGNORE else policy.crawl_delay(self.agent)

    def _expired(self, policy: RobotsPolicy, now: float) -> bool:
        return policy.expired(now, self.ttl, self.retry_delay, self.max_retry_delay)

    async def policy(self, url: str) -> RobotsPolicy:
        """The current policy of ``url``'s host: cached, stored, or fetched now."""
        host, now = host_key(url), self.clock()
        policy = self._policies.get(host)
        if policy is not None and not self._expired(policy, now):
            self._policies.move_to_end(host)
            return policy
        if host in self._pending:
            return await asyncio.shield(self._pending[host])
        future = self._pending[host] = asyncio.get_running_loop().create_future()
        try:
            stored = self._load(host)
            if stored is not None and not self._expired(stored, now):
                fresh = stored
            else:
                previous = policy or stored
                fresh = await self._fetch(host, previous.attempts if previous and not previous.valid else 0)
                self._save(fresh)
            self._remember(fresh)
            future.set_result(fresh)
            return fresh
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here, so a future nobody else awaited does not warn
            raise
        finally:
            del self._pending[host]

    async def _fetch(self, host: str, failed_before: int) -> RobotsPolicy:
        url = f"{host}/robots.txt"
        for _ in range(MAX_ROBOTS_REDIRECTS + 1):
            self.fetches += 1
            result = await self.fetcher.fetch(url, max_body=MAX_ROBOTS_BYTES)
            if result.redirect is None:
                break
            url = result.redirect
        attempts = failed_before + 1 if unreachable(result.status, self.reading) else 1
        return RobotsPolicy(host, result.status, self.clock(), result.body[:MAX_ROBOTS_BYTES], attempts,
                            self.reading)

    def known(self, host: str) -> RobotsPolicy | None:
        """The policy in memory for ``host`` (:func:`host_key`'s form), expired or not; None
        when none is."""
        return self._policies.get(host)

    def _remember(self, policy: RobotsPolicy) -> None:
        replaced = self._policies.get(policy.host)
        if replaced is not None:
            self.standings[replaced.standing(self.agent)] -= 1
        self.standings[policy.standing(self.agent)] += 1
        self._policies[policy.host] = policy
        self._policies.move_to_end(policy.host)
        while len(self._policies) > self.memory_entries:
            _, evicted = self._policies.popitem(last=False)
            self.standings[evicted.standing(self.agent)] -= 1

    def _load(self, host: str) -> RobotsPolicy | None:
        if self.store is None:
            return None
        record = self.store.get(host.encode("utf-8"))
        return None if record is None else RobotsPolicy.unpack(host, record, self.reading)

    def _save(self, policy: RobotsPolicy) -> None:
        if self.store is not None:
            self.store.put(policy.host.encode("utf-8"), policy.pack())
