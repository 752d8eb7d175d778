"""Scrapy's side of ``crawl_vs_scrapy.py``: a plain spider that follows every same-host link.

What a ``CrawlSpider`` with one ``Rule(LinkExtractor(), follow=True)`` does, written as a
plain ``Spider`` so nothing but the crawl runs: no items, no pipelines. The link extractor
looks where the ground truth looks (``a``/``area``/``link`` hrefs, ``frame``/``iframe``
sources) and keeps Scrapy's default filters (other hosts through ``allowed_domains``,
non-page extensions such as ``.css``, ``.js``, images). Settings come from the command line (``-s``), so the benchmark's
command shows them all. Run by the benchmark as::

    python -m scrapy runspider crawl_vs_scrapy_spider.py -a start_url=URL \\
        -a urls_out=FILE -a stats_out=FILE [-a allowed_hosts=HOST,...] -s CONCURRENT_REQUESTS=32 ...

``urls_out`` gets one line per response that reached the spider (status, then URL): the
benchmark's coverage. ``stats_out`` gets Scrapy's own stats as JSON when the engine stops.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor

LINK_TAGS = ("a", "area", "link", "frame", "iframe")
LINK_ATTRIBUTES = ("href", "src")


class FollowSameHostSpider(scrapy.Spider):
    name = "follow_same_host"

    def __init__(self, start_url: str, urls_out: str, stats_out: str, allowed_hosts: str = "", **kwargs):
        super().__init__(**kwargs)
        # Several seeds (vs_crawlers.py's sites of many hosts) come comma-separated.
        self.start_urls = start_url.split(",")
        # More hosts in scope than the seeds' (comma-separated): a site whose other hosts are
        # reached through links, as pathologies.py's; a seed is fetched again when a page links
        # to it (a start request is not filtered), so such hosts cannot be given as seeds.
        self.allowed_domains = sorted({urlsplit(url).hostname for url in self.start_urls}
                                      | set(filter(None, allowed_hosts.split(","))))
        # Other hosts are dropped by Scrapy's offsite filter (allowed_domains), as in a CrawlSpider;
        # the extractor's own allow_domains would compare host:port and refuse every loopback link.
        self.links = LinkExtractor(tags=LINK_TAGS, attrs=LINK_ATTRIBUTES)
        self.stats_out = stats_out
        self.urls = open(urls_out, "w", buffering=1 << 16)  # closed in closed()

    def parse(self, response):
        self.urls.write(f"{response.status} {response.url}\n")
        if isinstance(response, HtmlResponse):
            yield from response.follow_all(self.links.extract_links(response), callback=self.parse)

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        # At engine_stopped the stats are final (elapsed_time_seconds is set after the spider closes).
        crawler.signals.connect(spider.write_stats, signal=signals.engine_stopped)
        return spider

    def closed(self, reason):
        self.urls.close()

    def write_stats(self):
        with open(self.stats_out, "w") as out:
            json.dump(self.crawler.stats.get_stats(), out, default=str, indent=1)
