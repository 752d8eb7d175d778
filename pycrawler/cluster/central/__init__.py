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

import contextlib
import logging
import threading
import time
from collections.abc import Sequence

import numpy as np
import redis

from ...seen.cache import UrlCache
from ..host_table import HostTable
from ..membership import Membership
from ..protocol import Delivery, Link
from .central_host import CentralHost
from .layout import Layout
from .local import LocalHost

NETWORK_ERRORS = (redis.ConnectionError, redis.TimeoutError)

log = logging.getLogger(__name__)


class CentralExchange:
    """One worker's part in a seed 003 cluster: its local host, and its network's central host
    while it holds the network's lease (the membership's lease is the role's lease too).

    `background=False` leaves the protocol's steps (`local.answer`, `central.step`) to the
    caller, for a program that drives them from its own loop."""

    def __init__(self, membership: Membership, network: str = "net0", cache: UrlCache | None = None, *,
                 frame_size: int = 500, answer_timeout_ms: int = 1000, settle: float = 0.0, background: bool = True):
        """`settle`: seconds of unchanged membership to wait for before taking part, so workers
        started together see each other before hosts get owners (which then stay)."""
        if "@" in membership.worker:
            raise ValueError(f"worker id {membership.worker!r}: '@' is kept for central host addresses")
        self.membership = membership
        client, worker, layout = membership.redis, membership.worker, Layout(membership.name)
        self.layout = layout
        membership.use_table(HostTable(client, layout.prefix))  # one slot with the pools: PLACE writes it
        self.local = LocalHost(client, layout, worker, network, frame_size, cache, membership.busy)
        self.central = CentralHost(client, layout, worker, network, lambda: membership.members,
                                   int(membership.lease * 1000), answer_timeout_ms)
        membership.settle(settle)
        self._struck_before = self._struck()  # the count in Redis is the worker's, over all its lives
        self._struck_seen = self._struck_before
        self.figures: dict = {}
        self.unacked: list[Delivery] = []
        self.fresh: list[Link] = []  # added since the last flush: what a failed flush returns
        self._unreachable = False  # a warning once per outage: the crawl retries every 0.1 s
        self._beaten = time.monotonic()
        self._stop = threading.Event()
        self._failure: BaseException | None = None
        self._threads = []
        if background:
            self._threads = [threading.Thread(target=self._serve, args=(step,), daemon=True, name=f"central-{name}")
                             for name, step in (("local", self._local_step), ("central", self._central_step))]
            for thread in self._threads:
                thread.start()

    def _local_step(self) -> None:
        """Answer requests; renew the membership lease every heartbeat, from this thread so that
        a worker busy elsewhere keeps its hosts and its answers flowing."""
        if time.monotonic() - self._beaten >= self.membership.heartbeat:
            self._beat()
        self.local.answer(block_ms=int(self.membership.heartbeat * 500))

    def _beat(self) -> None:
        self.membership.beat({**self.figures, **self.local.stats})
        if self.membership.worker not in self.membership.members:  # dropped while Redis was away
            self.membership.join()
        self._beaten = time.monotonic()

    def _central_step(self) -> None:
        self.central.step(block_ms=200)
        if not self.central.holding:  # another worker is the central host: try again later
            self._stop.wait(self.membership.lease / 3)

    def _serve(self, step) -> None:
        while not self._stop.is_set():
            try:
                step()
            except NETWORK_ERRORS:
                self._stop.wait(0.5)  # Redis restarting: the crawl goes on, the protocol waits
            except BaseException as err:  # surfaces in the crawl's next call, not lost in a thread
                self._failure = err
                return

    def _check(self) -> None:
        if self._failure is not None:
            raise self._failure

    # -- LinkExchange ---------------------------------------------------------------------------

    def add(self, links: Sequence[Link]) -> list[Link]:
        """Every link goes through the protocol: none is kept before the cluster agreed it is new."""
        self.local.add(links)
        self.fresh += links
        return []

    def flush(self) -> list[Link] | None:
        self._check()
        if self._send():
            self.fresh = []
            return None
        unsent, self.fresh = self.fresh, []
        return unsent

    def _send(self) -> bool:
        """Send the pools; False when Redis did not answer (they wait for the next try)."""
        try:
            self.local.flush()
        except NETWORK_ERRORS as err:  # the crawl goes on with its own frontier; the next flush sends
            if not self._unreachable:
                log.warning("Redis unreachable, links wait to be sent: %s", err)
            self._unreachable = True
            return False
        if self._unreachable:
            log.warning("Redis answers again: the waiting links are sent")
        self._unreachable = False
        return True

    def receive(self, max_urls: int, block_ms: int = 0) -> list[Delivery]:
        self._check()
        try:
            return self.local.receive(max_urls, block_ms)
        except NETWORK_ERRORS:
            self.local.pending_first = True  # Redis may have handed out entries whose answer was lost
            return []

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        pending = self.unacked + list(deliveries)
        try:
            self.local.ack(pending)
        except NETWORK_ERRORS:
            self.unacked = pending  # redelivered to this worker only: acknowledging later is safe
            return
        self.unacked = []

    def forward(self, links: Sequence[Link]) -> list[Link]:
        """Polled URLs of hosts whose owner changed go to the owner."""
        try:
            return self.local.forward(links)
        except NETWORK_ERRORS:
            return list(links)  # owners unknown while Redis is away: hosts move only when a worker dies

    def fetched(self, urls: Sequence[str], keys: np.ndarray) -> None:
        """Nothing to record: task_URL keeps a URL from ever being allocated twice, so a host's
        new owner is never given what its old owner fetched."""

    def duplicates(self) -> int:
        """Repeats in the URL pool, links finish_URL or the sending cache dropped, and those of
        this worker's frames a central host struck since the exchange opened (the last count read
        when Redis does not answer)."""
        with contextlib.suppress(*NETWORK_ERRORS):
            self._struck_seen = self._struck()
        stats = self.local.stats
        return (stats["pooled_twice"] + stats["dropped_locally"] + stats["dropped"]
                + self._struck_seen - self._struck_before)

    def _struck(self) -> int:
        return int(self.membership.redis.hget(self.layout.duplicates, self.membership.worker) or 0)

    def earlier_fetches(self, urls: Sequence[str]) -> np.ndarray:
        return np.empty(0, dtype=np.uint64)  # see `fetched`

    @property
    def traffic(self) -> dict[str, int]:
        """This worker's link traffic since the exchange opened (its local host's counts)."""
        return self.local.stats

    def report(self, fetched: int, pending: int, idle: bool) -> bool:
        """Keep this worker's figures for the next heartbeat; True once every live worker is idle
        and no frame, pool entry or allocated URL is anywhere in Redis."""
        if self.local.url_pool or self.local.unsent:  # links added outside a crawl flush (the seeds): send them now
            self._send()  # what fails stays in `fresh`: the crawl's next flush returns it
        if self.unacked:
            self.ack([])
        idle = idle and not self.local.unsent and not self.unacked
        self.figures = {"pages": fetched, "pending": pending}
        with contextlib.suppress(*NETWORK_ERRORS):  # Redis away: not over, ask again later
            if idle:
                return self.membership.cluster_done(self._queue_lengths)
        return False

    def _queue_lengths(self, pipe: redis.client.Pipeline) -> None:
        """Nothing is in transit when no frame, pool entry or allocated URL is anywhere."""
        client, layout = self.membership.redis, self.layout
        for network in [n.decode() for n in client.smembers(layout.networks)]:
            pipe.xlen(layout.inbox(network))
            pipe.hlen(layout.local_reduce_pool(network))
            pipe.hlen(layout.dist_reduce_pool(network))
        for worker in [w.decode() for w in client.hkeys(layout.host_network)]:
            pipe.xlen(layout.task_pool(worker))

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        try:
            self._send()
            self.central.resign()
            self.membership.beat({**self.figures, "idle": 1, **self.local.stats})
            self.membership.leave()
        except NETWORK_ERRORS:
            pass


def open_exchange(membership: Membership, cache: UrlCache | None, settle: float | None = None,
                  network: str = "net0") -> CentralExchange:
    return CentralExchange(membership, network, cache, settle=2 * membership.heartbeat if settle is None else settle)
