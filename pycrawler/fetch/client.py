"""The asynchronous HTTP/1.1 fetcher: one GET per call, the outcome as a :class:`FetchResult`.

Built on aiohttp, chosen by measurement against eight other clients on loopback (3-7x httpx;
see docs/benchmarks.md, "HTTP clients on loopback"). One ``ClientSession`` holds keep-alive
connection pools (at most ``connections`` in all, ``connections_per_host`` per host); host
names go through a :class:`~pycrawler.fetch.dns.CachingResolver` (answers kept ``dns_ttl``
seconds).

What the fetcher does the way Heritrix does:

- redirects are not followed: a 3xx's ``Location`` is returned as :attr:`FetchResult.redirect`
  for the engine to schedule as a newly discovered URL with hop ``R``
  (:func:`pycrawler.parse.links.trailing_redirects` counts them for the hop limit);
- failures get Heritrix's negative status codes (:mod:`pycrawler.fetch.status`);
- a body cut by the size cap or by the total timeout keeps its HTTP status and is annotated
  ``lenTrunc`` or ``timeTrunc``, as Heritrix's crawl.log shows.

The body is read as sent (``payload``: still gzip- or deflate-encoded, for WARC records) and
decoded into ``body`` here, with the size cap applied to both, so a compression bomb stops at
the cap rather than filling memory.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import time

import aiohttp
from yarl import URL

from ..keys.canon import safe as normal_form
from ..parse.links import absolute_url
from . import status as fetch_status
from .dns import CachingResolver
from .result import FetchConfig, FetchResult, decode_payload, user_agent

ACCEPT_ENCODING = "gzip, deflate"


def request_url(url: str) -> URL:
    """The URL as it goes on the wire: its RFC 3986 normal form (what the frontier keys and
    hands out already), byte for byte. yarl left to itself normalises a path once more
    (``/a/%34.html`` as ``/a/4.html``, ``/a/./b`` as ``/a/b``), so two spellings a canonical
    form keeps apart would be one request made twice; ``encoded=True`` sends what it is given.
    An internationalised host name still goes out in IDNA."""
    url = normal_form(url) or url
    sent = URL(url, encoded=True)
    if sent.raw_host and not sent.raw_host.isascii():
        sent = sent.with_host(sent.raw_host)
    return sent


class Fetcher:
    """GETs URLs over shared keep-alive pools. ``async with Fetcher(config) as fetcher: await fetcher.fetch(url)``.

    ``resolver`` replaces aiohttp's default DNS resolver (any ``aiohttp.abc.AbstractResolver``);
    its answers are cached all the same.
    """

    def __init__(self, config: FetchConfig, *, resolver: aiohttp.abc.AbstractResolver | None = None):
        self.config = config
        self.user_agent = user_agent(config.contact_url)
        self._inner_resolver = resolver
        self.dns: CachingResolver | None = None
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Fetcher:
        self.open()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    def open(self) -> None:
        """Create the session (needs a running event loop)."""
        c = self.config
        self.dns = CachingResolver(self._inner_resolver, ttl=c.dns_ttl)
        connector = aiohttp.TCPConnector(limit=c.connections, limit_per_host=c.connections_per_host,
                                         use_dns_cache=False, resolver=self.dns)
        self._session = aiohttp.ClientSession(
            connector=connector, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None, connect=c.connect_timeout, sock_connect=c.connect_timeout,
                                          sock_read=c.read_timeout),
            headers={"User-Agent": self.user_agent, "Accept-Encoding": ACCEPT_ENCODING, "Accept": "*/*"})

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(self, url: str, *, max_body: int | None = None) -> FetchResult:
        """GET ``url`` once. Never raises for a network or server problem: the result's status says it.

        ``max_body`` lowers the configured body cap for this fetch (robots.txt uses it).
        """
        if self._session is None:
            raise RuntimeError("Fetcher is not open: use 'async with Fetcher(...)'")
        max_body = min(max_body or self.config.max_body, self.config.max_body)
        result = FetchResult(url=url, status=fetch_status.UNATTEMPTED, started=time.time())
        clock, chunks = time.perf_counter(), []
        try:
            async with asyncio.timeout(self.config.total_timeout):
                await self._get(result, clock, chunks, max_body)
        except TimeoutError as exc:  # the total timeout, or a connect/read timeout from aiohttp
            if result.headers_ms is None:
                connecting = isinstance(exc, aiohttp.ConnectionTimeoutError)
                self._fail(result, fetch_status.CONNECT_FAILED if connecting else fetch_status.TIMEOUT, exc)
            else:  # headers came, the body did not finish: keep what arrived, as Heritrix does
                result.annotations.append("timeTrunc")
                result.error = f"timed out reading the body: {_describe(exc)}"
                _finish_body(result, chunks, max_body)
        except aiohttp.ClientConnectorDNSError as exc:
            self._fail(result, fetch_status.DOMAIN_UNRESOLVABLE, exc)
        except aiohttp.ClientConnectorError as exc:
            code = (fetch_status.DOMAIN_UNRESOLVABLE if isinstance(exc.os_error, socket.gaierror)
                    else fetch_status.CONNECT_FAILED)
            self._fail(result, code, exc)
        except (aiohttp.InvalidURL, ValueError) as exc:
            self._fail(result, fetch_status.UNFETCHABLE_URI, exc)
        except (aiohttp.ClientError, OSError) as exc:  # disconnects, resets, garbage instead of HTTP
            self._fail(result, fetch_status.CONNECT_LOST, exc)
        except Exception as exc:  # one bad URL must not stop a crawl; -5 says it was a bug
            self._fail(result, fetch_status.RUNTIME_EXCEPTION, exc)
        result.duration_ms = (time.perf_counter() - clock) * 1000
        return result

    async def _get(self, result: FetchResult, clock: float, chunks: list[bytes], max_body: int) -> None:
        """The GET itself; body chunks go to ``chunks`` as they come, so a timeout keeps them."""
        async with self._session.get(request_url(result.url), allow_redirects=False) as response:
            result.headers_ms = (time.perf_counter() - clock) * 1000
            result.status, result.reason = response.status, response.reason or ""
            result.http_version = f"{response.version.major}.{response.version.minor}"
            result.request_headers = list(response.request_info.headers.items())
            result.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers]
            host = response.url.host or ""
            result.ip = host if _is_ip(host) else self.dns.address(host)
            if 300 <= response.status < 400 and (location := response.headers.get("Location")):
                result.redirect = absolute_url(result.url, location)
            # Whatever has arrived, in one piece: a page that came with its headers (most, on a
            # keep-alive connection) is one call that does not wait, where fixed 64 KB chunks
            # cost an async iterator and a second call for the end. Each piece is kept as it
            # comes, so a timeout still keeps what arrived.
            content, received = response.content, 0
            while not content.at_eof():
                chunk = await content.readany()
                chunks.append(chunk)
                received += len(chunk)
                if received > max_body:
                    result.annotations.append("lenTrunc")
                    response.close()  # the rest stays unread: this connection cannot be reused
                    break
            _finish_body(result, chunks, max_body)

    @staticmethod
    def _fail(result: FetchResult, code: int, exc: BaseException) -> None:
        result.status = code
        result.error = f"{fetch_status.NAMES.get(code, code)}: {_describe(exc)}"


@functools.lru_cache(maxsize=4096)  # asked on every fetch, for the few hosts a crawl visits at a time
def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _finish_body(result: FetchResult, chunks: list[bytes], max_body: int) -> None:
    """Set the payload (what came, at most ``max_body`` bytes) and the body (it decoded)."""
    result.payload = b"".join(chunks)[:max_body]
    result.body = decode_payload(result, max_body)
