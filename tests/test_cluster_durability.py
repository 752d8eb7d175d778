"""What a cluster crawl keeps across faults and across workers: links found while Redis is away
survive a kill -9, and a link handed to another worker keeps its depth and its via.

Real workers (``pycrawler crawl --redis --cluster`` subprocesses), a real redis-server (append-only
file on) and a real multi-host site on loopback, as in tests/test_cluster.py, whose helpers these
tests use. The site's link graph is laid out here for each test, once the workers' ids and the
site's port (part of a host's name) say which worker owns which host.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from test_cluster import (
    CONCURRENCY,
    DELAY,
    LEASE,
    ROOT,
    SETTLE,
    agent,
    finish,
    planned_owners,
    start_worker,
    wait_for_fetches,
)

from pycrawler.cluster.central.frames import Flag, Frame, decode, encode
from pycrawler.cluster.protocol import Link, decode_links, encode_links
from pycrawler.crawl.forwarded import Forwarded
from pycrawler.crawl.outbox import Outbox
from pycrawler.store import Environment
from pycrawler.testing.multihost import MultiHostSite

HOSTS = 6
MODES = ["split", "central"]  # --dedupe: host splitting, seed 003's protocol


def test_link_lines_carry_depth_hops_and_via_and_url_only_lines_still_read():
    page = "http://a.example/p.html"
    links = [Link("http://b.example/1", 3, "LLE", page), Link("http://b.example/2", 3, "LLL", page),
             Link("http://c.example/", 0, "", None), Link("http://b.example/3", 2, "LR", "http://a.example/")]
    text = encode_links(links)
    assert decode_links(text) == links
    assert text.count(page) == 1  # a page's links name it once
    assert decode_links("http://b.example/1\nhttp://b.example/2") == [Link("http://b.example/1", 1, "L", None),
                                                                     Link("http://b.example/2", 1, "L", None)]
    frame = Frame({links[0].url: 0}, "w0", 7, Flag.DEDUPE, {links[0].url: "3\tLLE\t" + page})
    assert decode(encode(frame)) == frame
    assert decode(encode(frame._replace(found=None))).found is None  # requests and answers leave it out


def test_the_outbox_keeps_unsent_links_until_a_flush_gets_through(tmp_path):
    first, second = [Link("http://b.example/1", 2, "LL", "http://a.example/")], [Link("http://c.example/")]
    with Environment(tmp_path / "state", create=True) as env:
        outbox = Outbox(env)
        for unsent in (first, [], second):  # a failed flush with nothing new writes nothing
            with env.begin() as txn:
                outbox.update(unsent, txn)
    with Environment(tmp_path / "state") as env:
        outbox = Outbox(env)
        assert len(outbox) == 2 and outbox.links() == first + second
        with env.begin() as txn:
            outbox.update(None, txn)
        assert len(outbox) == 0 and outbox.links() == []


def test_the_forwarded_set_survives_a_reopen_and_gives_a_url_back_once_at_its_shallowest_link(tmp_path):
    """A URL this worker forwarded comes back (the worker it went to died before committing it),
    possibly in several links at once, possibly after this worker restarted: the crawl schedules
    what `came_back` returns past its seen table, so a URL returned twice would be fetched twice."""
    url = "http://b.example/forwarded"
    with Environment(tmp_path / "state", create=True) as env:
        forwarded = Forwarded(env)
        assert forwarded.came_back([Link(url)]) == []
        with env.begin() as txn:
            forwarded.mark([url], txn)
    came_back = [Link(url, 6, "LLLLLL", "http://a.example/b"), Link(url, 4, "LLLL", "http://a.example/c"),
                 Link("http://b.example/never-forwarded")]
    with Environment(tmp_path / "state") as env:
        forwarded = Forwarded(env)
        back = forwarded.came_back(came_back)
        assert back == [came_back[1]]
        forwarded.forget(back)
        assert forwarded.came_back(came_back) == []  # once: later links to it meet the seen table


def worker_ids(redis_url: str, site: MultiHostSite, *, one_first: bool = False) -> tuple[list[str], dict[int, str]]:
    """Two worker ids and the owner of each host when both see the seeds (``one_first``: when
    the first sees them alone and the second joins); the host table shares the six hosts."""
    ids = ["w0", "w1"]
    owned = planned_owners(redis_url, site, *([ids[:1], ids] if one_first else [ids]))
    assert set(owned.values()) == set(ids)
    return ids, owned


@pytest.mark.parametrize("dedupe", MODES)
def test_links_found_while_redis_is_down_survive_a_kill_9(local_redis, tmp_path, dedupe):
    """Each host's root links to pages of its own, and each of those to a page of a host the
    other worker owns, which nothing else links to. The victim fetches pages of its own while
    Redis is down, is killed -9, and restarts once Redis is back: the pages only their links
    reach are fetched all the same."""
    with MultiHostSite(hosts=HOSTS, pages=1) as site:
        ids, owned = worker_ids(local_redis.url, site)
        victim = ids[1]
        other = {h: next(t for t in range(HOSTS) if owned[t] != owned[h]) for h in range(HOSTS)}
        pages = 24  # a backlog on every host: the victim still has pages of its own when Redis stops
        graph = {}
        for h in range(HOSTS):
            graph[(h, "/")] = [(h, f"/c{i}.html") for i in range(pages)]
            for i in range(pages):
                graph[(h, f"/c{i}.html")] = [(other[h], f"/x{h}-{i}.html")]
                graph[(other[h], f"/x{h}-{i}.html")] = []
        site.graph = graph
        options = ("--dedupe", dedupe)
        workers = {w: start_worker(site, tmp_path / w, local_redis.url, "c", "--worker", w, *options) for w in ids}
        wait_for_fetches(site, 0.15)
        local_redis.stop()
        down_at = time.monotonic()
        victim_hosts = {h for h, w in owned.items() if w == victim}

        def fetched_in_outage() -> int:
            return sum(1 for h, path, at, _ in list(site.requests) if h in victim_hosts and path.startswith("/c")
                       and at > down_at)

        deadline = time.monotonic() + 60
        while fetched_in_outage() < 4:
            assert time.monotonic() < deadline, "the victim fetched nothing while Redis was down"
            time.sleep(0.05)
        time.sleep(1.0)  # their flush (every 20 ms) has committed them: they will not be fetched again
        workers[victim].send_signal(signal.SIGKILL)
        workers[victim].wait()
        local_redis.start()  # same port, same append-only file
        workers[victim] = start_worker(site, tmp_path / victim, local_redis.url, "c", "--worker", victim, *options)
        for worker in workers.values():
            finish(worker, timeout=180)
        missing = site.reachable - set(site.fetch_counts())
        assert not missing, f"{len(missing)} pages never fetched, e.g. {sorted(missing)[:3]}"


@pytest.mark.parametrize("dedupe", MODES)
def test_urls_handed_over_while_redis_is_down_survive_a_kill_9_and_the_receivers_fault(local_redis, tmp_path, dedupe):
    """The first worker crawls alone and finds a backlog on every host, each host's pages linked
    only from the root of a host the other worker will own; the second joins, and the host table
    gives it its share of the hosts: the first hands it their URLs as it polls them. Redis stops while that goes on,
    the first worker is killed -9 and the second stopped (SIGSTOP: it commits nothing the first
    sends it from now on, and its lease lapses). Redis comes back and the first worker restarts:
    the URLs it handed over in the outage are its own again, though its seen table knows them
    and its frontier finished them. Then the second resumes: every page is fetched."""
    pages = 100  # a backlog on every host that outlasts the second worker's start and the outage
    with MultiHostSite(hosts=HOSTS, pages=1) as site:
        ids, owned = worker_ids(local_redis.url, site, one_first=True)
        other = {h: next(t for t in range(HOSTS) if owned[t] != owned[h]) for h in range(HOSTS)}
        site.graph = {(h, "/"): [(other[h], f"/c{h}-{i}.html") for i in range(pages)] for h in range(HOSTS)}
        site.graph |= {(other[h], f"/c{h}-{i}.html"): [] for h in range(HOSTS) for i in range(pages)}
        first, second = ids
        options = ("--dedupe", dedupe)
        workers = {first: start_worker(site, tmp_path / first, local_redis.url, "c", "--worker", first, *options)}
        deadline = time.monotonic() + 60
        while len({h for h, path, _, _ in list(site.requests) if path == "/"}) < HOSTS:
            assert time.monotonic() < deadline, "the first worker fetched no root"
            time.sleep(0.05)
        workers[second] = start_worker(site, tmp_path / second, local_redis.url, "c", "--worker", second, *options)
        client = redis.Redis.from_url(local_redis.url)
        while client.zscore("pycrawler:c:members", second) is None:
            assert time.monotonic() < deadline, "the second worker did not join"
            time.sleep(0.05)
        client.close()
        if dedupe == "split":  # handing over: wait until the second fetches on the hosts it gained
            while not site.fetch_counts(agent(tmp_path / second)):
                assert time.monotonic() < deadline + 60, "the second worker never fetched on its hosts"
                time.sleep(0.05)
        time.sleep(SETTLE + 1.0)  # the first has seen it join: with host splitting it is handing over
        local_redis.stop()
        time.sleep(LEASE + 1.0)  # longer than a lease: the second is no member when Redis is back
        workers[first].send_signal(signal.SIGKILL)
        workers[first].wait()
        workers[second].send_signal(signal.SIGSTOP)
        try:
            local_redis.start()  # same port, same append-only file
            workers[first] = start_worker(site, tmp_path / first, local_redis.url, "c", "--worker", first, *options)
            finish(workers[first], timeout=180)  # alone now: it ends once it has crawled what it holds
        finally:
            workers[second].send_signal(signal.SIGCONT)
        finish(workers[second], timeout=180)
        missing = site.reachable - set(site.fetch_counts())
        assert not missing, f"{len(missing)} pages never fetched, e.g. {sorted(missing)[:3]}"


def tree(site: MultiHostSite, levels: int) -> dict[tuple[int, str], tuple[int, str] | None]:
    """A link tree under every host's root: each page links to one page on its own host and one
    on another host, and is linked from nothing else, so its depth is the same whatever order
    the crawl goes in. Sets ``site.graph``; returns page -> its parent (None for a root)."""
    parent: dict[tuple[int, str], tuple[int, str] | None] = {}
    graph: dict[tuple[int, str], list[tuple[int, str]]] = {}
    for root in range(site.hosts):
        level = [((root, "/"), "")]
        parent[(root, "/")] = None
        for depth in range(levels):
            below = []
            for (h, path), name in level:
                children = [((h, f"/n{root}-{name}0.html"), name + "0"),
                            (((h + 1 + depth) % site.hosts, f"/n{root}-{name}1.html"), name + "1")]
                graph[(h, path)] = [page for page, _ in children]
                for page, child_name in children:
                    parent[page] = (h, path)
                    below.append((page, child_name))
            level = below
        for page, _ in level:
            graph[page] = []
    site.graph = graph
    return parent


def depth_of(page, parent) -> int:
    return 0 if parent[page] is None else 1 + depth_of(parent[page], parent)


def crawl_log_lines(state: Path) -> list[list[str]]:
    """(URL, discovery path, via) of every line of a worker's crawl.log."""
    return [line.split()[3:6] for line in (state / "crawl.log").read_text().splitlines()]


@pytest.mark.parametrize("dedupe", MODES)
def test_max_depth_holds_across_workers_and_received_urls_keep_their_via(local_redis, tmp_path, dedupe):
    max_depth = 3
    with MultiHostSite(hosts=HOSTS, pages=1) as site:
        parent = tree(site, levels=max_depth + 2)
        alone = subprocess.run([sys.executable, "-m", "pycrawler", "crawl", *site.seeds, "--state", str(tmp_path / "alone"),
                                "--no-progress", "--delay", str(DELAY), "--concurrency", str(CONCURRENCY),
                                "--parse-workers", "1", "--max-depth", str(max_depth)],
                               cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert alone.returncode == 0, alone.stderr
        single = set(site.fetch_counts())
        assert single == {site.url(h, p) for (h, p) in parent if depth_of((h, p), parent) <= max_depth}

        site.requests.clear()
        ids, owned = worker_ids(local_redis.url, site)
        workers = [start_worker(site, tmp_path / w, local_redis.url, "c", "--worker", w, "--max-depth", str(max_depth),
                                "--dedupe", dedupe) for w in ids]
        for worker in workers:
            finish(worker, timeout=180)
        assert set(site.fetch_counts()) == single

    url_of = {site.url(h, p): (h, p) for (h, p) in parent}
    received = 0
    for w in ids:
        for url, hops, via in crawl_log_lines(tmp_path / w):
            if url not in url_of:
                continue  # robots.txt
            page = url_of[url]
            up = parent[page]
            assert via == ("-" if up is None else site.url(*up)), url
            assert hops == ("L" * depth_of(page, parent) or "-"), url
            received += up is not None and owned[up[0]] != owned[page[0]]
    assert received > 0, "no URL crossed between the workers: the test's graph must make some cross"
