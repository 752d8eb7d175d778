"""The spider the Scrapy tests run with ``scrapy runspider``: a ``CrawlSpider`` over one site.

One rule follows every link on the start URL's host, in the tags and attributes the ground truth
(:func:`pycrawler.static_site.ground_truth.reachable_pages`) follows. ``-a lambda_callback=1`` makes the start
page also yield a request whose callback is a lambda, which cannot be stored; ``-a urls_out=FILE``
writes the URL of every page that reached its callback with status 200, one a line.
"""

from urllib.parse import urlsplit

from scrapy import Request
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class SiteSpider(CrawlSpider):
    name = "site"
    rules = (Rule(LinkExtractor(tags=("a", "area", "link", "frame", "iframe"), attrs=("href", "src")),
                  callback="parse_page", follow=True),)

    def __init__(self, start_url: str, lambda_callback: str = "", urls_out: str = "", **kwargs):
        self.start_urls = [start_url]
        self.allowed_domains = [urlsplit(start_url).hostname]
        self.lambda_callback = bool(lambda_callback)
        self.urls = open(urls_out, "w") if urls_out else None  # closed in closed()
        super().__init__(**kwargs)

    def parse_start_url(self, response):
        self.parse_page(response)
        if self.lambda_callback:
            yield Request(response.urljoin("/d1/p1.html?lambda"), callback=lambda r: None)

    def parse_page(self, response):
        if self.urls is not None and response.status == 200:
            self.urls.write(response.url + "\n")

    def closed(self, reason):
        if self.urls is not None:
            self.urls.close()
