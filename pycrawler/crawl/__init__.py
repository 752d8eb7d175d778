"""Crawling: the outputs a crawl writes (crawl.log, WARC files, the link trace) and its progress line.

The engine that drives fetcher, parser and frontier lives beside these (``engine``).
"""
