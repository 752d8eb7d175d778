"""Several crawl workers over a real Redis, crawling a real multi-host site on loopback.

Each worker is a ``pycrawler crawl ... --redis URL --cluster NAME`` subprocess with its own
state folder; the site (127.0.0.1 ... 127.0.0.N, one server per address) records every
request with its User-Agent (each worker's carries its own contact URL, ``http://localhost/wN``),
so the tests see from the server's side that every reachable page was fetched, how many twice,
by which worker, and that no host saw two requests closer than the politeness delay. Leases and
heartbeats are short here (seconds, not the default's) so membership changes happen quickly.

redis-server is part of what is tested: without it these tests fail.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
import redis

from pycrawler.cluster.host_table import HostTable
from pycrawler.cluster.membership import host_of
from pycrawler.keys.canon import DEFAULT_CANON, get_canonicalizer
from pycrawler.keys.schemes import DEFAULT_SEEN_KEY, get_seen_key_scheme
from pycrawler.testing.local_redis import LocalRedis
from pycrawler.testing.multihost import MultiHostSite

ROOT = Path(__file__).resolve().parent.parent
DELAY = 0.25
LEASE, HEARTBEAT, SETTLE = 2.0, 0.3, 1.5
CONCURRENCY = 4
OUTAGE, OUTAGE_LEASE = 2.0, 6.0


def agent(state: Path) -> str:
    """What the site sees in the User-Agent of the worker of ``state``, and in no other's."""
    return f"(+http://localhost/{state.name})"


def command(seeds, state: Path, redis_url: str, cluster: str, *options: str) -> list[str]:
    return [sys.executable, "-m", "pycrawler", "crawl", *seeds, "--state", str(state), "--no-progress",
            "--contact", agent(state)[2:-1],
            "--redis", redis_url, "--cluster", cluster, "--delay", str(DELAY), "--lease", str(LEASE),
            "--heartbeat", str(HEARTBEAT), "--settle", str(SETTLE), "--concurrency", str(CONCURRENCY), "--parse-workers", "1", *options]


def start_worker(site: MultiHostSite, state: Path, redis_url: str, cluster: str = "c", *options: str):
    return subprocess.Popen(command(site.seeds, state, redis_url, cluster, *options), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(worker: subprocess.Popen, timeout: float = 120) -> tuple[str, str]:
    try:
        out, err = worker.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        worker.kill()
        out, err = worker.communicate()
        pytest.fail(f"worker {worker.pid} did not finish:\n{out}\n{err}")
    assert worker.returncode == 0, f"worker exited {worker.returncode}:\n{out}\n{err}"
    return out, err


def status(redis_url: str, cluster: str = "c") -> str:
    done = subprocess.run([sys.executable, "-m", "pycrawler", "cluster", "status", "--redis", redis_url,
                           "--cluster", cluster], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def repeats(site: MultiHostSite) -> int:
    return sum(n - 1 for n in site.fetch_counts().values())


def committed_fetches(state: Path) -> set[str]:
    """The URLs a worker's JE state records as fetched (its ``fetched`` database), read with
    ``pycrawler store dump`` (read-only) while the worker is not running."""
    done = subprocess.run([sys.executable, "-m", "pycrawler", "store", "dump", str(state), "--db", "fetched",
                           "--key", "string", "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {json.loads(line)["key"] for line in done.stdout.splitlines()}


def recorded_fetches(redis_url: str, urls: set[str], cluster: str = "c") -> set[str]:
    """Of ``urls``, those whose Visited keys (the default md5 of the default web canonical form) the
    cluster's fetched-keys strings hold: the fetches a worker that gains their hosts knows of."""
    client = redis.Redis.from_url(redis_url)
    recorded = set(np.frombuffer(b"".join(client.get(key) or b"" for key in client.scan_iter(f"pycrawler:{cluster}:fetched:*")),
                                 dtype="<u8").tolist())
    ordered = sorted(urls)
    keys = get_seen_key_scheme(DEFAULT_SEEN_KEY).keys(
        [c or u for c, u in zip(get_canonicalizer(DEFAULT_CANON).many(ordered), ordered)])
    return {url for url, key in zip(ordered, np.asarray(keys).tolist()) if key in recorded}


def owners(site: MultiHostSite, states: list[Path], redis_url: str, cluster: str = "c") -> dict[int, Path]:
    """Host number -> the state folder of the worker the cluster's host table gives it now."""
    ids = {json.loads((state / "cluster.json").read_text())["worker"]: state for state in states}
    table = HostTable(redis.Redis.from_url(redis_url), f"pycrawler:{cluster}").table()
    return {h: ids[table[host_of(site.url(h, "/"))]] for h in range(site.hosts)}


def planned_owners(redis_url: str, site: MultiHostSite, *memberships: list[str]) -> dict[int, str]:
    """Host number -> the worker the host table gives it when workers ``memberships[0]`` see the
    site's seeds (in their order) and then the members become each of ``memberships[1:]`` in
    turn: the table's own scripts, run on a table of its own."""
    table = HostTable(redis.Redis.from_url(redis_url), f"plan:{time.monotonic_ns()}")
    table.rebalance(memberships[0])
    table.assign([host_of(seed) for seed in site.seeds], memberships[0])
    for members in memberships[1:]:
        table.rebalance(members)
    owned = table.table()
    return {h: owned[host_of(site.url(h, "/"))] for h in range(site.hosts)}


def each_fetched_its_own_hosts(site: MultiHostSite, states: list[Path], most: int) -> None:
    """Each host's pages were all fetched by one worker, and no worker fetched on more than
    ``most`` hosts (the bound of the host table)."""
    crawled = {state: {urlsplit(url).hostname for url in site.fetch_counts(agent(state))} for state in states}
    assert sum(len(hosts) for hosts in crawled.values()) == site.hosts, crawled
    assert all(len(hosts) <= most for hosts in crawled.values()), crawled
    for state, hosts in crawled.items():
        own_pages = {url for url in site.reachable if urlsplit(url).hostname in hosts}
        assert set(site.fetch_counts(agent(state))) == own_pages, state.name


def wait_for_fetches(site: MultiHostSite, share: float, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(site.fetch_counts()) < share * len(site.reachable):
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.05)


def test_three_workers_fetch_every_page_once_and_keep_politeness(local_redis, tmp_path):
    states = [tmp_path / f"w{i}" for i in range(3)]
    with MultiHostSite(hosts=9, pages=12) as site:
        workers = [start_worker(site, state, local_redis.url) for state in states]
        for worker in workers:
            finish(worker)
        counts = site.fetch_counts()
        assert set(counts) == site.reachable
        assert repeats(site) == 0
        assert site.closest_gap() >= DELAY * 0.95
        each_fetched_its_own_hosts(site, states, most=4)  # ceil(1.25 * 9 / 3)
    report = status(local_redis.url)
    assert "0 live of 3 workers seen" in report
    assert report.count("pages ") == 3


def test_a_worker_that_owns_no_host_sends_its_seeds_and_ends_with_the_others(local_redis, tmp_path):
    """Two workers on one host: one of them owns none."""
    with MultiHostSite(hosts=1, pages=4) as site:
        ids = ["busy", "hostless"]
        if planned_owners(local_redis.url, site, ids)[0] != "busy":
            ids.reverse()
        states = [tmp_path / "busy", tmp_path / "idle"]
        workers = [start_worker(site, state, local_redis.url, "c", "--worker", worker)
                   for state, worker in zip(states, ids)]
        for worker in workers:
            finish(worker)
        assert set(site.fetch_counts()) == site.reachable
        assert not site.fetch_counts(agent(states[1]))


def test_killed_worker_hosts_move_after_the_lease_and_it_rejoins(local_redis, tmp_path):
    states = [tmp_path / f"w{i}" for i in range(3)]
    with MultiHostSite(hosts=9, pages=30) as site:
        workers = [start_worker(site, state, local_redis.url) for state in states]
        wait_for_fetches(site, 0.3)
        owner = owners(site, states, local_redis.url)
        victim_state = max(states, key=list(owner.values()).count)  # one with hosts to take over
        victim = workers[states.index(victim_state)]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed_at = time.monotonic()
        # What the site answered the victim, and which of those the cluster knows it fetched:
        # read now, before the survivors (after the lease) fetch on its hosts and record keys too.
        answered = set(site.fetch_counts(agent(victim_state)))
        recorded = recorded_fetches(local_redis.url, answered)
        time.sleep(LEASE + 4 * HEARTBEAT)
        report = status(local_redis.url)
        assert "2 live of 3 workers seen" in report
        assert ": gone," in report
        # In flight at the kill: what the site answered the victim, less what the cluster knew it
        # fetched. Its JE state (read before it rejoins and writes again) committed all of those,
        # and may have committed a last flush whose keys the kill kept from Redis.
        assert recorded <= committed_fetches(victim_state)  # a key reaches Redis only after its JE commit
        in_flight = answered - recorded
        # Under way or not yet committed, plus one committed flush: each at most --concurrency.
        assert len(in_flight) <= 2 * CONCURRENCY, (len(in_flight), len(answered))
        rejoined_at = time.monotonic()
        rejoined = start_worker(site, victim_state, local_redis.url)
        for worker in [w for w in workers if w is not victim] + [rejoined]:
            finish(worker)
        assert set(site.fetch_counts()) == site.reachable
        victim_hosts = {h for h, state in owner.items() if state == victim_state}
        assert any(h in victim_hosts and path != "/robots.txt" and killed_at < at < rejoined_at
                   for h, path, at, _ in site.requests), \
            "the survivors did not take the victim's hosts over"
        # Neither the survivors that took its hosts nor the victim back from its state folder
        # fetch again what another worker fetched: only a page in flight at the kill repeats.
        repeated = {url for url, n in site.fetch_counts().items() if n > 1}
        assert len(repeated) <= len(in_flight) and repeats(site) <= len(in_flight), (repeated, in_flight)
        assert site.closest_gap() >= DELAY * 0.95


def test_redis_restarted_mid_crawl_loses_nothing(local_redis, tmp_path):
    """The outage (about 2 s) is shorter than the lease here, so no host changes owner."""
    states = [tmp_path / f"w{i}" for i in range(3)]
    with MultiHostSite(hosts=9, pages=30) as site:
        workers = [start_worker(site, state, local_redis.url, "c", "--lease", str(OUTAGE_LEASE)) for state in states]
        wait_for_fetches(site, 0.3)
        owner = owners(site, states, local_redis.url)
        local_redis.stop()
        down_at = time.monotonic()
        time.sleep(OUTAGE)
        up_at = time.monotonic()
        local_redis.start()
        for worker in workers:
            finish(worker)
        assert set(site.fetch_counts()) == site.reachable
        assert repeats(site) == 0
        assert site.closest_gap() >= DELAY * 0.95
        # Cut off from Redis, every worker went on crawling, its own hosts only.
        assert set(owner.values()) == set(states)
        for state in set(owner.values()):
            during = [h for h, path, at, ua in site.requests
                      if down_at < at < up_at and path != "/robots.txt" and agent(state) in ua]
            assert during, f"{state.name} fetched nothing while Redis was down"
            assert {owner[h] for h in during} == {state}


def one_line_failure(args: list[str]) -> str:
    done = subprocess.run([sys.executable, "-m", "pycrawler", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_bad_cluster_input_is_one_clear_line(local_redis, tmp_path):
    from pycrawler.local_servers import free_port

    seeds = ["http://127.0.0.1:9/"]
    crawl = ["crawl", *seeds, "--state", str(tmp_path / "s"), "--no-progress"]
    line = one_line_failure([*crawl, "--redis", f"redis://127.0.0.1:{free_port()}/0", "--cluster", "c"])
    assert "cannot reach Redis" in line
    with LocalRedis(tmp_path / "locked", password="right") as url:
        line = one_line_failure([*crawl, "--redis", url.replace("right", "wrong"), "--cluster", "c"])
    assert "refused the password" in line
    assert "right" not in line and "wrong" not in line
    assert "needs both" in one_line_failure([*crawl, "--redis", local_redis.url])
    assert "--dedupe is one of" in one_line_failure([*crawl, "--redis", local_redis.url, "--cluster", "c",
                                                     "--dedupe", "nonesuch"])
    from pycrawler.cluster.membership import Membership, connect

    Membership(connect(local_redis.url), "taken", "w").bind_seeds(["http://127.0.0.2:9/"])
    line = one_line_failure([*crawl, "--redis", local_redis.url, "--cluster", "taken"])
    assert "crawls another seed set" in line
    assert "no cluster 'nonesuch'" in one_line_failure(["cluster", "status", "--redis", local_redis.url,
                                                        "--cluster", "nonesuch"])
