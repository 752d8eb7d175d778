"""How a URL was found, as its frontier record carries it: the hop path from its seed and the
URL it was found on (``via``), in the record's ``abstract_text``, as Heritrix's recovery log
writes them."""

from __future__ import annotations

from ..records.crawl_url import CrawlUrl


def discovery(record: CrawlUrl) -> tuple[str, str | None]:
    """(hop path, via) of a URL in the frontier; see :func:`discovered`."""
    text = record.abstract_text or ""
    hop_path, _, via = text.partition(" ")
    return hop_path, (via if via and via != "-" else None)

def discovered(url: str, layer: int, hop_path: str, via: str | None) -> CrawlUrl:
    """The frontier record of a URL found on ``via``: ``abstract_text`` carries its hop path and
    via, as Heritrix's recovery log writes them (``LLE http://example.com/``; a seed has an
    empty hop path and via ``-``)."""
    return CrawlUrl(ori_url=url, layer=layer, abstract_text=f"{hop_path} {via or '-'}")
