"""How a URL was found, as its frontier record carries it: the hop path from its seed and the
URL it was found on (``via``), in the record's ``abstract_text``, as Heritrix's recovery log
writes them; :class:`LinkScheduler` puts found URLs in the frontier so."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

from ..records.crawl_url import CrawlUrl

if TYPE_CHECKING:  # the migrations import this module for its functions alone
    from ..frontier.workqueues import WorkQueueFrontier
    from .stats_log import StatsLog


def discovery(record: CrawlUrl) -> tuple[str, str | None]:
    """(hop path, via) of a URL in the frontier; see :func:`discovered`."""
    text = record.abstract_text or ""
    hop_path, _, via = text.partition(" ")
    return hop_path, (via if via and via != "-" else None)


def discovery_text(hop_path: str, via: str | None) -> str:
    """The ``abstract_text`` of a URL found on ``via``: its hop path and via, as Heritrix's
    recovery log writes them (``LLE http://example.com/``; a seed has an empty hop path and
    via ``-``)."""
    return f"{hop_path} {via or '-'}"


def discovered(url: str, layer: int, hop_path: str, via: str | None) -> CrawlUrl:
    """The frontier record of a URL found on ``via`` (:func:`discovery_text`)."""
    return CrawlUrl(ori_url=url, layer=layer, abstract_text=discovery_text(hop_path, via))


class LinkScheduler:
    """Puts links in the frontier, each at its layer with its hop path and via (the crawl's
    seeds, its pages' links, what other cluster workers sent), lower layers first, in one
    :meth:`~pycrawler.frontier.workqueues.WorkQueueFrontier.schedule` call: one transaction and
    one pass through the Visited table a flush, where a call a layer made five of each at a
    flush of a deep crawl (a DRUM add appends to every bucket file)."""

    def __init__(self, frontier: WorkQueueFrontier, stats_log: StatsLog | None = None):
        self.frontier, self.stats_log = frontier, stats_log

    def __call__(self, links: Sequence[tuple[str, int, str, str | None]], force: bool = False) -> None:
        """``links``: (url, layer, hop path, via) each, plain tuples or
        :class:`~pycrawler.cluster.protocol.Link`; ``force``: past the seen table.

        No record is made here: the frontier gets the URLs with their layers and
        ``abstract_text`` (what :func:`discovered` would put in a record) and builds the
        pending values of the URLs its seen table calls new only (a record a link cost a repeat
        nearly as much as a new URL)."""
        # A stable sort: within a layer, the links keep their order (and a URL found at two
        # layers is new at the lower one), as when each layer was scheduled on its own.
        links = sorted(links, key=itemgetter(1))
        if self.stats_log is not None:
            self.stats_log.scheduled(len(links))
        if links:
            self.frontier.schedule([link[0] for link in links], layer=links[0][1], force=force,
                                   layers=[link[1] for link in links],
                                   abstract_texts=[discovery_text(hops, via) for _, _, hops, via in links])
