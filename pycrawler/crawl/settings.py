"""A crawl's settings and what a run reports.

:class:`CrawlConfig` holds one crawl's settings (``pycrawler crawl``'s options), of which
:data:`KEPT_SETTINGS` bind a state folder (written to ``crawl.json``: a resume with other
values would misread its stores); :func:`parse_delay` reads ``--delay``; :class:`CrawlSummary`
is what one run did, as the end of ``pycrawler crawl`` prints it.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from pathlib import Path

from ..errors import BadInput
from ..frontier.politeness import Politeness
from .diskspace import DEFAULT_MIN_FREE_MB

SETTINGS_FILE = "crawl.json"
KEPT_SETTINGS = ("seen", "queue_policy", "canon", "seen_key")
"""Settings a state folder is bound to: a resume with other values would misread its stores."""
SETTING_DEFAULTS = {"seen": "exact", "queue_policy": "host", "seen_key": "md5"}
"""Values of unset kept settings in a new state folder (``canon``: the seen-key scheme's)."""
JE_CACHE_MB = {"exact": 256, "bloom": 64, "drum": 64}
"""JE's cache for a crawl's state, by its Visited table, unless ``--je-cache-mb`` says otherwise.
``exact`` keeps a B-tree entry a URL in JE: on the 1M-page synthetic web its nodes outgrew
64 MB past ~450k pages and every check of a new URL went to the log (docs/benchmarks.md);
``bloom`` and ``drum`` keep their keys outside JE. JE fills its cache only as the state grows,
so a small crawl pays nothing for a large one."""


def set_crawl_jvm_defaults(je_cache_mb: int | None) -> None:
    """Set ``PYCRAWLER_HEAP`` and ``PYCRAWLER_JVM_OPTS``, each unless the environment has it, for
    a crawl whose ``--je-cache-mb`` is ``je_cache_mb``; None: a heap for any of
    :data:`JE_CACHE_MB`, the one a crawl takes being known only once it has read its state's
    ``crawl.json``. Under a ``PYCRAWLER_HEAP`` of the user's own, no initial heap size is set:
    one above that heap would stop the JVM at its start."""
    from ..jvm import crawl_jvm

    if je_cache_mb or os.environ.get("PYCRAWLER_HEAP"):
        settings = crawl_jvm(je_cache_mb or min(JE_CACHE_MB.values()))
    else:
        settings = crawl_jvm(min(JE_CACHE_MB.values()), up_to_mb=max(JE_CACHE_MB.values()))
    for name, value in settings.items():
        os.environ.setdefault(name, value)


DEFAULTS_FILE = "crawl-defaults.json"
"""Defaults an import records for the crawl that continues the other crawler's (``max_depth``:
a number, or null for no limit; ``delay``: a ``--delay`` SPEC), in place of ``pycrawler crawl``'s
own; an option given on the command line wins. The crawl never rewrites this file."""


def state_defaults(state: Path) -> dict:
    """The defaults recorded in ``state`` (:data:`DEFAULTS_FILE`), ``{}`` when there are none."""
    import json

    path = Path(state) / DEFAULTS_FILE
    if not path.is_file():
        return {}
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BadInput(f"{path} is not a JSON object of crawl defaults ({exc})") from None
    if not isinstance(recorded, dict):
        raise BadInput(f"{path} is not a JSON object of crawl defaults")
    return {name: recorded[name] for name in ("max_depth", "delay") if name in recorded}


def parse_delay(text: str) -> Politeness:
    """``--delay``: ``polite`` (Heritrix's rule: 10x the fetch time, 3 to 30 s), ``N`` (a fixed
    N seconds after each fetch of a queue; 0: none), or ``Fx`` (F times the fetch's duration,
    at most 30 s)."""
    text = text.strip().lower()
    try:
        if text == "polite":
            return Politeness()
        if text.endswith("x"):
            factor = float(text[:-1])
            return dataclasses.replace(Politeness.none(), delay_factor=factor, max_delay=30.0,
                                       retry_delay=Politeness().retry_delay, max_retry_delay=900.0)
        seconds = float(text)
    except ValueError:
        raise BadInput(f"--delay is 'polite', seconds (e.g. 0.5) or a factor (e.g. 5x), not {text!r}") from None
    if seconds < 0:
        raise BadInput("--delay cannot be negative")
    if seconds == 0:
        return Politeness.none()
    return dataclasses.replace(Politeness.none(), min_delay=seconds, max_delay=seconds,
                               retry_delay=max(seconds, 1.0), max_retry_delay=900.0)


@dataclasses.dataclass
class CrawlConfig:
    """One crawl's settings; see ``pycrawler crawl --help`` for each."""

    seeds: list[str]
    state: Path
    scope: str = "seed-hosts"
    max_pages: int | None = None
    max_depth: int | None = 20            # Heritrix's maxHops
    concurrency: int = 32
    politeness: Politeness = dataclasses.field(default_factory=Politeness)
    seen: str | None = None               # exact | bloom | drum (None: the state's, else exact)
    url_cache: str | None = None          # POLICY:SIZE of a URL cache in front of the seen table
    bloom_capacity: int = 10_000_000
    queue_policy: str | None = None       # host | heritrix-host | surt | domain | bkdr[:N] | bkdr-host:N
    #                                       | parallel-host:N
    canon: str | None = None              # web | safe | heritrix | crawler4j (None: the state's, else the seen key's)
    seen_key: str | None = None           # md5 | heritrix (None: the state's, else md5)
    warc: Path | None = None
    trace: Path | None = None
    fsync: bool = False                   # outputs reach the disk before each commit (power loss)
    repair: bool = False                  # a damaged state: fetch again what no WARC file holds
    min_free_mb: int = DEFAULT_MIN_FREE_MB  # stop when a written filesystem has less free (0: never)
    queue_budget: int | None = None       # fetches a work queue may make (None: the state's, else no limit; 0: none)
    robots: str = "rfc9309"                # rfc9309 | heritrix | ignore (pycrawler.fetch.robots.READINGS)
    sitemaps: bool = True                 # read the sitemaps robots.txt names (and a seed that is one)
    contact_url: str = "http://localhost/"
    embeds: bool = True
    fetchers: int | None = None           # fetcher processes (None: one a core)
    je_cache_mb: int | None = None        # MiB of JE cache (None: the Visited table's, JE_CACHE_MB)
    flush_interval: float = 0.02
    flush_pages: int = 256                # flush sooner once this many (or a quarter of the slots) wait
    grace: float = 5.0
    fetch: dict = dataclasses.field(default_factory=dict)  # FetchConfig overrides (timeouts, caps)
    progress: bool | None = None          # None: when stderr is a terminal
    serve: int | None = None              # serve the state through py4j on this port (0: any free one)
    stats: Path | None = None             # append the crawl's counters to this file every second

    def __post_init__(self):
        # Seeds as given on a command line or read from a file: the blanks around them and the empty ones go.
        self.seeds = [seed.strip() for seed in self.seeds if seed.strip()]


@dataclasses.dataclass
class CrawlSummary:
    """What one run did (``records`` counts the whole state, earlier runs included)."""

    fetched: int = 0                      # fetch attempts that got an HTTP answer
    failed: int = 0                       # attempts without one (negative status)
    precluded: int = 0                    # URLs robots.txt excluded
    bytes: int = 0
    links: int = 0                        # outlinks extracted
    out_of_scope: int = 0                 # distinct links dropped by scope or the trap rule
    dupes_avoided: int = 0                # links not scheduled again because already seen
    url_cache: str | None = None          # the --url-cache spec, if any
    cache_hits: int = 0                   # seen lookups the URL cache answered (table operations saved)
    cache_misses: int = 0                 # seen lookups that went through to the table
    enqueued: int = 0                     # new URLs put in the frontier
    records: int = 0
    pending: int = 0                      # URLs left in the frontier
    sitemaps: int = 0                     # sitemaps read (answered with a sitemap's body)
    sitemap_urls: int = 0                 # URLs they listed at their place
    sitemap_refused: int = 0              # URLs they listed off their place (host, folder)
    sitemaps_truncated: int = 0           # sitemaps past the protocol's limits or cut short
    queue_budget: int | None = None       # the budget in force, if any
    retired_queues: int = 0               # queues that spent it, their URLs left pending
    retired_urls: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    signal: int | None = None             # the signal that stopped the crawl
    store_bytes: int = 0
    repairs: list[str] = dataclasses.field(default_factory=list)  # what a killed run left, mended
    statuses: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    @property
    def pages_per_second(self) -> float:
        return self.fetched / self.seconds if self.seconds else 0.0

    def lines(self) -> list[str]:
        top = ", ".join(f"{code}: {n:,}" for code, n in sorted(self.statuses.items(), key=lambda kv: -kv[1])[:8])
        return [f"repaired:       {repair}" for repair in self.repairs] + [
            f"fetched:        {self.fetched:,} answered, {self.failed:,} failed, {self.precluded:,} precluded by robots.txt"
            f"{' (interrupted)' if self.interrupted else ''}",
            f"statuses:       {top or '-'}",
            f"rate:           {self.pages_per_second:,.1f} pages/s, {self.bytes / 1e6 / max(self.seconds, 1e-9):,.1f} MB/s"
            f" over {self.seconds:,.1f} s",
            f"links:          {self.links:,} extracted, {self.enqueued:,} new URLs, {self.dupes_avoided:,} dupes avoided,"
            f" {self.out_of_scope:,} out of scope or traps",
            f"state:          {self.records:,} fetched records, {self.pending:,} URLs pending,"
            f" {self.store_bytes / 2**20:,.1f} MB of JE logs",
        ] + ([self.cache_line()] if self.url_cache else []) + ([self.sitemap_line()] if self.sitemaps else []) + (
            [self.budget_line()] if self.queue_budget else [])

    def sitemap_line(self) -> str:
        return (f"sitemaps:       {self.sitemaps:,} read, {self.sitemap_urls:,} URLs listed, {self.sitemap_refused:,}"
                f" refused off their place, {self.sitemaps_truncated:,} past the protocol's limits or cut short")

    def budget_line(self) -> str:
        return (f"queue budget:   {self.queue_budget:,} fetches a queue: {self.retired_queues:,} queues spent it,"
                f" {self.retired_urls:,} of their URLs left pending (a higher --queue-budget fetches them)")

    def cache_line(self) -> str:
        lookups = self.cache_hits + self.cache_misses
        return (f"url cache:      {self.url_cache}: {self.cache_hits:,} hits"
                f" ({self.cache_hits / max(lookups, 1):.1%}), {self.cache_misses:,} misses;"
                f" {self.cache_hits:,} seen-table operations saved")
