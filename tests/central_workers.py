"""Worker processes for tests/test_cluster_central.py: each is one crawl worker's side of seed
003's protocol (a real `CentralExchange` with its background threads), in its own process so
that one can be killed with -9 like a crashed machine."""

from __future__ import annotations

import time

import redis

from pycrawler.cluster.central import CentralExchange
from pycrawler.cluster.membership import Membership
from pycrawler.cluster.protocol import Link

LEASE, HEARTBEAT = 1.0, 0.2  # seconds: short, so a killed central host is replaced quickly
SETTLE = 2.0  # seconds of unchanged membership before submitting: workers started together agree
# on the members before hosts get owners, so no host changes owner when the others join
TIMINGS = {"answer_timeout_ms": 500, "frame_size": 100}


def membership(port: int, worker: str) -> Membership:
    return Membership(redis.Redis(port=port), "t", worker, lease=LEASE, heartbeat=HEARTBEAT)


def run_worker(port, worker, network, urls, chunk, pause, flushed, stop, results):
    """Submit `urls` in chunks (a flush after each, like a crawl's commit points), then receive
    and acknowledge allocations until `stop` is set and nothing is left. Acknowledged URLs are
    then polled from the "frontier" and passed through `forward`, like the crawl does: report
    the URLs this worker would fetch."""
    exchange = CentralExchange(membership(port, worker), network, settle=SETTLE, **TIMINGS)
    acked: list[str] = []
    for start in range(0, len(urls), chunk):
        exchange.add([Link(url) for url in urls[start : start + chunk]])
        exchange.flush()
        acked += drain(exchange)
        time.sleep(pause)
    flushed.set()
    while True:
        got = drain(exchange, block_ms=100)
        acked += got
        if not got and stop.is_set():
            break
    results.put((worker, acked))
    exchange.close()


def drain(exchange: CentralExchange, block_ms: int = 0) -> list[str]:
    exchange.report(0, 0, idle=False)  # the heartbeat, as the crawl's flusher sends it
    deliveries = exchange.receive(1000, block_ms)
    exchange.ack(deliveries)
    return [link.url for link in exchange.forward([link for delivery in deliveries for link in delivery.links])]
