"""A fetched page's CPU work, done in the fetcher processes: extract, filter the links.

The crawling process runs the event loop, the JVM and the frontier; every millisecond of
Python it spends per page caps the crawl. So the fetcher that fetched a page
(:mod:`.fetchers`) also does everything that depends only on the page:

1. :func:`pycrawler.parse.extract` (charset, title, meta fields, outlinks), or for a sitemap
   :func:`pycrawler.parse.sitemap.read_sitemap` (the URLs it lists);
2. the link filters that depend only on the link: scope (:mod:`.scope`), the path-repetition
   trap rule, the depth limit (from the page's layer);
3. a per-fetcher memory of the links it has already passed on (:data:`SENT_LIMIT` of them,
   then it starts afresh), so a link that appears on thousands of pages crosses back to the
   crawling process about once per fetcher instead of once per page. The frontier's Visited
   table stays the authority on what is new; this only spares it repeated questions;
4. the fields the page's :class:`~pycrawler.records.crawl_url.CrawlUrl` record keeps: title,
   charset, description, author, distinct references. (The record is encoded by the crawling
   process: the records module brings numpy, which the fetchers do without.)

Why the memory is safe: a link is remembered only once it has passed every filter that does
not depend on the page it was found on, and the crawling process schedules every link it
receives before it marks the page done (a crash loses the fetchers too, and a resumed crawl
starts with empty memories and refetches the pages that were in process).

Measured on 200 JDK API pages (50 kB on average, a loaded 2-core machine): extraction takes
~7.7 ms a page, so no page is parsed on the crawling process's loop.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses

from ..parse.html import MAX_OUTLINKS, extract
from ..parse.links import SAME_LAYER_HOPS, Hop, PathRepetitionRule
from ..parse.sitemap import GZIP_MAGIC, INDEX, read_sitemap
from .scope import Scope

SENT_LIMIT = 1_000_000
"""Links a worker remembers having passed on (a set of ~100 MB at most) before starting afresh."""

LARGE_PAGE_BYTES = 1 << 20
"""Pages this large are parsed one at a time across the workers, and the worker that parsed
one hands its freed heap back to the system afterwards (see :func:`_heap_trimmer`): lexbor's
tree of a 5 MB page takes ~50 MB, and the few such pages of a site tend to be linked from the
same index, so they arrive together and would otherwise be parsed side by side."""


@dataclasses.dataclass(frozen=True)
class LinkPolicy:
    """What the workers keep of a page's links. ``outlinks``: also return every extracted
    link as found (for WARC metadata records and the link trace)."""

    scope: Scope
    max_depth: int | None = None
    path_rule: PathRepetitionRule = PathRepetitionRule()
    embeds: bool = True
    max_outlinks: int = MAX_OUTLINKS
    outlinks: bool = False


@dataclasses.dataclass(slots=True)
class PageResult:
    """What a worker sends back for one page."""

    title: str | None
    char_set: str | None
    description: str | None
    author: str | None
    references: list[str]         # the page's distinct outlinks, in order
    links: list[str]              # links to schedule: in scope, within depth, new to this worker
    hops: str                     # the hop letter of each of ``links``
    extracted: int                # outlinks found on the page
    rejected: int                 # of those, out of scope or caught by the trap rule (first sighting)
    repeats: int                  # of those, passed on before by this worker (or twice on the page)
    outlinks: list | None = None  # (url, hop letter, context) of every outlink, when the policy asks
    sitemap: str | None = None    # a sitemap's kind (pycrawler.parse.sitemap), None for a page or no sitemap
    refused: int = 0              # a sitemap's URLs off its place (counted in ``rejected`` too)
    truncated: bool = False       # a sitemap past the protocol's limits, or cut short

    def record_on(self, crawl_url) -> None:
        """Copy the parsed fields onto a :class:`~pycrawler.records.crawl_url.CrawlUrl`."""
        crawl_url.title, crawl_url.char_set = self.title, self.char_set
        crawl_url.description, crawl_url.author = self.description, self.author
        crawl_url.url_references = self.references


_policy: LinkPolicy | None = None
_large_page_lock = None
_sent: set[str] = set()


def _heap_trimmer():
    """glibc's ``malloc_trim`` (hands the free heap back to the system), a no-op elsewhere.

    Parsing a page of several MB (the JDK docs have a few of 2-6 MB) makes lexbor's tree ~10x
    the page; once freed, that memory stays in glibc's heap (~60 MB) unless trimmed, so every
    worker would keep the peak of the largest page it ever parsed. A trim takes ~1 ms."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return lambda pad: 0


_trim_heap = _heap_trimmer()


def start_worker(policy: LinkPolicy, large_page_lock) -> None:
    """Make this process a page worker (a fetcher) under ``policy``; ``large_page_lock``: one
    lock shared by every worker (:data:`LARGE_PAGE_BYTES`)."""
    global _large_page_lock
    _large_page_lock = large_page_lock
    use_policy(policy)


def use_policy(policy: LinkPolicy) -> None:
    """Keep the links of the pages worked on from now on under ``policy`` (the crawl's scope grew)."""
    global _policy
    _policy = policy


def process_page(body: bytes, url: str, headers: dict, layer: int) -> PageResult:
    """Extract ``body`` (fetched from ``url``, found at ``layer``) and keep the new links.

    Runs in a fetcher (any process with :func:`start_worker` called)."""
    policy = _policy
    large = len(body) >= LARGE_PAGE_BYTES
    with _large_page_lock if large else contextlib.nullcontext():
        document = extract(body, url, headers, embeds=policy.embeds, max_outlinks=policy.max_outlinks)
        if large:
            _trim_heap(0)  # the page's tree is gone by now: give its memory back
    found = document.outlinks
    links, hops, rejected, repeats = _keep(((link.url, link.hop.value) for link in found), layer)
    outlinks = [(link.url, link.hop.value, link.context) for link in found] if _policy.outlinks else None
    return PageResult(document.title, document.char_set, document.description, document.author,
                      list(dict.fromkeys(link.url for link in found)), links, hops, len(found), rejected,
                      repeats, outlinks)


def process_sitemap(body: bytes, layer: int, allowed: tuple[str, ...], nested: bool) -> PageResult:
    """Read the sitemap ``body`` (:func:`pycrawler.parse.sitemap.read_sitemap`: the URLs it lists
    under the ``allowed`` prefixes) and keep the new links as :func:`process_page` keeps a
    page's: a page it lists is its ``L`` link, a sitemap an index lists its ``M`` link, kept
    only when ``nested`` (the index is not itself too deep in a chain of sitemaps)."""
    large = len(body) >= LARGE_PAGE_BYTES or body.startswith(GZIP_MAGIC)  # gzip: up to 50 MB inflated
    with _large_page_lock if large else contextlib.nullcontext():
        sitemap = read_sitemap(body, allowed)
        if large:
            _trim_heap(0)
    hop = Hop.MANIFEST.value if sitemap.kind == INDEX else Hop.LINK.value
    listed = sitemap.urls if nested or sitemap.kind != INDEX else []
    links, hops, rejected, repeats = _keep(((url, hop) for url in listed), layer)
    outlinks = [(url, hop, "loc") for url in listed] if _policy.outlinks else None
    return PageResult(None, None, None, None, [], links, hops, len(sitemap.urls) + sitemap.refused,
                      rejected + sitemap.refused + len(sitemap.urls) - len(listed), repeats, outlinks,
                      sitemap=sitemap.kind, refused=sitemap.refused, truncated=sitemap.truncated)


def _keep(found, layer: int) -> tuple[list[str], str, int, int]:
    """Of ``found`` links ((url, hop letter) each), those to schedule: within the depth limit
    from ``layer``, in scope, past the trap rule, not passed on before by this worker; with
    their hop letters, how many were rejected (scope, trap) and how many repeated."""
    policy = _policy
    deep = policy.max_depth is not None and layer >= policy.max_depth
    links, hops, rejected, repeats = [], [], 0, 0
    sent, allows, rejects = _sent, policy.scope.allows, policy.path_rule.rejects
    if len(sent) > SENT_LIMIT:
        sent.clear()
    for target, hop in found:
        # A meta refresh is a redirect, and a sitemap of an index a part of it: each keeps the
        # layer, so the depth limit does not stop it.
        if deep and hop not in SAME_LAYER_HOPS:
            continue
        if target in sent:
            repeats += 1
            continue
        sent.add(target)
        if not allows(target) or rejects(target):
            rejected += 1
            continue
        links.append(target)
        hops.append(hop)
    return links, "".join(hops), rejected, repeats
