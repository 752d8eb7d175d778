"""The fetcher against real HTTP servers on 127.0.0.1: keep-alive, gzip, redirects, failures, caps.

Every server is started here, on loopback, and stopped when its test ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import zlib

import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver
from aiohttp.test_utils import TestServer

from pycrawler.errors import BadInput
from pycrawler.fetch import FetchConfig, Fetcher, status
from pycrawler.parse.links import Hop, extend_hop_path, trailing_redirects
from pycrawler.records import CrawlUrl

CONTACT = "https://example.org/crawler-contact"
PAGE = b"<html><title>t</title>" + b"<p>hello</p>" * 1000
PEERS = web.AppKey("peers", list)


def config(**options) -> FetchConfig:
    return FetchConfig(contact_url=CONTACT, **{"connect_timeout": 2, "read_timeout": 2, "total_timeout": 5,
                                                **options})


def site() -> web.Application:
    """The loopback site: plain, gzip, deflate pages, redirects, a slow body, a big body."""
    app = web.Application()
    app[PEERS] = []

    async def plain(request):
        request.app[PEERS].append(request.transport.get_extra_info("peername"))
        return web.Response(body=PAGE, content_type="text/html")

    async def gzipped(request):
        return web.Response(body=gzip.compress(PAGE), headers={"Content-Type": "text/html",
                                                              "Content-Encoding": "gzip"})

    async def deflated(request):
        return web.Response(body=zlib.compress(PAGE), headers={"Content-Type": "text/html",
                                                              "Content-Encoding": "deflate"})

    async def bomb(request):  # 64 MB of zeros in a few KB of gzip
        return web.Response(body=gzip.compress(bytes(64 << 20)), headers={"Content-Encoding": "gzip"})

    async def moved(request):
        raise web.HTTPMovedPermanently(location="/target?x=1#frag")

    async def moved_to_js(request):
        raise web.HTTPFound(location="javascript:alert(1)")

    async def big(request):
        return web.Response(body=b"x" * (3 << 20), content_type="application/octet-stream")

    async def slow_body(request):
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        await response.write(b"<html>first part")
        await asyncio.sleep(10)
        return response

    async def echo_agent(request):
        return web.Response(text=request.headers.get("User-Agent", ""))

    for path, handler in (("/", plain), ("/page{n}", plain), ("/gzip", gzipped), ("/deflate", deflated),
                          ("/bomb", bomb), ("/moved", moved), ("/moved-js", moved_to_js), ("/big", big),
                          ("/slow-body", slow_body), ("/agent", echo_agent)):
        app.router.add_get(path, handler)
    return app


@contextlib.asynccontextmanager
async def serving(app: web.Application):
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


async def fetch_all(server: TestServer, paths: list[str], **options):
    async with Fetcher(config(**options)) as fetcher:
        return [await fetcher.fetch(str(server.make_url(p))) for p in paths]


def run(coroutine):
    return asyncio.run(coroutine)


def test_sequential_fetches_reuse_one_keep_alive_connection():
    async def scenario():
        app = site()
        async with serving(app) as server:
            results = await fetch_all(server, [f"/page{i}" for i in range(5)])
        return results, app[PEERS]

    results, peers = run(scenario())
    assert [r.status for r in results] == [200] * 5
    assert all(r.body == PAGE for r in results)
    assert len(peers) == 5 and len(set(peers)) == 1  # one client port: one connection for all five


def test_gzip_and_deflate_bodies_are_decoded_and_the_payload_kept_as_sent():
    async def scenario():
        async with serving(site()) as server:
            return await fetch_all(server, ["/gzip", "/deflate"])

    gzipped, deflated = run(scenario())
    assert gzipped.status == deflated.status == 200
    assert gzipped.body == deflated.body == PAGE
    assert gzip.decompress(gzipped.payload) == PAGE  # the WARC gets the bytes the server sent
    assert ("Accept-Encoding", "gzip, deflate") in gzipped.request_headers


def test_a_compression_bomb_stops_at_the_body_cap():
    async def scenario():
        async with serving(site()) as server:
            return (await fetch_all(server, ["/bomb"], max_body=1 << 20))[0]

    result = run(scenario())
    assert result.status == 200
    assert len(result.body) == 1 << 20
    assert "lenTrunc" in result.annotations


def test_redirect_is_recorded_not_followed_and_counts_as_a_redirect_hop():
    async def scenario():
        async with serving(site()) as server:
            results = await fetch_all(server, ["/moved", "/moved-js"])
            return results, str(server.make_url("/target?x=1"))

    (moved, moved_to_js), target = run(scenario())
    assert moved.status == 301
    assert moved.redirect == target  # absolute, fragment dropped
    assert moved.body != PAGE  # the target was not fetched
    hop_path = extend_hop_path("L", Hop.REDIRECT)  # a page found by a link, then redirected
    assert hop_path == "LR" and trailing_redirects(hop_path) == 1
    assert trailing_redirects(extend_hop_path(hop_path, Hop.REDIRECT)) == 2
    assert trailing_redirects("LRLR") == 1  # only redirects in a row count toward the limit
    assert moved_to_js.status == 302 and moved_to_js.redirect is None  # not a fetchable target


def test_body_cap_truncates_and_annotates_len_trunc():
    async def scenario():
        async with serving(site()) as server:
            return (await fetch_all(server, ["/big"], max_body=100_000))[0]

    result = run(scenario())
    assert result.status == 200
    assert len(result.payload) == len(result.body) == 100_000
    assert result.annotations == ["lenTrunc"]


def test_no_response_headers_before_the_read_timeout_is_status_minus_4():
    async def silent(reader, writer):  # accepts, reads the request, never answers
        await reader.read(1024)
        await asyncio.sleep(10)

    async def scenario():
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            async with Fetcher(config(read_timeout=0.3)) as fetcher:
                return await fetcher.fetch(f"http://127.0.0.1:{port}/")
        finally:
            server.close()

    result = run(scenario())
    assert result.status == status.TIMEOUT == -4
    assert "timeout" in result.error
    assert 250 <= result.duration_ms < 3000


def test_a_body_cut_by_the_total_timeout_keeps_its_status_and_is_annotated_time_trunc():
    async def scenario():
        async with serving(site()) as server:
            return (await fetch_all(server, ["/slow-body"], total_timeout=0.5, read_timeout=5))[0]

    result = run(scenario())
    assert result.status == 200
    assert result.body == b"<html>first part"
    assert result.annotations == ["timeTrunc"]


def test_a_dead_port_is_a_connect_failure_minus_2():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed at once: nothing listens there

    async def scenario():
        async with Fetcher(config()) as fetcher:
            return await fetcher.fetch(f"http://127.0.0.1:{port}/")

    result = run(scenario())
    assert result.status == status.CONNECT_FAILED == -2
    assert result.error.startswith("connect failed")


class LoopbackResolver(AbstractResolver):
    """Resolves ``*.test`` to 127.0.0.1 and fails everything else, counting lookups (no real DNS)."""

    def __init__(self):
        self.lookups = 0

    async def resolve(self, host, port=0, family=socket.AF_INET):
        self.lookups += 1
        if not host.endswith(".test"):
            raise OSError(socket.EAI_NONAME, f"{host} is not known")
        return [{"hostname": host, "host": "127.0.0.1", "port": port, "family": socket.AF_INET,
                 "proto": 0, "flags": socket.AI_NUMERICHOST}]

    async def close(self):
        pass


def test_an_unresolvable_host_is_minus_1_and_answers_are_cached():
    async def slow(request):
        await asyncio.sleep(0.2)  # so that concurrent requests need connections of their own
        return web.Response(text="ok")

    async def scenario():
        app = web.Application()
        app.router.add_get("/{n}", slow)
        async with serving(app) as server:
            resolver = LoopbackResolver()
            async with Fetcher(config(), resolver=resolver) as fetcher:
                ok = await asyncio.gather(*(fetcher.fetch(f"http://site.test:{server.port}/{i}") for i in range(4)))
                failed = await fetcher.fetch("http://no-such-host.invalid/")
            return ok, failed, resolver.lookups

    ok, failed, lookups = run(scenario())
    assert [r.status for r in ok] == [200] * 4
    assert all(r.ip == "127.0.0.1" for r in ok)
    assert failed.status == status.DOMAIN_UNRESOLVABLE == -1
    assert lookups == 2  # site.test once for four connections, then the failing name


def test_user_agent_names_the_contact_url_and_a_missing_contact_is_refused():
    async def scenario():
        async with serving(site()) as server:
            return (await fetch_all(server, ["/agent"]))[0]

    assert run(scenario()).body.decode() == f"pycrawler/{__import__('pycrawler').__version__} (+{CONTACT})"
    for contact in ("", "not a url", "mailto:ops@example.org"):
        with pytest.raises(BadInput):
            Fetcher(FetchConfig(contact_url=contact))


def test_fetch_result_is_recorded_on_the_crawl_url():
    async def scenario():
        async with serving(site()) as server:
            return (await fetch_all(server, ["/"]))[0]

    result = run(scenario())
    record = CrawlUrl(ori_url=result.url)
    result.record_on(record)
    assert record.status_code == 200
    assert record.file_size == len(PAGE)
    assert record.url == result.url  # the host already was the IP 127.0.0.1
    assert abs(record.last_update_time / 1e9 - result.started) < 1e-3


def test_an_unfetchable_url_is_minus_7_without_raising():
    async def scenario():
        async with Fetcher(config()) as fetcher:
            return await fetcher.fetch("http://[not-an-ip/")

    assert run(scenario()).status == status.UNFETCHABLE_URI


def test_aiohttp_timeouts_are_what_the_fetcher_classifies():
    # the mapping to -2/-4 relies on these being TimeoutErrors; fail loudly if aiohttp changes it
    assert issubclass(aiohttp.ConnectionTimeoutError, TimeoutError)
    assert issubclass(aiohttp.SocketTimeoutError, TimeoutError)


def test_retry_after_is_seconds_or_an_http_date_counted_from_the_fetch_and_waited_for():
    """RFC 9110 10.2.3: ``Retry-After: 120`` or an HTTP-date; the queue waits the longer of its
    backoff and the server's word, which is honoured up to what a Crawl-delay would be."""
    import email.utils

    from pycrawler.fetch.result import FetchResult
    from pycrawler.frontier.politeness import Politeness

    started = 1_700_000_000.0
    def asked(value):
        return FetchResult("http://127.0.0.1/", 503, headers=[("Retry-After", value)], started=started).retry_after()

    assert asked("120") == 120.0
    assert asked(email.utils.formatdate(started + 30, usegmt=True)) == 30.0
    assert asked(email.utils.formatdate(started - 30, usegmt=True)) == 0.0   # a date past: now
    assert asked("soon") is None and asked("-5") is None
    assert FetchResult("http://127.0.0.1/", 429).retry_after() is None
    none = Politeness.none()
    assert none.backoff(1) == 0.0 and none.backoff(1, 2.0) == 2.0 and none.backoff(1, 86_400.0) == 300.0
    assert Politeness().backoff(1, 5.0) == 30.0   # its own backoff is longer
