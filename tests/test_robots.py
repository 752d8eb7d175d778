"""robots.txt: rules obeyed (wildcards, precedence, crawl-delay), fetched once per host, cached,
and the Heritrix outcomes for missing, failing and unreachable robots.txt.

Servers run on 127.0.0.1, started here.
"""

from __future__ import annotations

import asyncio
import socket

from aiohttp import web
from aiohttp.test_utils import TestServer

from pycrawler.fetch import ALLOWED, FetchConfig, Fetcher, RobotsCache, RobotsPolicy, host_key, status

ROBOTS = """\
User-agent: otherbot
Disallow: /

User-agent: *
Disallow: /private/
Allow: /private/open/
Disallow: /*.pdf$
Disallow: /search?
Crawl-delay: 2.5
"""
HITS = web.AppKey("hits", dict)


def robots_site(status_code: int = 200, redirect: bool = False) -> web.Application:
    app = web.Application()
    app[HITS] = {"robots": 0}

    async def robots(request):
        request.app[HITS]["robots"] += 1
        if status_code != 200:
            return web.Response(status=status_code, text="no")
        return web.Response(text=ROBOTS)

    async def moved(request):
        raise web.HTTPMovedPermanently(location="/real-robots.txt")

    app.router.add_get("/robots.txt", moved if redirect else robots)
    app.router.add_get("/real-robots.txt", robots)
    return app


async def verdicts(app: web.Application, paths: list[str], **options):
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        async with Fetcher(FetchConfig(contact_url="https://example.org/contact", read_timeout=2)) as fetcher:
            cache = RobotsCache(fetcher, "pycrawler", **options)
            results = await asyncio.gather(*(cache.verdict(str(server.make_url(p))) for p in paths))
            return results, cache, str(server.make_url("/"))
    finally:
        await server.close()


def test_wildcards_and_allow_disallow_precedence():
    paths = ["/", "/private/x", "/private/open/x", "/doc.pdf", "/doc.pdf?x", "/search?q=1", "/search"]
    results, _, _ = asyncio.run(verdicts(robots_site(), paths))
    assert dict(zip(paths, results)) == {
        "/": ALLOWED,
        "/private/x": status.ROBOTS_PRECLUDED,
        "/private/open/x": ALLOWED,          # the longer Allow wins over the shorter Disallow
        "/doc.pdf": status.ROBOTS_PRECLUDED,  # '*' and '$' wildcards
        "/doc.pdf?x": ALLOWED,               # '$' anchors: the query makes it not end in .pdf
        "/search?q=1": status.ROBOTS_PRECLUDED,
        "/search": ALLOWED,
    }


def test_crawl_delay_is_exposed_for_the_politeness_delay():
    app = robots_site()
    _, cache, base = asyncio.run(verdicts(app, ["/"]))
    assert cache.crawl_delay(base + "anything") == 2.5
    assert cache.crawl_delay("http://never-fetched.example/") is None


def test_robots_txt_is_fetched_once_per_host_even_for_concurrent_checks():
    app = robots_site()
    results, cache, _ = asyncio.run(verdicts(app, [f"/page{i}" for i in range(20)]))
    assert results == [ALLOWED] * 20
    assert app[HITS]["robots"] == 1 and cache.fetches == 1


def test_expired_entries_are_fetched_again():
    now = [1000.0]
    app = robots_site()

    async def scenario():
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        try:
            async with Fetcher(FetchConfig(contact_url="https://example.org/contact")) as fetcher:
                cache = RobotsCache(fetcher, ttl=60, clock=lambda: now[0])
                url = str(server.make_url("/x"))
                await cache.verdict(url)
                now[0] += 59
                await cache.verdict(url)  # still fresh
                now[0] += 2
                await cache.verdict(url)  # expired: fetched again
        finally:
            await server.close()

    asyncio.run(scenario())
    assert app[HITS]["robots"] == 2


def test_404_robots_allows_everything():
    results, _, _ = asyncio.run(verdicts(robots_site(status_code=404), ["/private/x"]))
    assert results == [ALLOWED]


def test_5xx_robots_allows_everything_as_heritrix_does():
    # Heritrix 3 treats every non-2xx answer, 5xx included, as "no robots.txt" (RFC 9309 would disallow)
    results, cache, base = asyncio.run(verdicts(robots_site(status_code=503), ["/private/x"]))
    assert results == [ALLOWED]
    assert cache._policies[host_key(base)].status == 503
    assert cache.standings == {"absent": 1}


def test_redirected_robots_txt_is_followed():
    results, cache, _ = asyncio.run(verdicts(robots_site(redirect=True), ["/private/x", "/ok"]))
    assert results == [status.ROBOTS_PRECLUDED, ALLOWED]
    assert cache.fetches == 2  # the 301, then its target


def test_unreachable_robots_is_a_prerequisite_failure_retried_after_the_delay():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here
    now = [0.0]

    async def scenario():
        async with Fetcher(FetchConfig(contact_url="https://example.org/contact")) as fetcher:
            cache = RobotsCache(fetcher, retry_delay=30, clock=lambda: now[0])
            url = f"http://127.0.0.1:{port}/page"
            first = await cache.verdict(url)
            again = await cache.verdict(url)       # within the retry delay: no new fetch
            now[0] += 31
            later = await cache.verdict(url)       # retried
            return first, again, later, cache.fetches, cache._policies[host_key(url)].attempts, cache.standings

    first, again, later, fetches, attempts, standings = asyncio.run(scenario())
    assert first == again == later == status.ROBOTS_PREREQUISITE_FAILURE == -61
    assert fetches == 2 and attempts == 2
    assert standings == {"error": 1}  # the retry's outcome replaced the first one's


def test_a_hosts_standing_says_what_its_robots_txt_does_to_the_whole_host():
    """What the console's hosts report shows (RobotsPolicy.standing)."""
    host = "http://example.com"
    assert RobotsPolicy(host, 200, 0.0, ROBOTS.encode()).standing("pycrawler") == "fetched"
    assert RobotsPolicy(host, 200, 0.0, ROBOTS.encode()).standing("otherbot") == "disallows_root"
    assert RobotsPolicy(host, 404, 0.0).standing("pycrawler") == "absent"
    assert RobotsPolicy(host, status.CONNECT_FAILED, 0.0).standing("pycrawler") == "error"


def test_obey_false_fetches_nothing_and_allows_all():
    app = robots_site()
    results, _, _ = asyncio.run(verdicts(app, ["/private/x"], obey=False))
    assert results == [ALLOWED] and app[HITS]["robots"] == 0


def test_policies_persist_in_a_je_database_across_caches(env):
    db = env.open_database("robots", create=True)

    async def twice():
        app = robots_site()
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        url = str(server.make_url("/private/x"))
        try:
            async with Fetcher(FetchConfig(contact_url="https://example.org/contact")) as fetcher:
                await RobotsCache(fetcher, store=db).verdict(url)
                second = RobotsCache(fetcher, store=db)  # a new cache (a restarted crawl), same store
                return await second.verdict(url), second.fetches, app[HITS]["robots"]
        finally:
            await server.close()

    verdict, fetches, hits = asyncio.run(twice())
    assert verdict == status.ROBOTS_PRECLUDED
    assert hits == 1 and fetches == 0
    db.close()


def test_host_key_separates_schemes_and_ports_and_drops_default_ports():
    assert host_key("http://Example.COM:80/a") == "http://example.com"
    assert host_key("https://example.com:443/") == "https://example.com"
    assert host_key("http://example.com:8080/") == "http://example.com:8080"
    assert host_key("http://[::1]:81/") == "http://[::1]:81"
