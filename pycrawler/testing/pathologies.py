"""A web of pathologies on loopback: the traps, lies and faults of the real web, each with the
outcome a crawl must have, and a log of every request, so a crawl is judged from the server's
side, as a site's operator would judge it.

Every :class:`Pathology` of :data:`CATALOGUE` is a small family of pages under its own path
prefix (``/NAME/``) on a host of its own (127.0.0.2, 127.0.0.3...: all loopback on Linux, each
with its own robots.txt and politeness queue); the home page on 127.0.0.1 links to every
family's entry, next to a small ordinary site. One aiohttp server answers every host on one
port; it runs in a thread of the caller (:class:`PathologyWeb`) or as its own process for the
peers' runs::

    python -m pycrawler.testing.pathologies --port 8600 --log requests.jsonl

A pathology says which of its pages are ordinary (each must be fetched exactly once), how many
requests a crawl may make into the family at most, which pages it must never fetch (robots.txt
forbids them, or they are a wrong reading of the page), and for a throttled page how long its
``Retry-After`` asks to wait. :meth:`PathologyWeb.judge` checks a crawl against it.

The families came from the issue that asked for them and from what users of the peers hit:

- session ids that change on every answer, in the path (``;jsessionid=``) and the query
  (``PHPSESSID``, ``sid``): Arachni #171, "Endless loop on URLs with ; and ? in querystring";
- soft 404s, whose relative links deepen without end (``text/js/text/js/...``): zaproxy #4084,
  spidr #31, gospider #73;
- a page that redirects to itself while it sets a cookie: scrapy #1225 (the dupefilter drops
  the redirect), httpx #821, aiohttp #56;
- a ``Location`` header of raw UTF-8 bytes: scrapy #2321 (read as latin-1, requested as mojibake);
- a robots.txt that begins with a byte-order mark: scrapy #6195 (its first group ignored),
  BUbiNG #17; a robots.txt redirect (simplecrawler #414, wpull #58; RFC 9309 says five hops);
- faceted navigation whose links add parameters in every order: Norconex crawler #28.

RFC 9309 (robots.txt), RFC 2606 (``.invalid`` never resolves) and RFC 9110 (``Retry-After``)
give the outcomes of the robots, DNS and throttle families.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import random
import signal
import socket
import struct
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Collection
from html import escape
from pathlib import Path

from aiohttp import web

READY = "listening on port "
START_ATTEMPTS = 5
HOME = "127.0.0.1"
UNRESOLVABLE = "pathologies.invalid"   # RFC 2606: a name that never resolves
MAX_URL = 2083                         # the longest URL Heritrix, Scrapy and browsers take
ORDINARY_PAGES = 30                    # the home host's ordinary site


@dataclasses.dataclass(frozen=True)
class Pathology:
    """One page family: its trap, lie or fault (``what``) and the outcome a crawl must have."""

    name: str
    what: str
    outcome: str
    ordinary: tuple[str, ...] = ("entry",)
    """Pages (as the server names them) a crawl fetches exactly once each."""
    max_requests: int = 2
    """Requests into the family (robots.txt left out) a crawl may make at most."""
    never: tuple[str, ...] = ()
    """Pages a crawl must not fetch at all."""
    retry_after: float = 0.0
    """For a throttled page: no second request of it sooner than this many seconds."""

    @property
    def prefix(self) -> str:
        return f"/{self.name}/"


CATALOGUE: tuple[Pathology, ...] = (
    Pathology("session-path", "every link names a new ;jsessionid= in the path",
              "each page once, whatever its session", ("entry", "a.html", "b.html", "c.html"), 4),
    Pathology("session-query", "every link names a new PHPSESSID= or sid= in the query",
              "each page once, whatever its session", ("entry", "a.html", "b.html", "c.html"), 4),
    Pathology("userinfo", "links with user:password@ and a percent-escaped userinfo",
              "each page once, as the page without userinfo", ("entry", "a.html", "b.html", "c.html"), 4),
    Pathology("calendar", "an endless calendar: every month links the next and the last",
              "bounded by the hop limit", ("entry", "about.html"), 41),
    Pathology("deepening-path", "a relative link that resolves one folder deeper on every page",
              "stopped at the third repetition of a segment", ("entry", "end.html"), 4),
    Pathology("many-segments", "every page links a folder one new segment deeper",
              "bounded by the hop limit and 20 path segments", ("entry", "end.html"), 21),
    Pathology("long-url", "every page links a URL twice as long, and one link is 100,000 characters",
              f"no URL over {MAX_URL} characters requested", ("entry", "end.html"), 13, never=("too-long",)),
    Pathology("facets", "faceted navigation: three facets added in every order",
              "bounded by the 79 orders of the facets", ("entry",), 79),
    Pathology("soft-404", "a missing page answers 200 with relative links that deepen (text/js/text/js/...)",
              "stopped at the third repetition", ("entry", "real.html"), 5),
    Pathology("redirect-loop", "a redirects to b, b to a", "each fetched once", ("entry",), 3),
    Pathology("redirect-chain", "an endless redirect chain, and a chain of three to a page",
              "at most 5 redirects in a row followed; the short chain's page once", ("entry", "target.html"), 11),
    Pathology("refresh-loop", "meta refresh: a loop, an endless chain and one to a page",
              "bounded; the refreshed-to page once", ("entry", "target.html"), 25),
    Pathology("cookie-redirect", "a page redirects to itself while it sets a cookie",
              "bounded: fetched at most twice", ("entry",), 3),
    Pathology("location-utf8", "a redirect whose Location is raw UTF-8 bytes",
              "its target requested once, in UTF-8", ("entry", "café.html"), 3),
    Pathology("base-href", "<base href> points links into another folder",
              "the link resolved against the base", ("entry", "target.html"), 2, never=("wrong.html",)),
    Pathology("charset-header", "a Shift_JIS page, its charset given by the header only",
              "its non-ASCII link requested in UTF-8", ("entry", "日本語.html"), 2),
    Pathology("charset-bom", "a UTF-8 page with a byte-order mark, its header saying ISO-8859-1",
              "the BOM wins: its link requested in UTF-8", ("entry", "grüße.html"), 2),
    Pathology("charset-meta", "a windows-1251 page, its charset given by <meta> only",
              "its non-ASCII link requested in UTF-8", ("entry", "страница.html"), 2),
    Pathology("lying-type", "HTML served as image/png and as application/octet-stream, bytes as text/html",
              "each fetched once, the crawl goes on", ("entry", "page.png", "octet.bin", "binary.html"), 4),
    Pathology("huge-body", "a 64 MB page and a body that does not end",
              "each fetched once, cut at the size cap", ("entry", "huge.html", "endless.html"), 3),
    Pathology("gzip-bomb", "a gzip body that inflates to 256 MB", "fetched once, cut", ("entry", "bomb.html"), 2),
    Pathology("deflate-bomb", "a deflate body that inflates to 256 MB", "fetched once, cut", ("entry", "bomb.html"), 2),
    Pathology("brotli-bomb", "a brotli body (not asked for) that inflates to 256 MB",
              "fetched once, cut", ("entry", "bomb.html"), 2),
    Pathology("drip", "a body sent one byte at a time, seconds apart",
              "fetched once, the other hosts not held up", ("entry", "drip.html", "after.html"), 3),
    Pathology("reset", "the connection reset in the middle of the body",
              "retried a bounded number of times, the crawl goes on", ("entry", "after.html"), 6),
    Pathology("truncated-chunked", "a chunked body that ends without its last chunk",
              "retried a bounded number of times, the crawl goes on", ("entry", "after.html"), 6),
    Pathology("throttle-429", "429 with Retry-After: 2 on the first request",
              "asked again, not sooner than it said; the page behind it once",
              ("entry", "page.html", "after.html"), 5, retry_after=2.0),
    Pathology("unavailable-503", "503 with Retry-After: 2 on the first request",
              "asked again, not sooner than it said; the page behind it once",
              ("entry", "page.html", "after.html"), 5, retry_after=2.0),
    Pathology("robots-5xx", "robots.txt answers 503", "RFC 9309: complete disallow, no page fetched", (), 0),
    Pathology("robots-429", "robots.txt answers 429", "as a 5xx: complete disallow, no page fetched", (), 0),
    Pathology("robots-4xx", "robots.txt answers 403", "RFC 9309: a 4xx allows all", ("entry", "page.html"), 2),
    Pathology("robots-redirect", "robots.txt redirects to the rules",
              "the redirect followed, its rules obeyed", ("entry", "public.html"), 3, never=("private.html",)),
    Pathology("robots-garbage", "robots.txt is binary garbage", "no rules: all allowed", ("entry", "page.html"), 2),
    Pathology("robots-2mb", "robots.txt of 2 MB, its rules first",
              "the rules in the first 500 KiB obeyed", ("entry", "public.html"), 2, never=("private.html",)),
    Pathology("robots-bom", "robots.txt begins with a UTF-8 byte-order mark",
              "its first group obeyed", ("entry", "public.html"), 2, never=("private.html",)),
    Pathology("dns-fails", f"a link to a host that never resolves ({UNRESOLVABLE})",
              "recorded and given up, the crawl goes on", ("entry", "after.html"), 2),
    Pathology("refused", "a link to a loopback port that refuses connections",
              "recorded and given up, the crawl goes on", ("entry", "after.html"), 2),
)

BY_NAME = {pathology.name: pathology for pathology in CATALOGUE}


def family_address(index: int) -> str:
    """The host of the catalogue's ``index``-th family: 127.0.0.2 onwards (127.0.0.1 is home)."""
    return f"127.0.0.{index + 2}"


@dataclasses.dataclass
class Hit:
    """One request as the server saw it: when it came (monotonic seconds), to which host, the
    path as sent (query included), the page it was answered as (None: a trap page, a 404)."""

    at: float
    host: str
    path: str
    agent: str
    family: str = ""
    page: str | None = None


def html(title: str, links=(), head: str = "", text: str = "") -> str:
    anchors = "".join(f'<a href="{escape(href)}">{escape(href[:40])}</a>\n' for href in links)
    return (f"<!DOCTYPE html><html><head>{head}<title>{escape(title)}</title></head>"
            f"<body><p>{text}</p>{anchors}</body></html>")


def _session() -> str:
    return uuid.uuid4().hex.upper()   # 32 characters: what Heritrix's session-id patterns expect


def _zeros_deflated(total: int) -> tuple[bytes, int, int]:
    """A raw deflate stream of ``total`` zero bytes (a multiple of 1 MiB), with its CRC-32 and
    Adler-32: after a full flush each MiB of zeros compresses to the same bytes, so the stream is
    built from one compressed MiB repeated instead of deflating it all (256 MB: 0.1 s, not 3 s)."""
    block, count = bytes(1 << 20), max(1, total >> 20)
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    steady = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    crc, adler = 0, 1
    for _ in range(count):
        crc, adler = zlib.crc32(block, crc), zlib.adler32(block, adler)
    return first + steady * (count - 1) + deflater.flush(), crc, adler


def bombs(total: int) -> dict[str, bytes]:
    """Content-Encoding -> a body that inflates to ``total`` zero bytes."""
    import brotli  # the test extra's (Scrapy's own dependency); only the server's bomb needs it

    raw, crc, adler = _zeros_deflated(total)
    count = max(1, total >> 20)
    gzip = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + raw + struct.pack("<II", crc, (count << 20) & 0xFFFFFFFF)
    deflate = b"\x78\xda" + raw + struct.pack(">I", adler)
    compressor, block = brotli.Compressor(quality=5), bytes(1 << 20)
    br = b"".join(compressor.process(block) for _ in range(count)) + compressor.finish()
    return {"gzip": gzip, "deflate": deflate, "br": br}


class PathologyWeb:
    """``with PathologyWeb() as site``: the catalogue served on 127.0.0.1 ... 127.0.0.N, one port,
    from a thread of this process. ``site.seed``: the home page; ``site.hits``: every request.

    ``drip_interval`` and ``drip_bytes`` size the drip, ``huge_bytes`` the huge page,
    ``endless_bytes`` where the endless body gives up, ``bomb_bytes`` what a bomb inflates to,
    ``log``: a file that gets every request as a JSON line (for a server in another process),
    ``leave_out``: families the home page does not link (to measure a crawl without them)."""

    def __init__(self, port: int = 0, *, drip_interval: float = 1.0, drip_bytes: int = 8,
                 huge_bytes: int = 64 << 20, endless_bytes: int = 1 << 30, bomb_bytes: int = 256 << 20,
                 log: Path | None = None, leave_out: Collection[str] = ()):
        unknown = set(leave_out) - set(BY_NAME)
        if unknown:
            raise ValueError(f"no such pathology: {', '.join(sorted(unknown))}")
        self.pathologies = [p for p in CATALOGUE if p.name not in leave_out]
        self.port, self.drip_interval, self.drip_bytes = port, drip_interval, drip_bytes
        self.huge_bytes, self.endless_bytes = huge_bytes, endless_bytes
        self.bombs = bombs(bomb_bytes)
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        self._log = open(log, "a", encoding="utf-8") if log else None  # closed by stop_serving
        self._families = {family_address(i): p for i, p in enumerate(CATALOGUE)}
        self._throttled: dict[str, float] = {}
        self._refusing = socket.socket()  # bound, never listening: a connection to it is refused
        self._refusing.bind((family_address(CATALOGUE.index(BY_NAME["refused"])), 0))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    # -- addresses --

    @property
    def seed(self) -> str:
        return f"http://{HOME}:{self.port}/"

    @property
    def addresses(self) -> list[str]:
        return [HOME, *self._families]

    def origin(self, name: str) -> str:
        """http://HOST:PORT of a family."""
        return f"http://{family_address(CATALOGUE.index(BY_NAME[name]))}:{self.port}"

    def entry(self, name: str) -> str:
        return self.origin(name) + BY_NAME[name].prefix

    # -- judging a crawl --

    def family_hits(self, name: str) -> list[Hit]:
        """The requests into a family (its prefix on its host), in order of arrival. Others to
        its host (robots.txt, a /favicon.ico Heritrix asks every host for) are not the family's."""
        prefix = BY_NAME[name].prefix
        with self._lock:
            hits = [hit for hit in self.hits if hit.family == name and hit.path.startswith(prefix)]
        return sorted(hits, key=lambda hit: hit.at)

    def robots_hits(self, name: str) -> int:
        with self._lock:
            return sum(1 for hit in self.hits if hit.family == name and hit.path == "/robots.txt")

    def judge(self, pathology: Pathology) -> list[str]:
        """What a crawl did wrong with ``pathology``, read from the request log (empty: it held)."""
        hits = self.family_hits(pathology.name)
        wrong = []
        for page in pathology.ordinary:
            fetched = sum(1 for hit in hits if hit.page == page)
            if fetched != 1:
                wrong.append(f"{page} fetched {fetched} times")
        if len(hits) > pathology.max_requests:
            wrong.append(f"{len(hits)} requests (at most {pathology.max_requests})")
        wrong += [f"{hit.page} fetched" for hit in hits if hit.page in pathology.never]
        if pathology.retry_after:
            throttled = [hit.at for hit in hits if hit.path == pathology.prefix + "page.html"]
            if len(throttled) < 2:
                wrong.append("the throttled page was not asked again")
            elif throttled[1] - throttled[0] < pathology.retry_after - 0.05:
                wrong.append(f"asked again after {throttled[1] - throttled[0]:.1f} s "
                             f"(Retry-After: {pathology.retry_after:g})")
        return wrong

    def ordinary_site(self) -> dict[str, int]:
        """The home host's ordinary pages -> requests of each."""
        with self._lock:
            counts = {f"/site/p{i}.html": 0 for i in range(ORDINARY_PAGES)} | {"/": 0}
            for hit in self.hits:
                if hit.host == HOME and hit.path in counts:
                    counts[hit.path] += 1
        return counts

    # -- serving --

    def _record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)
            if self._log:
                self._log.write(json.dumps(dataclasses.asdict(hit), ensure_ascii=False) + "\n")
                self._log.flush()

    @web.middleware
    async def _recorded(self, request: web.Request, handler):
        host = request.transport.get_extra_info("sockname")[0]
        pathology = self._families.get(host)
        hit = Hit(time.monotonic(), host, request.raw_path, request.headers.get("User-Agent", ""),
                  pathology.name if pathology else "")
        try:
            return await handler(request)
        finally:
            hit.page = request.get("page")
            self._record(hit)

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        host = request.transport.get_extra_info("sockname")[0]
        pathology = self._families.get(host)
        if pathology is None:
            return self._home(request)
        if request.path == "/robots.txt":
            return ROBOTS.get(pathology.name, _not_found)(self, request)
        if not request.path.startswith(pathology.prefix):
            return _not_found(self, request)
        rest = request.path[len(pathology.prefix):]
        return await FAMILIES[pathology.name](self, request, rest)

    def _home(self, request: web.Request) -> web.Response:
        if request.path == "/":
            request["page"] = "home"
            links = [self.entry(p.name) for p in self.pathologies] + ["/site/p0.html"]
            return _html(html("a web of pathologies", links))
        if request.path.startswith("/site/p") and request.path.endswith(".html"):
            n = request.path.removeprefix("/site/p").removesuffix(".html")
            if n.isdigit() and int(n) < ORDINARY_PAGES and str(int(n)) == n:
                i = int(n)
                request["page"] = f"p{i}.html"
                children = [f"p{c}.html" for c in (2 * i + 1, 2 * i + 2) if c < ORDINARY_PAGES]
                return _html(html(f"ordinary {i}", [*children, "/", "p0.html"]))
        return _not_found(self, request)

    def app(self) -> web.Application:
        application = web.Application(middlewares=[self._recorded])
        application.router.add_get("/{tail:.*}", self._answer)
        return application

    async def _bind(self) -> web.AppRunner | None:
        """Every address on one port (the first's, when ``self.port`` is 0)."""
        sockets, port = [], self.port
        try:
            for address in self.addresses:
                sockets.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                sockets[-1].setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sockets[-1].bind((address, port))
                port = sockets[-1].getsockname()[1]
        except OSError:
            for sock in sockets:
                sock.close()
            if self.port:
                raise
            return None
        self.port = port
        runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True)
        await runner.setup()
        for sock in sockets:
            await web.SockSite(runner, sock, backlog=1024).start()
        return runner

    async def start_serving(self) -> None:
        # A reset or a truncated body is the point of some families: aiohttp's error log of
        # them is noise.
        logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
        for _attempt in range(START_ATTEMPTS):
            self._runner = await self._bind()
            if self._runner is not None:
                return
        raise OSError("no port free on every address of the pathology web")

    async def stop_serving(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        self._refusing.close()
        if self._log:
            self._log.close()

    def __enter__(self) -> PathologyWeb:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self.start_serving())
        self._thread = threading.Thread(target=self._loop.run_forever, name="pathology-web", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self.stop_serving(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


# -- answers --

def _html(text: str, status: int = 200, headers=None) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8", headers=headers)


def _page(request: web.Request, name: str, title: str, links=(), head: str = "") -> web.Response:
    request["page"] = name
    return _html(html(title, links, head))


def _not_found(site: PathologyWeb, request: web.Request) -> web.Response:
    return web.Response(status=404, text="not here")


def _redirect(request: web.Request, location: str, status: int = 302, headers=None) -> web.Response:
    return web.Response(status=status, headers={"Location": location, **(headers or {})})


def _pages(pages: dict[str, list[str]]):
    """A family of fixed pages: name ('' is the entry) -> its links."""
    async def serve(site, request, rest):
        if rest not in pages:
            return _not_found(site, request)
        return _page(request, rest or "entry", rest or "entry", pages[rest])
    return serve


async def session_path(site, request, rest):
    name = rest.split(";", 1)[0]
    if name not in ("", "a.html", "b.html", "c.html"):
        return _not_found(site, request)
    links = [f"{page};jsessionid={_session()}" for page in ("a.html", "b.html", "c.html")]
    return _page(request, name or "entry", name or "entry", links)


async def session_query(site, request, rest):
    if rest not in ("", "a.html", "b.html", "c.html"):
        return _not_found(site, request)
    links = [f"a.html?PHPSESSID={_session().lower()}", f"b.html?sid={_session()}",
             f"c.html?lang=en&PHPSESSID={_session().lower()}"]
    return _page(request, rest or "entry", rest or "entry", links)


async def userinfo(site, request, rest):
    host = site.origin("userinfo").removeprefix("http://")
    pages = {"": [f"http://user:pw@{host}/userinfo/a.html", f"http://us%65r:p%40ss@{host}/userinfo/b.html"],
             "a.html": ["b.html", "c.html"], "b.html": ["a.html", "c.html"], "c.html": ["a.html"]}
    return await _pages(pages)(site, request, rest)


async def calendar(site, request, rest):
    if rest == "about.html":
        return _page(request, "about.html", "about")
    if rest == "":
        return _page(request, "entry", "calendar", ["month?m=0", "about.html"])
    if rest != "month":
        return _not_found(site, request)
    try:
        month = int(request.query.get("m", "0"))
    except ValueError:
        return _not_found(site, request)
    return _html(html(f"month {month}", [f"month?m={month - 1}", f"month?m={month + 1}", "about.html"]))


async def deepening_path(site, request, rest):
    if rest in ("", "end.html"):
        return _page(request, rest or "entry", "deepening", [] if rest else ["sub/page.html", "end.html"])
    if rest.endswith("page.html") and set(rest.removesuffix("page.html").split("/")) <= {"sub", ""}:
        return _html(html("deeper", ["sub/page.html"]))
    return _not_found(site, request)


async def many_segments(site, request, rest):
    if rest in ("", "end.html"):
        return _page(request, rest or "entry", "segments", [] if rest else ["s1/", "end.html"])
    segments = rest.rstrip("/").split("/")
    if rest.endswith("/") and segments == [f"s{i + 1}" for i in range(len(segments))]:
        return _html(html("segments", [f"s{len(segments) + 1}/"]))
    return _not_found(site, request)


async def long_url(site, request, rest):
    if len(str(request.url)) > MAX_URL:
        request["page"] = "too-long"
        return _html(html("too long"))
    if rest in ("", "end.html"):
        return _page(request, rest or "entry", "long", [] if rest else ["a.html", "end.html", "b" * 100_000 + ".html"])
    stem = rest.removesuffix(".html")
    if rest.endswith(".html") and stem and set(stem) == {"a"}:
        return _html(html("longer", ["a" * (2 * len(stem)) + ".html"]))
    return _not_found(site, request)


FACETS = {"color": ("red", "blue"), "size": ("s", "m"), "sort": ("asc", "desc")}


async def facets(site, request, rest):
    if rest != "":
        return _not_found(site, request)
    chosen = list(request.query.items())
    if any(key not in FACETS or value not in FACETS[key] for key, value in chosen) or \
            len({key for key, _ in chosen}) != len(chosen):
        return _not_found(site, request)
    if not chosen:
        request["page"] = "entry"
    query = "&".join(f"{key}={value}" for key, value in chosen)
    links = [f"?{query}&{key}={value}".replace("?&", "?") for key, values in FACETS.items()
             if key not in request.query for value in values]
    return _html(html("listing " + query, links))


async def soft_404(site, request, rest):
    if rest == "":
        return _page(request, "entry", "soft 404", ["real.html", "gone/"])
    if rest == "real.html":
        return _page(request, "real.html", "real")
    return _html(html("Page not found", ["text/js/"], text="Sorry, this page is not here."))


async def redirect_loop(site, request, rest):
    if rest == "":
        return _page(request, "entry", "loop", ["a"])
    if rest in ("a", "b"):
        return _redirect(request, {"a": "b", "b": "a"}[rest])
    return _not_found(site, request)


async def redirect_chain(site, request, rest):
    if rest == "":
        return _page(request, "entry", "chains", ["hop/0", "short/0"])
    if rest == "target.html":
        return _page(request, "target.html", "target")
    kind, _, number = rest.partition("/")
    if kind in ("hop", "short") and number.isdigit():
        n = int(number)
        return _redirect(request, "../target.html" if kind == "short" and n == 2 else f"{n + 1}")
    return _not_found(site, request)


def _refresh(target: str) -> str:
    return f'<meta http-equiv="refresh" content="0; url={target}">'


async def refresh_loop(site, request, rest):
    if rest == "":
        return _page(request, "entry", "refreshes", ["a.html", "chain/0.html", "go.html"])
    if rest == "target.html":
        return _page(request, "target.html", "target")
    targets = {"a.html": "b.html", "b.html": "a.html", "go.html": "target.html"}
    if rest in targets:
        return _html(html("refresh", head=_refresh(targets[rest])))
    number = rest.removeprefix("chain/").removesuffix(".html")
    if rest.startswith("chain/") and number.isdigit():
        return _html(html("refresh", head=_refresh(f"{int(number) + 1}.html")))
    return _not_found(site, request)


async def cookie_redirect(site, request, rest):
    if rest == "":
        return _page(request, "entry", "cookie", ["page.html"])
    if rest != "page.html":
        return _not_found(site, request)
    if request.cookies.get("visited") == "1":
        return _page(request, "page.html", "with the cookie")
    return _redirect(request, "page.html", headers={"Set-Cookie": "visited=1; Path=/"})


async def location_utf8(site, request, rest):
    if rest == "":
        return _page(request, "entry", "location", ["go"])
    if rest == "go":
        # aiohttp writes a header's text as UTF-8: the raw bytes scrapy #2321 met.
        return _redirect(request, "/location-utf8/café.html")
    if rest == "café.html":
        return _page(request, "café.html", "café")
    return _not_found(site, request)


async def base_href(site, request, rest):
    base = f'<base href="{site.origin("base-href")}/base-href/dir/">'
    if rest == "":
        return _page(request, "entry", "base", ["target.html"], head=base)
    if rest in ("dir/target.html", "target.html"):
        return _page(request, "target.html" if rest.startswith("dir/") else "wrong.html", rest)
    return _not_found(site, request)


def _charset_family(name: str, link: str, encode, content_type: str, head: str = ""):
    async def serve(site, request, rest):
        if rest == link:
            return _page(request, link, link)
        if rest != "":
            return _not_found(site, request)
        request["page"] = "entry"
        body = encode(html(name, [link], head=head))
        return web.Response(body=body, headers={"Content-Type": content_type})
    return serve


async def lying_type(site, request, rest):
    if rest == "":
        return _page(request, "entry", "lies", ["page.png", "octet.bin", "binary.html"])
    page = html("html as something else")
    answers = {"page.png": (page.encode(), "image/png"), "octet.bin": (page.encode(), "application/octet-stream"),
               "binary.html": (b"\x89PNG\r\n\x1a\n" + random.Random(7).randbytes(50_000), "text/html")}
    if rest not in answers:
        return _not_found(site, request)
    request["page"] = rest
    body, content_type = answers[rest]
    return web.Response(body=body, headers={"Content-Type": content_type})


async def _stream(request: web.Request, total: int, filler: bytes, head: bytes, *, known: bool) -> web.StreamResponse:
    """``head`` then ``filler`` over and over up to ``total`` bytes; its length announced when
    ``known``, else chunked (a body with no end in sight)."""
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    if known:
        response.content_length = total
    await response.prepare(request)
    await response.write(head)
    sent = len(head)
    try:
        while sent < total:
            chunk = filler[:total - sent]
            await response.write(chunk)
            sent += len(chunk)
    except ConnectionError:  # the client gave up: what a size cap does
        return response
    await response.write_eof()
    return response


async def huge_body(site, request, rest):
    if rest == "":
        return _page(request, "entry", "huge", ["huge.html", "endless.html"])
    filler = b"<p>" + b"huge " * 200_000 + b"</p>\n"
    if rest == "huge.html":
        request["page"] = rest
        return await _stream(request, site.huge_bytes, filler, b"<!DOCTYPE html><title>huge</title>", known=True)
    if rest == "endless.html":
        request["page"] = rest
        return await _stream(request, site.endless_bytes, filler, b"<!DOCTYPE html><title>endless</title>",
                             known=False)
    return _not_found(site, request)


def _bomb_family(encoding: str):
    async def serve(site, request, rest):
        if rest == "":
            return _page(request, "entry", "bomb", ["bomb.html"])
        if rest != "bomb.html":
            return _not_found(site, request)
        request["page"] = rest
        return web.Response(body=site.bombs[encoding],
                            headers={"Content-Type": "text/html", "Content-Encoding": encoding})
    return serve


async def drip(site, request, rest):
    if rest in ("", "after.html"):
        return _page(request, rest or "entry", "drip", [] if rest else ["drip.html", "after.html"])
    if rest != "drip.html":
        return _not_found(site, request)
    request["page"] = rest
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    response.content_length = site.drip_bytes
    await response.prepare(request)
    for _ in range(site.drip_bytes):
        await asyncio.sleep(site.drip_interval)
        await response.write(b" ")
    await response.write_eof()
    return response


def _broken_family(chunked: bool):
    async def serve(site, request, rest):
        if rest in ("", "after.html"):
            return _page(request, rest or "entry", "broken", [] if rest else ["broken.html", "after.html"])
        if rest != "broken.html":
            return _not_found(site, request)
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        if chunked:
            response.enable_chunked_encoding()
        else:
            response.content_length = 100_000
        await response.prepare(request)
        await response.write(b"<!DOCTYPE html><title>broken</title>" + b"x" * 5_000)
        await asyncio.sleep(0.05)  # the part sent reaches the client before the end
        if chunked:  # closed by a FIN where the last, empty chunk should be
            request.transport.close()
        else:  # reset: an RST (SO_LINGER 0), 95,000 bytes short of the Content-Length
            request.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            request.transport.abort()
        return response
    return serve


def _throttle_family(status: int, wait: float):
    async def serve(site, request, rest):
        if rest in ("", "after.html"):
            return _page(request, rest or "entry", "throttle", [] if rest else ["page.html"])
        if rest != "page.html":
            return _not_found(site, request)
        key = request.path
        first = site._throttled.setdefault(key, time.monotonic())
        if time.monotonic() - first < wait:
            return web.Response(status=status, text="slow down", headers={"Retry-After": f"{wait:g}"})
        return _page(request, "page.html", "now", ["after.html"])
    return serve


def _robots_family(private: bool):
    links = ["public.html", "private.html"] if private else ["page.html"]

    async def serve(site, request, rest):
        if rest == "rules.txt":
            request["page"] = "rules.txt"
            return web.Response(text=_rules(request.path.removesuffix("rules.txt")))
        if rest == "":
            return _page(request, "entry", "robots", links)
        if rest in links:
            return _page(request, rest, rest)
        return _not_found(site, request)
    return serve


def _unreachable_family(target):
    async def serve(site, request, rest):
        if rest in ("", "after.html"):
            return _page(request, rest or "entry", "unreachable", [] if rest else [target(site), "after.html"])
        return _not_found(site, request)
    return serve


def _rules(prefix: str) -> str:
    return f"User-agent: *\nDisallow: {prefix}private.html\n"


ROBOTS = {
    "robots-5xx": lambda site, request: web.Response(status=503, text="busy"),
    "robots-429": lambda site, request: web.Response(status=429, text="slow down", headers={"Retry-After": "1"}),
    "robots-4xx": lambda site, request: web.Response(status=403, text="forbidden"),
    "robots-redirect": lambda site, request: _redirect(request, "/robots-redirect/rules.txt", 301),
    "robots-garbage": lambda site, request: web.Response(
        body=random.Random(11).randbytes(4_000) + b"<html><body>not robots</body></html>",
        headers={"Content-Type": "text/plain"}),
    "robots-2mb": lambda site, request: web.Response(
        text=_rules("/robots-2mb/") + "# filler filler filler filler filler filler filler\n" * 40_000),
    "robots-bom": lambda site, request: web.Response(body=b"\xef\xbb\xbf" + _rules("/robots-bom/").encode(),
                                                     headers={"Content-Type": "text/plain"}),
}

FAMILIES = {
    "session-path": session_path,
    "session-query": session_query,
    "userinfo": userinfo,
    "calendar": calendar,
    "deepening-path": deepening_path,
    "many-segments": many_segments,
    "long-url": long_url,
    "facets": facets,
    "soft-404": soft_404,
    "redirect-loop": redirect_loop,
    "redirect-chain": redirect_chain,
    "refresh-loop": refresh_loop,
    "cookie-redirect": cookie_redirect,
    "location-utf8": location_utf8,
    "base-href": base_href,
    "charset-header": _charset_family("charset-header", "日本語.html", lambda t: t.encode("shift_jis"),
                                      "text/html; charset=shift_jis"),
    "charset-bom": _charset_family("charset-bom", "grüße.html", lambda t: b"\xef\xbb\xbf" + t.encode(),
                                   "text/html; charset=iso-8859-1"),
    "charset-meta": _charset_family("charset-meta", "страница.html", lambda t: t.encode("windows-1251"),
                                    "text/html", head='<meta charset="windows-1251">'),
    "lying-type": lying_type,
    "huge-body": huge_body,
    "gzip-bomb": _bomb_family("gzip"),
    "deflate-bomb": _bomb_family("deflate"),
    "brotli-bomb": _bomb_family("br"),
    "drip": drip,
    "reset": _broken_family(chunked=False),
    "truncated-chunked": _broken_family(chunked=True),
    "throttle-429": _throttle_family(429, 2.0),
    "unavailable-503": _throttle_family(503, 2.0),
    "robots-5xx": _robots_family(private=False),
    "robots-429": _robots_family(private=False),
    "robots-4xx": _robots_family(private=False),
    "robots-redirect": _robots_family(private=True),
    "robots-garbage": _robots_family(private=False),
    "robots-2mb": _robots_family(private=True),
    "robots-bom": _robots_family(private=True),
    "dns-fails": _unreachable_family(lambda site: f"http://{UNRESOLVABLE}:{site.port}/page.html"),
    "refused": _unreachable_family(lambda site: "http://{}:{}/page.html".format(*site._refusing.getsockname())),
}


async def _serve_until_stopped(site: PathologyWeb) -> None:
    await site.start_serving()
    print(f"{READY}{site.port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await site.stop_serving()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pycrawler.testing.pathologies",
                                     description="Serve the web of pathologies on 127.0.0.1 ... 127.0.0.N.")
    parser.add_argument("--port", type=int, default=0, help="the port on every address (default: a free one)")
    parser.add_argument("--log", type=Path, help="append every request to this file, one JSON object a line")
    parser.add_argument("--drip-interval", type=float, default=2.0, help="seconds between the drip's bytes")
    parser.add_argument("--drip-bytes", type=int, default=15, help="bytes the drip sends")
    args = parser.parse_args(argv)
    if not 0 <= args.port < 65536:
        print("error: --port must be in 0..65535", file=sys.stderr)
        return 2
    site = PathologyWeb(args.port, drip_interval=args.drip_interval, drip_bytes=args.drip_bytes, log=args.log)
    try:
        asyncio.run(_serve_until_stopped(site))
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
