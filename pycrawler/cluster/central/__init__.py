"""Seed 003's URL de-duplication protocol on Redis, as a `LinkExchange` (``--dedupe central``).

Every link a worker finds goes through three rounds of de-duplication before any worker crawls
it: locally against the worker's finish_URL; across its network, by the network's central host
broadcasting the set to the network's hosts and striking what any of them has; across networks,
by the central host sending what is left to the other networks' central hosts, which ask their
own hosts. What survives is allocated, once cluster-wide, to the worker that owns the URL's host.

A worker runs its local host's side (answering requests, heartbeats) and, while it holds its
network's lease, the network's central host, on two background threads that touch only Redis; the
crawl loop only adds, flushes, receives and acknowledges. See `local` and `central_host` for the
pools and for what this implementation chose where the paper is silent.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import redis

from ..protocol import Delivery
from .central_host import CentralHost
from .layout import Layout, now_ms
from .local import LocalHost


class CentralExchange:
    """One worker's membership of a seed 003 cluster.

    `background=False` leaves the protocol's steps (`local.answer`, `central.step`,
    `local.heartbeat`) to the caller, for a program that drives them from its own loop."""

    def __init__(self, client: redis.Redis, cluster: str, worker: str, network: str = "net0", *,
                 frame_size: int = 500, lease_ms: int = 3000, answer_timeout_ms: int = 1000, background: bool = True):
        if "@" in worker:
            raise ValueError(f"worker id {worker!r}: '@' is kept for central host addresses")
        layout = Layout(cluster)
        self.lease_ms = lease_ms
        self.local = LocalHost(client, layout, worker, network, frame_size)
        self.central = CentralHost(client, layout, worker, network, lease_ms, answer_timeout_ms)
        self.local.heartbeat()
        self._beat_at = now_ms()
        self._stop = threading.Event()
        self._failure: BaseException | None = None
        self._threads = []
        if background:
            self._threads = [threading.Thread(target=self._serve, args=(step,), daemon=True, name=f"central-{name}")
                             for name, step in (("local", self._local_step), ("central", self._central_step))]
            for thread in self._threads:
                thread.start()

    def _local_step(self) -> None:
        if now_ms() - self._beat_at >= self.lease_ms // 3:
            self.local.heartbeat()
            self._beat_at = now_ms()
        self.local.answer(block_ms=200)

    def _central_step(self) -> None:
        self.central.step(block_ms=200)
        if not self.central.holding:  # another worker is the central host: try again later
            self._stop.wait(self.lease_ms / 3000)

    def _serve(self, step) -> None:
        while not self._stop.is_set():
            try:
                step()
            except (redis.ConnectionError, redis.TimeoutError):
                self._stop.wait(0.5)  # Redis restarting: the crawl goes on, the protocol waits
            except BaseException as err:  # surfaces in the crawl's next call, not lost in a thread
                self._failure = err
                return

    def _check(self) -> None:
        if self._failure is not None:
            raise self._failure

    # -- LinkExchange ---------------------------------------------------------------------------

    def add(self, urls: Sequence[str]) -> list[str]:
        """Every link goes through the protocol: none is kept before the cluster agreed it is new."""
        self.local.add(urls)
        return []

    def flush(self) -> None:
        self._check()
        self.local.flush()

    def receive(self, max_urls: int, block_ms: int = 0) -> list[Delivery]:
        self._check()
        return self.local.receive(max_urls, block_ms)

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        self.local.ack(deliveries)

    def forward(self, urls: Sequence[str]) -> list[str]:
        return self.local.forward(urls)

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self.central.resign()
        self.local.leave()
