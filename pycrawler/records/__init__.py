"""Records that frontiers store: :class:`CrawlUrl` and its codec."""

from .crawl_url import CrawlUrl

__all__ = ["CrawlUrl"]
