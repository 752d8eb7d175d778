"""Seed 003's de-duplication protocol (`--dedupe central`) against a real redis-server.

Each test starts its own redis-server on a free loopback port and stops it (the `local_redis`
fixture of tests/test_cluster.py: without redis-server these fail).
Workers that must be killable run in processes (tests/central_workers.py); the protocol's
message-level behaviour is driven step by step in this process with `background=False`, so each
step's effect can be held. The end-to-end crawl runs `pycrawler crawl --dedupe central` workers
against the multi-host loopback site, as host splitting's tests do.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import re
import signal
import time
from collections import Counter
from types import SimpleNamespace

import pytest
import redis

from central_workers import TIMINGS, membership, run_worker
from test_cluster import (
    CONCURRENCY,
    DELAY,
    each_fetched_its_own_hosts,
    finish,
    repeats,
    start_worker,
    status,
    wait_for_fetches,
)
from pycrawler.cli.cluster import host_owners
from pycrawler.cluster.central import CentralExchange
from pycrawler.cluster.central.frames import Flag, Frame, FrameError, decode, encode
from pycrawler.cluster.central.layout import Layout
from pycrawler.cluster.central.local import fingerprint_keys
from pycrawler.cluster.membership import Membership
from pycrawler.cluster.protocol import Link
from pycrawler.testing.multihost import MultiHostSite


@pytest.fixture
def redis_port(local_redis):
    return local_redis.port


def site_urls(hosts: int, pages: int) -> list[str]:
    return [f"http://127.0.0.{h + 1}:8000/p{p}.html" for h in range(hosts) for p in range(pages)]


def exchanges(port: int, *workers: tuple[str, str]) -> list[CentralExchange]:
    """Workers (id, network) driven step by step, each seeing all the others as members."""
    made = [CentralExchange(membership(port, worker), network, background=False, **TIMINGS) for worker, network in workers]
    for ex in made:
        ex.membership.beat()
    return made


def delivered(ex: CentralExchange) -> list[str]:
    deliveries = ex.receive(10_000)
    ex.ack(deliveries)
    return [link.url for d in deliveries for link in d.links]


def test_a_frame_round_trips_through_its_json_form():
    frame = Frame({"http://a.example/x": 0, "http://b.example/ü?q=1": 1}, "worker-1", 42, Flag.ANSWER)
    data = encode(frame)
    assert decode(data) == frame
    assert data.startswith(b'{"URL_set":{"http://a.example/x":0,')  # the paper's JSON: URL -> 0 or 1
    assert decode(data).known() == {"http://b.example/ü?q=1"}
    for bad in (b"not json", b'{"URL_set":{},"IP":"w","number":1,"flag":9}', b'{"URL_set":[],"IP":"w","number":1,"flag":1}',
                b'{"URL_set":{"u":2},"IP":"w","number":1,"flag":1}', b'{"IP":"w","number":1,"flag":1}'):
        with pytest.raises(FrameError, match="^not a de-duplication frame"):
            decode(bad)


def test_a_host_discards_its_own_request_and_answers_from_finish_url(redis_port):
    a, b = exchanges(redis_port, ("a", "net0"), ("b", "net0"))
    first = site_urls(2, 5)
    a.add([Link(url) for url in first])
    a.flush()
    assert a.central.step() == 1  # a takes the network's lease and broadcasts the request
    assert a.local.answer() == 1 and a.local.stats["own_discarded"] == 1 and a.local.stats["answered"] == 0
    assert b.local.answer() == 1 and b.local.stats["answered"] == 1
    assert a.central.step() == 1  # b's answer completes the frame: one network, so allocated
    to_a, to_b = delivered(a), delivered(b)
    assert sorted(to_a + to_b) == sorted(first) and to_a and to_b

    # Round two: a's links again plus new ones. Local de-duplication drops what a committed,
    # b's answer marks what b committed, and only the new URLs are allocated.
    fresh = [f"http://127.0.0.9:8000/n{i}" for i in range(7)]
    a.add([Link(url) for url in first + fresh])
    a.flush()
    assert a.local.stats["dropped_locally"] == len(to_a)
    a.central.step()
    a.local.answer()
    b.local.answer()
    (_, fields), = a.central.client.xrange(a.central.inbox)
    answer = decode(fields[b"f"])
    assert (answer.flag, answer.ip) == (Flag.ANSWER, "b") and answer.known() == set(to_b)
    a.central.step()
    assert sorted(delivered(a) + delivered(b)) == sorted(fresh)
    assert a.central.stats["timeouts"] == 0


def test_an_answer_lost_costs_only_the_time_out_and_a_late_one_is_dropped(redis_port):
    a, b, silent = exchanges(redis_port, ("a", "net0"), ("b", "net0"), ("c", "net0"))  # c: alive, but never answers
    urls = site_urls(3, 4)
    a.add([Link(url) for url in urls])
    a.flush()
    started = time.monotonic()
    a.central.step()
    b.local.answer()
    a.central.step()
    assert a.central.records["local"], "still waiting for c"
    while a.central.records["local"]:
        a.central.step(block_ms=100)
    assert time.monotonic() - started >= TIMINGS["answer_timeout_ms"] / 1000
    assert a.central.stats["timeouts"] == 1 and a.central.stats["allocated"] == len(urls)
    silent.local.answer()  # the answer arrives after the time-out: dropped, nothing allocated again
    a.central.step()
    assert a.central.stats["late_answers"] == 1 and a.central.stats["allocated"] == len(urls)
    assert sorted(delivered(a) + delivered(b) + delivered(silent)) == sorted(urls)


def test_other_networks_strike_what_their_hosts_have(redis_port):
    a, d = exchanges(redis_port, ("a", "net0"), ("d", "net1"))
    known, new = site_urls(2, 3), [f"http://127.0.0.7:8000/x{i}" for i in range(5)]
    d.add([Link(url) for url in known])  # d's own links go through its network first and end in its finish_URL
    d.flush()
    for _ in range(6):
        for step in (d.central.step, a.central.step, a.local.answer, d.local.answer):
            step()
    assert sorted(delivered(a) + delivered(d)) == sorted(known)

    a.add([Link(url) for url in known + new])
    a.flush()
    a.central.step()  # a alone in net0: straight to net1's central host
    assert set(a.central.records["dist"]) and not a.central.records["local"]
    d.central.step()  # net1 asks its hosts
    d.local.answer()
    d.central.step()  # and answers net0
    a.central.step()
    assert not a.central.records["dist"] and a.central.stats["timeouts"] == 0
    assert sorted(delivered(a) + delivered(d)) == sorted(new)


def wait_quiet(port: int, networks: list[str], timeout: float = 60.0) -> None:
    """Until no frame is waiting in any inbox or pool (three looks in a row)."""
    client, layout = redis.Redis(port=port), Layout("t")
    quiet, deadline = 0, time.monotonic() + timeout
    while quiet < 3:
        assert time.monotonic() < deadline, "the protocol did not settle"
        busy = sum(client.xlen(layout.inbox(n)) + client.hlen(layout.local_reduce_pool(n)) + client.hlen(layout.dist_reduce_pool(n))
                   for n in networks)
        quiet = quiet + 1 if busy == 0 else 0
        time.sleep(0.2)


@pytest.fixture
def pool():
    """Worker processes (spawned) and what they share: a stop event and a results queue. They are
    stopped after the test whatever its outcome (a failed assertion before the stop left them
    running, and the test run could not end)."""
    ctx = multiprocessing.get_context("spawn")
    shared = SimpleNamespace(ctx=ctx, stop=ctx.Event(), results=ctx.Queue(), procs=[])
    yield shared
    shared.stop.set()
    for proc in shared.procs:
        proc.join(30)
        if proc.is_alive():
            proc.kill()
            proc.join()


def start(pool, port, worker, network, urls, chunk=150, pause=0.0):
    flushed = pool.ctx.Event()
    proc = pool.ctx.Process(target=run_worker,
                            args=(port, worker, network, urls, chunk, pause, flushed, pool.stop, pool.results))
    proc.start()
    pool.procs.append(proc)
    return proc, flushed


def collect(results, count):
    acked: dict[str, list[str]] = {}
    for _ in range(count):
        worker, urls = results.get(timeout=60)
        acked.setdefault(worker, []).extend(urls)
    return acked


def assert_allocated_once(acked: dict[str, list[str]], urls: list[str], dead: str = "") -> None:
    owners = Counter()
    for got in acked.values():
        owners.update(set(got))
    assert set(owners) == set(urls), "every URL submitted is allocated"
    assert max(owners.values()) == 1, "to exactly one worker"
    by_host: dict[str, set[str]] = {}
    for worker, got in acked.items():
        for url in got:
            by_host.setdefault(url.split("/")[2], set()).add(worker)
    for host, workers in by_host.items():  # one live owner per host: a dead owner's hosts moved
        assert len(workers - {dead}) == 1, f"{host} is crawled by {workers} (politeness)"


def test_overlapping_sets_from_several_processes_are_allocated_exactly_once(redis_port, pool):
    urls = site_urls(20, 60)
    rng = random.Random(14)
    samples = {(w, net): rng.sample(urls, 800) for w, net in (("w1", "net0"), ("w2", "net0"), ("w3", "net1"), ("w4", "net1"))}
    procs = [start(pool, redis_port, w, net, sample) for (w, net), sample in samples.items()]
    for _proc, flushed in procs:
        assert flushed.wait(60)
    wait_quiet(redis_port, ["net0", "net1"])
    pool.stop.set()
    acked = collect(pool.results, len(procs))
    for proc, _ in procs:
        proc.join(30)
        assert proc.exitcode == 0
    submitted = {u for got in acked.values() for u in got}
    assert_allocated_once(acked, sorted(submitted))
    assert len(submitted) > 0.95 * len(urls)  # 4 x 800 random picks out of 1200 cover nearly all


def test_a_killed_central_host_is_replaced_and_nothing_flushed_is_lost(redis_port, pool):
    client, layout = redis.Redis(port=redis_port), Layout("t")
    # w1 starts alone, so it takes net0's lease; w2 and w3 submit slowly, in many flushes.
    first, first_flushed = start(pool, redis_port, "w1", "net0", [])
    deadline = time.monotonic() + 30
    while client.get(layout.lease("net0")) != b"w1":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    rng = random.Random(3)
    samples = {w: rng.sample(site_urls(10, 60), 450) for w in ("w2", "w3")}
    others = [start(pool, redis_port, w, "net0", sample, chunk=30, pause=0.1) for w, sample in samples.items()]
    deadline = time.monotonic() + 30
    while client.scard(layout.task_url("net0")) < 100:  # w1 is mid-way: it has allocated some URLs
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(first.pid, signal.SIGKILL)
    first.join()
    # What w1 acknowledged before it died is in its JE frontier (here: its finish_URL, written in
    # the same transaction as the acknowledgement); it must not be allocated to anyone again.
    acked_by_dead = client.smembers(layout.finish_url("w1"))
    deadline = time.monotonic() + 30
    while client.get(layout.lease("net0")) in (None, b"w1"):  # the lease runs out; a survivor takes it
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert client.get(layout.lease("net0")) in (b"w2", b"w3")
    for _proc, flushed in others:
        assert flushed.wait(60)
    # What the dead worker had not acknowledged is re-routed to its hosts' new owners.
    wait_quiet(redis_port, ["net0"])
    deadline = time.monotonic() + 30
    while client.xlen(layout.task_pool("w1")):
        assert time.monotonic() < deadline, "w1's task_pool was not re-routed"
        time.sleep(0.1)
    pool.stop.set()
    acked = collect(pool.results, 2)
    for proc, _ in others:
        proc.join(30)
        assert proc.exitcode == 0
    submitted = sorted({u for sample in samples.values() for u in sample})
    acked["w1 before -9"] = [u for u, fp in zip(submitted, fingerprint_keys(submitted)) if fp in acked_by_dead]
    assert_allocated_once(acked, submitted, dead="w1 before -9")


def test_three_workers_in_two_networks_crawl_every_page_once_politely(local_redis, tmp_path):
    with MultiHostSite(hosts=9, pages=12) as site:
        for worker in central_workers(site, tmp_path, local_redis.url, ["net0", "net0", "net1"]):
            finish(worker)
        assert (set(site.fetch_counts()) == site.reachable, repeats(site)) == (True, 0)
        assert site.closest_gap() >= DELAY * 0.95
        each_fetched_its_own_hosts(site, [tmp_path / f"w{i}" for i in range(3)], most=4)  # ceil(1.25 * 9 / 3)
    report = status(local_redis.url)
    assert "0 live of 3 workers seen" in report
    assert sum(int(n) for n in re.findall(r"pages (\d+)", report)) == len(site.reachable)
    owners = host_owners(Membership(redis.Redis.from_url(local_redis.url), "c", "status"))
    ids = {json.loads((tmp_path / f"w{i}" / "cluster.json").read_text())["worker"] for i in range(3)}
    assert len(owners) == 9 and set(owners.values()) <= ids  # every host has one owner, a worker



def central_workers(site: MultiHostSite, tmp_path, url: str, networks: list[str]):
    return [start_worker(site, tmp_path / f"w{i}", url, "c", "--dedupe", "central", "--network", net)
            for i, net in enumerate(networks)]


def test_the_central_host_killed_mid_crawl_is_replaced_and_the_crawl_completes(local_redis, tmp_path):
    client, layout = redis.Redis.from_url(local_redis.url), Layout("c")
    with MultiHostSite(hosts=9, pages=30) as site:
        workers = central_workers(site, tmp_path, local_redis.url, ["net0", "net0", "net0"])
        wait_for_fetches(site, 0.3)
        central = client.get(layout.lease("net0")).decode()
        ids = [json.loads((tmp_path / f"w{i}" / "cluster.json").read_text())["worker"] for i in range(3)]
        victim = ids.index(central)
        workers[victim].send_signal(signal.SIGKILL)
        workers[victim].wait()
        deadline = time.monotonic() + 30
        while client.get(layout.lease("net0")) in (None, central.encode()):
            assert time.monotonic() < deadline, "no worker took the central host's role"
            time.sleep(0.05)
        # It rejoins from its state folder: its frontier's URLs of hosts that moved go to their owners.
        rejoined = start_worker(site, tmp_path / f"w{victim}", local_redis.url, "c", "--dedupe", "central",
                                "--network", "net0")
        for worker in [w for i, w in enumerate(workers) if i != victim] + [rejoined]:
            finish(worker)
        assert set(site.fetch_counts()) == site.reachable
        assert repeats(site) <= CONCURRENCY  # the victim's fetches in flight, at most
        assert site.closest_gap() >= DELAY * 0.95


def test_redis_restarted_mid_crawl_the_protocol_resumes_and_nothing_is_lost(local_redis, tmp_path):
    with MultiHostSite(hosts=9, pages=20) as site:
        workers = central_workers(site, tmp_path, local_redis.url, ["net0", "net0", "net1"])
        wait_for_fetches(site, 0.3)
        local_redis.restart(down_for=1.0)
        for worker in workers:
            finish(worker)
        assert set(site.fetch_counts()) == site.reachable
        assert repeats(site) == 0
