"""Scrapy requests in the frontier's records, in Scrapy's own serialization.

A request is stored as Scrapy stores it in ``JOBDIR`` disk queues: ``request.to_dict(spider=...)``
(callbacks and errbacks by the name of the spider method, meta, cb_kwargs, headers, body,
priority, flags) pickled with protocol 4, and read back with ``request_from_dict``
(:class:`RequestEncoder`, :func:`loads`). The bytes go
into the :class:`~pycrawler.records.crawl_url.CrawlUrl` record the work-queue frontier keeps
per URL: ``ori_url`` is the request's URL (the queue policy reads it) and ``description`` the
pickle as a Latin-1 string (one character per byte; JE's UTF keeps bytes below 0x80 as they are,
and a pickle is mostly those).

A request that cannot be stored (a lambda or a function that is not a spider method as
callback, an unpicklable object in meta) raises :class:`UnserializableRequest`, whose message
names the request and says why.
"""

from __future__ import annotations

import pickle
import types

from scrapy import Request
from scrapy.utils.request import request_from_dict

from ..errors import BadInput
from ..records.crawl_url import CrawlUrl

PICKLE_PROTOCOL = 4   # what Scrapy's disk queues use


class UnserializableRequest(BadInput):
    """A request Scrapy's request serialization cannot store; the message names it."""


class RequestEncoder:
    """Stores requests of one spider (:meth:`dumps`), as ``request.to_dict(spider=spider)`` does.

    Why not call that directly: Scrapy names a callback by scanning every member of the spider
    (``inspect.getmembers``), ~0.4 ms a request on a ``scrapy.Spider``, more than the rest of
    storing it. Here ``to_dict`` scans a stand-in that holds only the spider's methods that
    requests used so far (their names and bound methods, so Scrapy's own matching decides);
    a callback it does not know sends that request to the real spider once, and the stand-in
    learns the names Scrapy found."""

    def __init__(self, spider):
        self.spider = spider
        self._known = types.SimpleNamespace()

    def dumps(self, request: Request) -> bytes:
        """The stored form of ``request``; :class:`UnserializableRequest` when it has none."""
        try:
            return pickle.dumps(self._fields(request), protocol=PICKLE_PROTOCOL)
        except (ValueError, TypeError, AttributeError, pickle.PicklingError) as exc:
            raise UnserializableRequest(
                f"cannot store {request} in the crawl state: {exc} (callbacks and errbacks must be methods of the "
                f"spider, and meta and cb_kwargs picklable)") from None

    def _fields(self, request: Request) -> dict:
        try:
            return request.to_dict(spider=self._known)
        except ValueError:
            fields = request.to_dict(spider=self.spider)
        for name in (fields["callback"], fields["errback"]):
            if isinstance(name, str):
                setattr(self._known, name, getattr(self.spider, name))
        return fields


def loads(payload: bytes, spider) -> Request:
    """The request :func:`dumps` stored; BadInput when the spider no longer has its callback."""
    try:
        return request_from_dict(pickle.loads(payload), spider=spider)  # our own state
    except (ValueError, AttributeError) as exc:
        raise BadInput(f"a stored request does not fit spider {spider.name!r}: {exc}") from None


def to_record(url: str, payload: bytes) -> CrawlUrl:
    """The frontier record that carries a stored request."""
    return CrawlUrl(ori_url=url, description=payload.decode("latin-1"))


def payload_of(record: CrawlUrl) -> bytes:
    """The stored request of a frontier record made by :func:`to_record`."""
    return record.description.encode("latin-1")
