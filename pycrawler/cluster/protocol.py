"""The one thing a crawl worker needs from the rest of the cluster: the exchange of links.

A lone crawl decides by itself that a discovered URL is new and puts it in its JE frontier.
With several workers two more questions arise: is the URL new *cluster-wide*, and which worker
fetches it (per-host politeness must hold across the cluster)? A `LinkExchange` answers both.
It has the shape of Heritrix's `UriUniqFilter`: links are added (buffered, sent in batches),
flushed at the worker's commit points, and delivered to the worker that must crawl them.

Delivery is at least once: a worker acknowledges a delivery only after the URLs are committed in
its own JE frontier, so a worker killed between receiving and committing gets them again, and its
frontier's seen table drops the repeat. Nothing acknowledged is lost when a worker dies.

Implementations: host splitting (Mercator's host splitter, the default) and seed 003's central
de-duplication protocol (`--dedupe central`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol

import numpy as np


class Link(NamedTuple):
    """A URL on its way to the worker that crawls it, with how it was found: ``layer`` is its
    depth (what ``--max-depth`` counts), ``hops`` its hop path and ``via`` the page that linked
    to it (None for a seed), as crawl.log writes them. The defaults are what a URL sent without
    them means (stream entries of earlier versions): one link hop from an unknown page."""

    url: str
    layer: int = 1
    hops: str = "L"
    via: str | None = None


NO_VIA = "-"


def encode_links(links: Iterable[Link]) -> str:
    """The text form of links in a stream entry or an outbox record: a line per link,
    ``URL<TAB>LAYER<TAB>HOPS<TAB>VIA``, the via left empty when it is the previous line's (the
    links of one page travel together, so a page's URL is written once per batch, not once per
    link)."""
    lines, previous = [], None
    for link in links:
        via = link.via or NO_VIA
        lines.append(f"{link.url}\t{link.layer}\t{link.hops}\t{'' if via == previous else via}")
        previous = via
    return "\n".join(lines)


def discovery_of(link: Link) -> str:
    """A link's line without its URL (``LAYER<TAB>HOPS<TAB>VIA``), the via written out."""
    return f"{link.layer}\t{link.hops}\t{link.via or NO_VIA}"


def encode_link(link: Link) -> str:
    """One link's line, standing on its own: lines made so may be joined in any order."""
    return f"{link.url}\t{discovery_of(link)}"


def decode_links(text: str) -> list[Link]:
    """Links from :func:`encode_links`'s text; a line with the URL alone (the form of earlier
    versions) is a :class:`Link` with the defaults."""
    links, via = [], None
    for line in text.split("\n") if text else ():
        if "\t" not in line:
            links.append(Link(line))
            continue
        url, layer, hops, named = line.split("\t", 3)
        if named:
            via = None if named == NO_VIA else named
        links.append(Link(url, int(layer), hops, via))
    return links


class Delivery(NamedTuple):
    """Links another part of the cluster assigned to this worker, and how to acknowledge them."""

    links: list[Link]
    token: object


class LinkExchange(Protocol):
    def add(self, links: Sequence[Link]) -> list[Link]:
        """Take links this worker discovered (its own seen table has already dropped the ones it
        knew); return those it keeps for itself at once, and queue the rest for the cluster."""

    def flush(self) -> list[Link] | None:
        """Send everything `add` and `forward` queued; called before the worker commits its
        fetches to JE, so a fetch is never acknowledged while the links it found exist only in
        memory. None: everything queued so far reached the cluster. Else Redis did not answer:
        what was queued stays queued (the next flush tries again), and the links queued since
        the previous flush are returned, once, for the worker to make durable in the commit
        that finishes the pages they came from (and to `add` again when it restarts)."""

    def receive(self, max_urls: int, block_ms: int = 0) -> list[Delivery]:
        """URLs new cluster-wide that this worker must crawl; waits up to `block_ms`."""

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        """The deliveries' URLs are committed in this worker's JE frontier: never redeliver them."""

    def forward(self, links: Sequence[Link]) -> list[Link]:
        """Links this worker polled from its own frontier: return those it still must fetch, and
        queue the rest (their hosts moved to another worker) for the worker that must, past
        any cache: a URL handed over has to arrive. The worker finishes those in its frontier
        and remembers them (:mod:`pycrawler.crawl.forwarded`): should one come back to it
        (the worker it went to died before committing it), its seen table would drop it."""

    def fetched(self, urls: Sequence[str], keys: np.ndarray) -> None:
        """URLs this worker fetched for good (``keys``: their Visited keys), sent with the next
        `flush`, so that a worker that later owns their hosts does not fetch them again."""

    def earlier_fetches(self, urls: Sequence[str]) -> np.ndarray:
        """Called with the URLs this worker polled and still fetches, before it fetches them:
        the Visited keys of what other workers fetched on those URLs' hosts before this one
        gained them, for each host not asked about since it was gained (empty otherwise). The
        worker learns them as seen and does not fetch them."""

    def duplicates(self) -> int:
        """Links this worker discovered that the cluster dropped as known before they reached any
        worker's frontier (a sending cache's hits, the central protocol's strikes), since the
        exchange opened: the worker counts them among its dupes avoided."""

    def report(self, fetched: int, pending: int, idle: bool) -> bool:
        """Tell the cluster how this worker stands (fetched pages, URLs in its frontier; idle:
        nothing to fetch and nothing in process), at least every flush; True when it is idle
        and so is every other worker, with nothing in transit: the crawl is over."""

    def close(self) -> None:
        """Leave the cluster cleanly (a worker that dies instead is noticed by its lease)."""
