"""A cluster worker's side of the crawl: links to and from the other workers (:class:`ClusterSide`).

A crawl given a :class:`~pycrawler.cluster.protocol.LinkExchange` is a cluster worker and has a
:class:`ClusterSide`; a crawl on its own has none. Its links to other workers' hosts leave at
each flush, in the commit order of :class:`~pycrawler.crawl.flush.Committer`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from .. import failpoints
from ..cluster.protocol import Link, LinkExchange
from ..frontier.workqueues import WorkQueueFrontier
from ..records.crawl_url import CrawlUrl
from .discovery import LinkScheduler, discovery
from .flush import Committer
from .forwarded import Forwarded
from .inflight import Finished, InFlight
from .outbox import Outbox

RECEIVE_INTERVAL = 0.1
"""Seconds between two reads of the URLs other workers sent (a cluster worker)."""
RECEIVE_BATCH = 5000


class ClusterSide:
    """What a cluster worker does besides crawling: the URLs other workers send are scheduled at
    the depth and with the via they were found with, then acknowledged (:meth:`receive`); a
    polled URL whose host moved to another worker is forwarded instead of fetched, and one an
    earlier owner of its host fetched is dropped (:meth:`kept`); the cluster hears how far this
    worker is (:meth:`report`), which tells when the whole cluster is idle.

    ``pages_fetched`` counts the pages this worker's state holds (earlier runs' included)."""

    def __init__(self, exchange: LinkExchange, frontier: WorkQueueFrontier, in_flight: InFlight,
                 schedule: LinkScheduler, committer: Committer, outbox: Outbox, forwarded: Forwarded,
                 pages_fetched: Callable[[], int]):
        self.exchange, self.frontier, self.in_flight = exchange, frontier, in_flight
        self.schedule, self.committer = schedule, committer
        self.outbox, self.forwarded = outbox, forwarded
        self.pages_fetched = pages_fetched
        self._received = 0.0
        self._fetched_elsewhere = np.empty(0, dtype=np.uint64)  # sorted keys earlier owners of own hosts fetched

    def start(self, seeds: list[Link]) -> list[Link]:
        """Before the crawl's first poll: queue again what an earlier run could not send (before
        a flush empties the outbox), take what the cluster sent first, and schedule the outbox's
        forwards whose host is this worker's again. Returns the ``seeds`` to this worker's own
        hosts; the others go to their owners."""
        restored = self.exchange.add(self.outbox.links()) if self.outbox else []
        self.receive()
        self.schedule_arrivals(restored)
        return self.exchange.add(seeds)

    def kept(self, batch: list[CrawlUrl]) -> list[CrawlUrl]:
        """The polled URLs this worker keeps to fetch. Those whose host moved to another worker
        are forwarded to it, and those an earlier owner of their host fetched are dropped: both
        are finished here without a fetch (:meth:`InFlight.finish_unfetched`), at the next flush."""
        if not batch:
            return batch
        polled = [Link(record.ori_url, record.layer, *discovery(record)) for record in batch]
        keep = {link.url for link in self.exchange.forward(polled)}
        forwarded = {record.ori_url for record in batch} - keep
        urls = [record.ori_url for record in batch if record.ori_url in keep]
        if urls:
            learned = self.exchange.earlier_fetches(urls)
            if len(learned):
                self.frontier.mark_seen(learned)
                self._fetched_elsewhere = np.union1d(self._fetched_elsewhere, learned)
            if len(self._fetched_elsewhere):
                done = np.isin(self.frontier.keys_of(urls), self._fetched_elsewhere).tolist()
                keep -= {url for url, fetched in zip(urls, done) if fetched}
        for record in batch:
            if record.ori_url not in keep:
                self.in_flight.finish_unfetched(Finished.handed_over(record, forwarded=record.ori_url in forwarded))
        return [record for record in batch if record.ori_url in keep]

    def report(self, idle: bool) -> bool:
        """Tell the cluster how far this worker is; True when the whole cluster is idle."""
        return self.exchange.report(self.pages_fetched(), len(self.frontier), idle)

    def receive(self) -> bool:
        """Take the URLs other workers sent this one into the frontier, then acknowledge them:
        committed first, so a kill -9 in between only makes them arrive again. At most every
        :data:`RECEIVE_INTERVAL` seconds; True when URLs arrived."""
        if time.monotonic() - self._received < RECEIVE_INTERVAL:
            return False
        self._received = time.monotonic()
        deliveries = self.exchange.receive(RECEIVE_BATCH)
        if deliveries:
            self.schedule_arrivals([link for delivery in deliveries for link in delivery.links])
            self.frontier.flush()  # an asynchronous Visited table enqueues what it holds
            failpoints.hit("cluster.arrivals.committed")
            self.exchange.ack(deliveries)
        if self.outbox:  # links Redis did not take: try again, with or without pages to finish
            self.committer.send_exchange()
        self.report(idle=False)
        return bool(deliveries)

    def schedule_arrivals(self, links: list[Link]) -> None:
        """Schedule links that reached this worker from the cluster (or from its outbox). Those to
        URLs it forwarded away came back uncrawled: its seen table must not drop them, so they
        go past it, once each (a URL forced twice would be fetched twice)."""
        back = self.forwarded.came_back(links)
        if back:
            self.schedule(back, force=True)
            failpoints.hit("cluster.forwarded.rescheduled")
            urls = {link.url for link in back}
            links = [link for link in links if link.url not in urls]
        self.schedule(links)
        self.forwarded.forget(back)
