"""pycrawler: a crawl-frontier toolkit whose state lives in Berkeley DB Java Edition."""

__version__ = "0.1.0"
