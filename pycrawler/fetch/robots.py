"""robots.txt: fetched once per host, cached (in memory, and optionally on JE), obeyed.

Rules are parsed and matched by protego (Scrapy's parser: Google's wildcard ``*`` and ``$``
matching, the longest matching rule wins and Allow wins a tie, ``Crawl-delay`` and
``Request-rate``). A host here is scheme + host + port (``http://example.com:8080``), since
each is a separate server with its own robots.txt.

What a robots.txt fetch's outcome means, as in Heritrix 3 (``CrawlServer.updateRobots``):

- 2xx: the body (at most :data:`MAX_ROBOTS_BYTES`, as RFC 9309 allows) holds the rules;
- any other HTTP status, 4xx and 5xx alike: no robots.txt, everything allowed (Heritrix
  follows Google's prevailing practice here; RFC 9309 would disallow all on 5xx);
- 3xx: followed, up to :data:`MAX_ROBOTS_REDIRECTS` hops (RFC 9309), the final answer counts;
- no HTTP answer (DNS, connect, timeout: a negative status): no valid rules. The host's URLs
  get :data:`~pycrawler.fetch.status.ROBOTS_PREREQUISITE_FAILURE` (-61) until the entry
  expires after ``retry_delay`` seconds and robots.txt is tried again.

Entries expire after ``ttl`` seconds (Heritrix's default: a day). With ``store`` (any object
with ``get(key)`` / ``put(key, value)`` on bytes, e.g. a :class:`pycrawler.store.Database`)
fetched robots.txt survive a restart; expired records there are refetched like missing ones.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import struct
import time
from urllib.parse import urlsplit

from protego import Protego

from . import status as fetch_status
from .client import Fetcher

MAX_ROBOTS_BYTES = 500 * 1024
MAX_ROBOTS_REDIRECTS = 5
DEFAULT_TTL = 24 * 3600.0
DEFAULT_RETRY_DELAY = 900.0       # Heritrix's retry delay for failed fetches
ALLOWED = 0
"""The verdict for a URL robots.txt lets the crawler fetch (any other verdict is a fetch status code)."""

AGENT = "pycrawler"
"""The token robots.txt's groups name pycrawler by (``User-agent: pycrawler``)."""

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


@dataclasses.dataclass(slots=True)
class RobotsPolicy:
    """One host's robots.txt outcome: the final fetch status, when, and the rules it held."""

    host: str
    status: int                   # HTTP status of the final answer, or a negative fetch status
    fetched_at: float             # epoch seconds
    body: bytes = b""
    attempts: int = 1             # consecutive failed fetches so far, counting this one (1 on success)
    _rules: Protego | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def valid(self) -> bool:
        """True when the server answered (whatever the status); False after a network failure."""
        return self.status > 0

    @property
    def rules(self) -> Protego | None:
        """The parsed rules: None when everything is allowed (no robots.txt) or nothing is known."""
        if self._rules is None and 200 <= self.status < 300:
            self._rules = Protego.parse(self.body.decode("utf-8", errors="replace"))
        return self._rules

    @property
    def sitemaps(self) -> list[str]:
        """The URLs of robots.txt's ``Sitemap:`` lines (any group's), in order; none without rules."""
        rules = self.rules
        return [] if rules is None else list(rules.sitemaps)

    def allows(self, url: str, agent: str) -> bool:
        rules = self.rules
        return True if rules is None else rules.can_fetch(url, agent)

    def crawl_delay(self, agent: str) -> float | None:
        """The ``Crawl-delay`` for ``agent`` (or ``*``) in seconds; None when robots.txt sets none."""
        rules = self.rules
        delay = rules.crawl_delay(agent) if rules is not None else None
        return None if delay is None else float(delay)

    def standing(self, agent: str) -> str:
        """One of :data:`ROBOTS_STANDINGS`: ``error`` (no HTTP answer: the host's URLs wait for
        the next try), ``absent`` (an answer other than 2xx: everything allowed), else the rules
        were fetched, and ``disallows_root`` when they exclude the host's ``/`` for ``agent``
        (a host closed to the crawler, or all but the paths it allows), ``fetched`` otherwise."""
        if not self.valid:
            return "error"
        if self.rules is None:
            return "absent"
        return "fetched" if self.allows(f"{self.host}/", agent) else "disallows_root"

    def expired(self, now: float, ttl: float, retry_delay: float) -> bool:
        return now - self.fetched_at >= (ttl if self.valid else retry_delay)

    def pack(self) -> bytes:
        return _RECORD.pack(_RECORD_VERSION, self.fetched_at, self.status, self.attempts) + self.body

    @classmethod
    def unpack(cls, host: str, record: bytes) -> RobotsPolicy | None:
        """The policy stored as ``record``; None for a record this version cannot read (refetch it)."""
        if len(record) < _RECORD.size or record[0] != _RECORD_VERSION:
            return None
        _, fetched_at, status, attempts = _RECORD.unpack_from(record)
        return cls(host, status, fetched_at, bytes(record[_RECORD.size:]), attempts)


class RobotsCache:
    """robots.txt per host for one crawler ``agent`` (the token robots.txt groups name, e.g. ``pycrawler``).

    ``await cache.verdict(url)`` is :data:`ALLOWED` (0), ``ROBOTS_PRECLUDED`` (-9998) or
    ``ROBOTS_PREREQUISITE_FAILURE`` (-61); concurrent calls for one host share one fetch.
    ``cache.crawl_delay(url)`` answers from what is cached, without waiting, for the queue's
    politeness delay. ``obey=False`` allows everything and fetches nothing.
    """

    def __init__(self, fetcher: Fetcher, agent: str = AGENT, *, ttl: float = DEFAULT_TTL,
                 retry_delay: float = DEFAULT_RETRY_DELAY, store=None, obey: bool = True,
                 memory_entries: int = 100_000, clock=time.time):
        self.fetcher, self.agent, self.obey = fetcher, agent, obey
        self.ttl, self.retry_delay, self.store, self.clock = ttl, retry_delay, store, clock
        self.memory_entries = memory_entries
        self.fetches = 0  # robots.txt fetch attempts made (redirect hops included)
        self.standings: collections.Counter[str] = collections.Counter()  # of the policies in memory
        self._policies: collections.OrderedDict[str, RobotsPolicy] = collections.OrderedDict()
        self._pending: dict[str, asyncio.Future] = {}

    async def verdict(self, url: str) -> int:
        """May ``url`` be fetched? :data:`ALLOWED`, or the fetch status code that says why not."""
        if not self.obey:
            return ALLOWED
        policy = await self.policy(url)
        if not policy.valid:
            return fetch_status.ROBOTS_PREREQUISITE_FAILURE
        return ALLOWED if policy.allows(url, self.agent) else fetch_status.ROBOTS_PRECLUDED

    def crawl_delay(self, url: str) -> float | None:
        """The cached ``Crawl-delay`` of ``url``'s host, or None (none set, or not fetched yet)."""
        policy = self._policies.get(host_key(url))
        return None if policy is None or not self.obey else policy.crawl_delay(self.agent)

    async def policy(self, url: str) -> RobotsPolicy:
        """The current policy of ``url``'s host: cached, stored, or fetched now."""
        host, now = host_key(url), self.clock()
        policy = self._policies.get(host)
        if policy is not None and not policy.expired(now, self.ttl, self.retry_delay):
            self._policies.move_to_end(host)
            return policy
        if host in self._pending:
            return await asyncio.shield(self._pending[host])
        future = self._pending[host] = asyncio.get_running_loop().create_future()
        try:
            stored = self._load(host)
            if stored is not None and not stored.expired(now, self.ttl, self.retry_delay):
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
        attempts = 1 if result.status > 0 else failed_before + 1
        return RobotsPolicy(host, result.status, self.clock(), result.body[:MAX_ROBOTS_BYTES], attempts)

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
        return None if record is None else RobotsPolicy.unpack(host, record)

    def _save(self, policy: RobotsPolicy) -> None:
        if self.store is not None:
            self.store.put(policy.host.encode("utf-8"), policy.pack())
