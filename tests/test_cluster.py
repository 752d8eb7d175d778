"""Several crawl workers over a real Redis, crawling a real multi-host site on loopback.

Each worker is a ``pycrawler crawl ... --redis URL --cluster NAME`` subprocess with its own
state folder; the site (127.0.0.1 ... 127.0.0.N, one server per address) records every
request, so the tests see from the server's side that every reachable page was fetched, how
many twice, and that no host saw two requests closer than the politeness delay. Leases and
heartbeats are short here (seconds, not the default's) so membership changes happen quickly.

redis-server is part of what is tested: without it these tests fail under CI and skip elsewhere.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from pycrawler.cluster.local_redis import LocalRedis, find_redis_server
from pycrawler.cluster.membership import host_of, weight
from pycrawler.crawl.multihost import MultiHostSite

ROOT = Path(__file__).resolve().parent.parent
DELAY = 0.25
LEASE, HEARTBEAT, SETTLE = 2.0, 0.3, 1.5
CONCURRENCY = 4


def require_redis_server() -> None:
    if find_redis_server() is None:
        reason = "redis-server is not installed (scripts/setup installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture
def local_redis(tmp_path):
    """A real redis-server on a free loopback port (append-only file on), stopped after the test."""
    require_redis_server()
    server = LocalRedis(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def command(seeds, state: Path, redis_url: str, cluster: str, *options: str) -> list[str]:
    return [sys.executable, "-m", "pycrawler", "crawl", *seeds, "--state", str(state), "--no-progress",
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


def wait_for_fetches(site: MultiHostSite, share: float, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(site.fetch_counts()) < share * len(site.reachable):
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.05)


def test_three_workers_fetch_every_page_once_and_keep_politeness(local_redis, tmp_path):
    with MultiHostSite(hosts=9, pages=12) as site:
        workers = [start_worker(site, tmp_path / f"w{i}", local_redis.url) for i in range(3)]
        outputs = [finish(w) for w in workers]
        counts = site.fetch_counts()
        assert set(counts) == site.reachable
        assert repeats(site) == 0
        assert site.closest_gap() >= DELAY * 0.95
    for out, _ in outputs:  # every worker crawled its share
        assert "fetched:        0 answered" not in out
    report = status(local_redis.url)
    assert "0 live of 3 workers seen" in report
    assert report.count("pages ") == 3


def test_killed_worker_hosts_move_after_the_lease_and_it_rejoins(local_redis, tmp_path):
    with MultiHostSite(hosts=9, pages=30) as site:
        workers = [start_worker(site, tmp_path / f"w{i}", local_redis.url) for i in range(3)]
        wait_for_fetches(site, 0.3)
        victim = workers[2]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed_at = time.monotonic()
        time.sleep(LEASE + 4 * HEARTBEAT)
        report = status(local_redis.url)
        assert "2 live of 3 workers seen" in report
        assert ": gone," in report
        rejoined = start_worker(site, tmp_path / "w2", local_redis.url)
        members = redis.Redis.from_url(local_redis.url)
        while members.zcard("pycrawler:c:members") < 3 and rejoined.poll() is None:
            time.sleep(0.05)
        rejoined_at = time.monotonic() + HEARTBEAT  # the survivors see it within a heartbeat
        for worker in (*workers[:2], rejoined):
            finish(worker)
        assert set(site.fetch_counts()) == site.reachable
        # Repeats: the victim's fetches in flight at the kill, and pages of its hosts that the
        # survivors fetched while it was away (its seen keys stayed in its state folder).
        ids = [json.loads((tmp_path / f"w{i}" / "cluster.json").read_text())["worker"] for i in range(3)]
        victim_hosts = {h for h in range(site.hosts)
                        if max(ids, key=lambda w: weight(w, host_of(site.url(h, "/")))) == ids[2]}
        while_away = sum(1 for h, path, at in site.requests
                         if h in victim_hosts and path != "/robots.txt" and killed_at <= at <= rejoined_at)
        assert repeats(site) <= CONCURRENCY + while_away
        assert site.closest_gap() >= DELAY * 0.95


def test_redis_restarted_mid_crawl_loses_nothing(local_redis, tmp_path):
    with MultiHostSite(hosts=9, pages=20) as site:
        workers = [start_worker(site, tmp_path / f"w{i}", local_redis.url) for i in range(3)]
        wait_for_fetches(site, 0.3)
        local_redis.restart(down_for=1.0)
        for worker in workers:
            finish(worker)
        assert set(site.fetch_counts()) == site.reachable


def one_line_failure(args: list[str]) -> str:
    done = subprocess.run([sys.executable, "-m", "pycrawler", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_bad_cluster_input_is_one_clear_line(local_redis, tmp_path):
    from pycrawler.crawl.site import free_port

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
