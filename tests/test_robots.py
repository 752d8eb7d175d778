"""robots.txt: rules obeyed (wildcards, precedence, crawl-delay), fetched once per host, cached;
what each answer means as RFC 9309 reads it (and as Heritrix does, behind ``--robots
heritrix``); a crawl whose robots.txt answers 503 waits for it, and ends when it never
recovers; and the rules decide as Google's own parser does, on generated files and URLs.

Servers run on 127.0.0.1, started here.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver
from aiohttp.test_utils import TestServer
from conftest import missing
from crawl_sites import CountingServer, answer, fetched_records, page, run_crawl

from pycrawler.fetch import ALLOWED, FetchConfig, Fetcher, RobotsCache, RobotsPolicy, host_key, status
from pycrawler.fetch.robots_rules import parse

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


UNREACHABLE, ALLOW_ALL, RULES = status.ROBOTS_PREREQUISITE_FAILURE, ALLOWED, status.ROBOTS_PRECLUDED
"""What a URL robots.txt's rules exclude gets: -61 (the host is disallowed for now: the URL
waits), 0 (no robots.txt: everything allowed), -9998 (the rules apply)."""


def answering(kind: str) -> web.Application:
    """A site whose robots.txt answers ``kind``: an HTTP status, ``redirects:N`` (a chain of N
    redirects to the rules) or ``reset`` (the connection dropped before any answer)."""
    app = web.Application()

    async def robots(request):
        if kind == "reset":
            request.transport.abort()
            return web.Response()
        if kind.startswith("redirects:"):
            hop = int(request.query.get("hop", 0))
            if hop < int(kind.partition(":")[2]):
                raise web.HTTPFound(location=f"/robots.txt?hop={hop + 1}")
            return web.Response(text=ROBOTS)
        code = int(kind)
        return web.Response(text=ROBOTS) if 200 <= code < 300 else web.Response(status=code, text="no")

    app.router.add_get("/robots.txt", robots)
    return app


@pytest.mark.parametrize(("kind", "rfc9309", "heritrix"), [
    ("200", RULES, RULES),
    ("203", RULES, RULES),
    ("redirects:5", RULES, RULES),           # five hops are followed (RFC 9309 2.3.1.2)
    ("redirects:6", ALLOW_ALL, ALLOW_ALL),   # a sixth is not: no robots.txt
    ("400", ALLOW_ALL, ALLOW_ALL),
    ("401", ALLOW_ALL, ALLOW_ALL),           # "unavailable", 4xx, even when access is refused
    ("403", ALLOW_ALL, ALLOW_ALL),
    ("404", ALLOW_ALL, ALLOW_ALL),
    ("410", ALLOW_ALL, ALLOW_ALL),
    ("429", UNREACHABLE, ALLOW_ALL),         # too many requests: RFC 9309 counts it as unreachable
    ("500", UNREACHABLE, ALLOW_ALL),
    ("503", UNREACHABLE, ALLOW_ALL),
    ("599", UNREACHABLE, ALLOW_ALL),
    ("reset", UNREACHABLE, UNREACHABLE),     # no answer at all: nothing to read either way
])
def test_what_each_robots_answer_means_as_rfc9309_and_as_heritrix_read_it(kind, rfc9309, heritrix):
    for reading, expected in (("rfc9309", rfc9309), ("heritrix", heritrix)):
        results, cache, base = asyncio.run(verdicts(answering(kind), ["/private/x"], reading=reading))
        assert results == [expected], reading
        assert cache.standings == {{UNREACHABLE: "error", ALLOW_ALL: "absent", RULES: "fetched"}[expected]: 1}


def test_the_backoff_stays_at_its_cap_however_many_times_robots_txt_failed():
    """A host given up is asked again at each of its URLs' tries (each failure counted): a
    big site must not overflow the doubling."""
    policy = RobotsPolicy("http://example.com", 503, 0.0, attempts=5000)
    assert not policy.expired(899.0, ttl=86400, retry_delay=30, max_retry_delay=900)
    assert policy.expired(900.0, ttl=86400, retry_delay=30, max_retry_delay=900)
    assert policy.expired(0.0, ttl=86400, retry_delay=0, max_retry_delay=0)


class NoNames(AbstractResolver):
    """A resolver that knows no name (no real DNS is asked)."""

    async def resolve(self, host, port=0, family=socket.AF_INET):
        raise OSError(socket.EAI_NONAME, f"{host} is not known")

    async def close(self):
        pass


def test_a_refused_connection_an_unresolvable_host_and_a_timeout_are_unreachable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here
    app = web.Application()

    async def silent(request):
        await asyncio.sleep(3)
        return web.Response(text=ROBOTS)

    app.router.add_get("/robots.txt", silent)

    async def scenario():
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        try:
            config = FetchConfig(contact_url="https://example.org/contact", connect_timeout=2, read_timeout=0.3)
            async with Fetcher(config, resolver=NoNames()) as fetcher:
                cache = RobotsCache(fetcher)
                urls = [f"http://127.0.0.1:{port}/a", "http://no-such-host.test/a", str(server.make_url("/a"))]
                verdicts = [await cache.verdict(url) for url in urls]
                return verdicts, [cache.known(host_key(url)).status for url in urls]
        finally:
            await server.close()

    verdicts, statuses = asyncio.run(scenario())
    assert verdicts == [UNREACHABLE] * 3
    assert statuses == [status.CONNECT_FAILED, status.DOMAIN_UNRESOLVABLE, status.TIMEOUT]


def test_a_failing_robots_txt_is_retried_with_a_doubling_backoff_until_it_gives_up():
    """Retried after 10, 20, 40 s (the cap): the host gives up after 4 failures in a row, and a
    success later opens it again."""
    now, answers = [0.0], iter([503, 503, 503, 503, 200])
    app = web.Application()

    async def robots(request):
        code = next(answers)
        return web.Response(text=ROBOTS) if code == 200 else web.Response(status=code)

    app.router.add_get("/robots.txt", robots)

    async def scenario():
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        try:
            async with Fetcher(FetchConfig(contact_url="https://example.org/contact")) as fetcher:
                cache = RobotsCache(fetcher, retry_delay=10, max_retry_delay=40, max_failures=4,
                                    clock=lambda: now[0])
                url = str(server.make_url("/private/x"))
                seen = []
                for wait in (0, 9.9, 0.1, 19.9, 0.1, 39.9, 0.1, 39.9, 0.1):
                    now[0] += wait
                    seen.append((await cache.verdict(url), cache.fetches, cache.gave_up(url)))
                return seen
        finally:
            await server.close()

    assert asyncio.run(scenario()) == [
        (UNREACHABLE, 1, False), (UNREACHABLE, 1, False),  # within the first 10 s: not asked again
        (UNREACHABLE, 2, False), (UNREACHABLE, 2, False),  # then 20 s
        (UNREACHABLE, 3, False), (UNREACHABLE, 3, False),  # then 40 s
        (UNREACHABLE, 4, True), (UNREACHABLE, 4, True),    # the 4th failure: its URLs are finished
        (RULES, 5, False),                                 # 40 s (the cap) later it answers: rules
    ]


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


def test_reading_ignore_fetches_nothing_and_allows_all():
    app = robots_site()
    results, _, _ = asyncio.run(verdicts(app, ["/private/x"], reading="ignore"))
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


def test_only_the_first_500_kib_of_robots_txt_are_read():
    filler = "# " + "x" * 1022 + "\n"  # 1 KiB a line
    body = "User-agent: *\nDisallow: /early\n" + filler * 510 + "Disallow: /late\n"
    app = web.Application()

    async def robots(request):
        return web.Response(text=body)

    app.router.add_get("/robots.txt", robots)
    results, cache, base = asyncio.run(verdicts(app, ["/early", "/late"]))
    assert results == [RULES, ALLOW_ALL]
    assert len(cache.known(host_key(base)).body) == 500 * 1024


def test_sitemap_lines_are_exposed_on_the_policy_whatever_group_they_sit_in():
    body = b"Sitemap: http://example.com/a.xml\nUser-agent: other\nDisallow: /\nsitemap: http://example.com/b.xml.gz\n"
    assert RobotsPolicy("http://example.com", 200, 0.0, body).sitemaps == (
        "http://example.com/a.xml", "http://example.com/b.xml.gz")
    assert RobotsPolicy("http://example.com", 404, 0.0, body).sitemaps == ()


@pytest.mark.parametrize(("robots", "path", "allowed"), [
    ("User-agent: pycrawl\nDisallow: /", "/x", True),                # another product token, not a prefix of ours
    ("User-agent: pycrawlerbot\nDisallow: /", "/x", True),
    ("User-agent: pycrawler/1.0\nDisallow: /", "/x", False),         # the token ends at the '/'
    ("User-agent: PyCrawler\nDisallow: /", "/x", False),             # case-insensitive
    ("User-agent: *\nDisallow: /\n\nUser-agent: pycrawler\nAllow: /a", "/x", True),  # ours alone, '*' ignored
    ("User-agent: pycrawler\nDisallow: /a\n\nUser-agent: pycrawler\nDisallow: /b", "/b", False),  # merged
    ("User-agent: *\nDisallow: /*/b", "/a%2Fb", False),              # escapes are compared decoded
    ("User-agent: *\nDisallow: /%7Ea", "/~a", False),
    ("User-agent: *\nDisallow: /caf\u00e9", "/caf%C3%A9", False),     # the pattern's UTF-8, escaped
    ("User-agent: *\nAllow: /d/index.html\nDisallow: /d/", "/d/", True),  # index.html stands for its folder
    ("User-agent: *\nDisallow: /a$", "/a?", False),                  # a lone '?' is no query: /a? is /a
    ("Disallow: /\nUser-agent: *\nAllow: /", "/x", True),            # a rule before any group counts for none
])
def test_rules_read_as_rfc9309s_reference_reads_them(robots, path, allowed):
    assert parse(robots.encode(), "pycrawler").allows("http://example.com" + path) is allowed


# The differential test: generated robots.txt files and URLs, decided by Google's own parser
# (fast-robotstxt, the library behind RFC 9309) and by pycrawler. The pieces are those where
# parsers differ: user-agent spellings (prefixes, versions, case, '*' variants), key typos
# and separators, line ends, wildcards and '$', escapes of every kind (reserved, unreserved,
# lower-case, invalid, multi-byte), index.html, comments, NULs, and URLs with the same bytes
# raw and escaped. URLs are as the crawler asks about them: absolute, no dot segments.
AGENTS = ["*", "* foo", "*foo", "*\tx", "pycrawler", "PyCrawler", "pycrawler/1.0", "pycrawl", "pycrawlerbot",
          "pycrawler-x", "pycrawler_1", "pycrawler bot", "pycrawler\t2", "\tpycrawler", "PYCRAWLER*", "otherbot", ""]
AGENT_KEYS = ["User-agent", "user-agent", "USER-AGENT", "useragent", "User agent", "User-Agents"]
ALLOW_KEYS = ["Allow", "allow", "ALLOW", "Allowed"]
DISALLOW_KEYS = ["Disallow", "disallow", "Dissallow", "disalow", "DISALLOW", "Disallowed"]
OTHER_LINES = ["Crawl-delay: 1", "crawl-delay: 2.5s", "Crawl delay: x", "crawldelay -3", "Crawl-delay: 1e1",
               "Sitemap: http://example.com/s.xml", "# comment", "", "Host: x", "foo: bar"]
PATTERN_PIECES = ["/", "a", "b", "c", "*", "$", "%2F", "%2f", "%41", "A", "?", "=", ";", ".html", "index.html",
                  "\u00e9", "\u30c4", "%E3%83%84", "&", "-", "%", "%zz", "q=1", "2F", "41", "\\", "\x00", "\t"]
URL_PIECES = ["/", "a", "b", "c", "%2F", "%2f", "%41", "A", "?", "=", ";", ".html", "index.html", "\u00e9",
              "\u30c4", "%E3%83%84", "&", "-", "$", "*", "#f", "q=1", "%", "2F", "41", " ", '"', "#"]


def generated_cases(seed: int, n: int):
    rng = random.Random(seed)

    def pattern():
        text = "".join(rng.choice(PATTERN_PIECES) for _ in range(rng.randint(0, 5)))
        return text if text.startswith("/") or rng.random() < 0.1 else "/" + text

    for _ in range(n):
        lines = []
        for _ in range(rng.randint(1, 4)):
            for _ in range(rng.randint(1, 2)):
                lines.append(rng.choice(AGENT_KEYS) + rng.choice([": ", ":", " ", " : "]) + rng.choice(AGENTS))
            for _ in range(rng.randint(0, 4)):
                if rng.random() < 0.15:
                    lines.append(rng.choice(OTHER_LINES))
                    continue
                key = rng.choice(ALLOW_KEYS if rng.random() < 0.4 else DISALLOW_KEYS)
                lines.append(key + rng.choice([": ", ":", " "]) + pattern() + rng.choice(["", " # c"]))
        url = "http://example.com/" + "".join(rng.choice(URL_PIECES) for _ in range(rng.randint(0, 6)))
        yield rng.choice(["\n", "\r\n", "\r"]).join(lines), url


def test_decisions_and_crawl_delays_equal_googles_parser_on_generated_robots_txt_and_urls():
    try:
        from robotstxt import RobotsMatcher
    except ImportError:
        missing("fast-robotstxt (Google's robots.txt parser, the test extra) is not installed")
    google = RobotsMatcher()
    differ = []
    for robots, url in generated_cases(seed=9309, n=3000):
        rules = parse(robots.encode(), "pycrawler")
        ours = rules.allows(url), rules.crawl_delay
        if ours != (google.is_allowed(robots, "pycrawler", url), google.crawl_delay):
            differ.append((robots, url))
    assert differ == []


def site_whose_robots_txt_answers(root, codes):
    """A three-page site (``index.html`` links to ``a.html`` and ``secret/b.html``) whose
    robots.txt answers the statuses ``codes`` yields, then disallows ``/secret/``; returns the
    server and the pages fetched while each robots.txt answer was given."""
    root.mkdir()
    (root / "index.html").write_text(page("index", ["a.html", "secret/b.html"]))
    (root / "a.html").write_text(page("a", []))
    (root / "secret").mkdir()
    (root / "secret" / "b.html").write_text(page("b", []))
    pages_before = []

    def robots(handler):
        pages_before.append(sum(server.page_counts().values()))
        code = next(codes, 200)
        answer(handler, code, b"User-agent: *\nDisallow: /secret/\n" if code == 200 else b"busy", "text/plain")

    server = CountingServer(root, {"/robots.txt": robots})
    return server, pages_before


def robots_lines(state, code: int) -> list[str]:
    return [line for line in (state / "crawl.log").read_text().splitlines() if line.split()[1] == str(code)]


def test_a_crawl_waits_while_robots_txt_answers_503_and_obeys_it_once_it_answers(tmp_path):
    server, pages_before = site_whose_robots_txt_answers(tmp_path / "site", iter([503, 503]))
    with server as base:
        done = run_crawl(base + "index.html", tmp_path / "state", "--delay", "0")
    assert done.returncode == 0, done.stderr
    assert server.counts["/robots.txt"] == 3 and pages_before == [0, 0, 0]  # nothing fetched before the 200
    assert server.page_counts() == {"index.html": 1, "a.html": 1}            # then the rules are obeyed
    records = fetched_records(tmp_path / "state")
    assert records[base + "index.html"].status_code == 200
    assert records[base + "secret/b.html"].status_code == status.ROBOTS_PRECLUDED
    assert len(robots_lines(tmp_path / "state", -61)) == 2                     # the seed waited twice


def test_a_crawl_whose_robots_txt_answers_503_forever_ends_with_its_urls_unfetched(tmp_path):
    """The seed waits as many tries as a page answering 503 gets (4: the first and 3 retries),
    one robots.txt fetch each, then it is finished with -61 and the crawl ends."""
    server, pages_before = site_whose_robots_txt_answers(tmp_path / "site", iter(lambda: 503, None))
    with server as base:
        started = time.monotonic()
        done = run_crawl(base + "index.html", tmp_path / "state", "--delay", "0", timeout=60)
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert server.page_counts() == {} and server.counts["/robots.txt"] == 4
    assert fetched_records(tmp_path / "state")[base + "index.html"].status_code == status.ROBOTS_PREREQUISITE_FAILURE
    assert len(robots_lines(tmp_path / "state", -61)) == 4
    assert took < 30


def test_robots_heritrix_reads_a_503_as_no_robots_txt_as_heritrix_does(tmp_path):
    server, _ = site_whose_robots_txt_answers(tmp_path / "site", iter(lambda: 503, None))
    with server as base:
        done = run_crawl(base + "index.html", tmp_path / "state", "--delay", "0", "--robots", "heritrix")
    assert done.returncode == 0, done.stderr
    assert server.counts["/robots.txt"] == 1
    assert server.page_counts() == {"index.html": 1, "a.html": 1, "secret/b.html": 1}
