"""What a fetch is asked to do and what it gives back, apart from the client that does it.

:class:`FetchConfig` and :class:`FetchResult` cross between processes (a fetcher process
fetches, the crawling process writes and commits), and the crawling process reads results back
from WARC files (:mod:`pycrawler.crawl.state_check`): none of that needs the HTTP client, whose
import (aiohttp's, a sixth of a second of CPU) only the fetcher processes pay
(:mod:`.client`).
"""

from __future__ import annotations

import dataclasses
import datetime
import email.utils
import zlib
from urllib.parse import urlsplit, urlunsplit

from .. import __version__
from ..errors import BadInput

DEFAULT_MAX_BODY = 32 * 1024 * 1024


def user_agent(contact_url: str) -> str:
    """``pycrawler/VERSION (+CONTACT)``: who is crawling and where to complain (Heritrix requires one too)."""
    parts = urlsplit(contact_url or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(f"the crawler's contact must be an http(s) URL, got {contact_url!r}")
    return f"pycrawler/{__version__} (+{contact_url})"


@dataclasses.dataclass(frozen=True, slots=True)
class FetchConfig:
    """How the fetcher behaves. Timeouts are in seconds; ``total`` bounds a whole fetch."""

    contact_url: str
    connect_timeout: float = 10.0
    read_timeout: float = 30.0      # longest silence between two reads
    total_timeout: float = 120.0
    max_body: int = DEFAULT_MAX_BODY
    connections: int = 256
    connections_per_host: int = 8
    dns_ttl: float = 300.0


@dataclasses.dataclass(slots=True)
class FetchResult:
    """One fetch attempt's outcome. ``status`` is the HTTP status, or a negative fetch status code."""

    url: str
    status: int
    reason: str = ""
    http_version: str = "1.1"
    request_headers: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    headers: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # as sent, in order
    payload: bytes = b""            # the body as received (content-encoded)
    body: bytes = b""               # the body decoded (gzip/deflate undone)
    redirect: str | None = None     # absolute Location of a 3xx, when it is fetchable
    error: str | None = None        # what went wrong, for failures and truncations
    annotations: list[str] = dataclasses.field(default_factory=list)  # lenTrunc, timeTrunc, ...
    ip: str | None = None           # the server address connected to
    started: float = 0.0            # wall clock (epoch seconds) when the fetch began
    headers_ms: float | None = None  # time to the response headers
    duration_ms: float = 0.0        # time to the end of the body (or the failure)

    def header(self, name: str) -> str | None:
        """The last value of response header ``name`` (case-insensitive), or None."""
        name = name.lower()
        for key, value in reversed(self.headers):  # asked per fetch: a loop, lowering only same-length names
            if len(key) == len(name) and key.lower() == name:
                return value
        return None

    def retry_after(self) -> float | None:
        """The seconds ``Retry-After`` asks a client to wait (RFC 9110 10.2.3: a number of seconds
        or an HTTP-date, counted from when the fetch began), or None when it names no wait."""
        value = self.header("retry-after")
        if value is None:
            return None
        value = value.strip()
        if value.isdigit():
            return float(value)
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:   # an HTTP-date is GMT; a date without a zone is taken as one
            when = when.replace(tzinfo=datetime.UTC)
        return max(when.timestamp() - self.started, 0.0)

    @property
    def header_map(self) -> dict[str, str]:
        """Response headers by lowercased name (last value wins), e.g. for the parser."""
        return {k.lower(): v for k, v in self.headers}

    def record_on(self, crawl_url) -> None:
        """Copy the fetch's outcome onto a :class:`~pycrawler.records.crawl_url.CrawlUrl`.

        ``status_code`` (HTTP or negative), ``file_size`` (bytes received), ``last_update_time``
        (when the fetch began, in ns) and ``url`` (the URL with the host as the IP connected to).
        """
        crawl_url.status_code = self.status
        crawl_url.file_size = min(len(self.payload), 2**31 - 1)
        crawl_url.last_update_time = int(self.started * 1e9)
        if self.ip:
            crawl_url.url = with_host(self.url, self.ip)


def with_host(url: str, host: str) -> str:
    """``url`` with its host replaced (an IPv6 address gets its brackets); port, path, query kept."""
    parts = urlsplit(url)
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def decode_payload(result: FetchResult, max_body: int) -> bytes:
    """The payload with its Content-Encoding undone, at most ``max_body`` bytes.

    An encoding this fetcher did not ask for is left as is; a corrupt or cut stream keeps what
    decoded before the damage (a cut one is annotated already; a corrupt one gets
    ``decodeTrunc``).
    """
    payload = result.payload
    encoding = (result.header("Content-Encoding") or "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        decoders = [zlib.decompressobj(16 + zlib.MAX_WBITS)]
    elif encoding == "deflate":  # servers send zlib-wrapped or raw deflate under this name
        decoders = [zlib.decompressobj(zlib.MAX_WBITS), zlib.decompressobj(-zlib.MAX_WBITS)]
    else:
        return payload
    for decoder in decoders:
        try:
            body = decoder.decompress(payload, max_body)
        except zlib.error:
            continue
        if decoder.unconsumed_tail and "lenTrunc" not in result.annotations:
            result.annotations.append("lenTrunc")  # a compression bomb stops here
        return body
    result.annotations.append("decodeTrunc")
    result.error = f"the {encoding} body could not be decoded"
    return b""
