"""Fetching: the asynchronous HTTP/1.1 client, Heritrix's fetch status codes, robots.txt.

``async with Fetcher(FetchConfig(contact_url=...)) as fetcher: result = await fetcher.fetch(url)``;
``RobotsCache(fetcher).verdict(url)`` before it.
"""

from . import status
from .client import FetchConfig, Fetcher, FetchResult, user_agent
from .robots import ALLOWED, RobotsCache, RobotsPolicy, host_key

__all__ = ["status", "FetchConfig", "Fetcher", "FetchResult", "user_agent", "ALLOWED", "RobotsCache",
           "RobotsPolicy", "host_key"]
