"""Fetching: the asynchronous HTTP/1.1 client, Heritrix's fetch status codes, robots.txt.

``async with Fetcher(FetchConfig(contact_url=...)) as fetcher: result = await fetcher.fetch(url)``;
``RobotsCache(fetcher).verdict(url)`` before it.
"""

from ..lazy import lazy_attributes
from . import status

# Loaded on first use: the client brings aiohttp, which the commands that never fetch (the store's,
# the Heritrix and crawler4j readers', and every command under GraalPy, which has no aiohttp) do without.
_HOMES = {"FetchConfig": "result", "Fetcher": "client", "FetchResult": "result", "user_agent": "result",
          "ALLOWED": "robots", "RobotsCache": "robots", "RobotsPolicy": "robots", "host_key": "robots"}

__all__ = ["status", *_HOMES]
__getattr__ = lazy_attributes(__name__, _HOMES)
