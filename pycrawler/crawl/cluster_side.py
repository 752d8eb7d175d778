"""A cluster worker's side of the crawl: links to and from the other workers.

A crawl given a :class:`~pycrawler.cluster.protocol.LinkExchange` is a cluster worker: the
URLs other workers send are scheduled at the depth and with the via they were found with,
then acknowledged (:meth:`ExchangePath._exchange_links`); a polled URL whose host moved to
another worker is forwarded instead of fetched, and one an earlier owner of its host fetched is
dropped (:meth:`ExchangePath._handed_over`); what Redis does not take waits in the ``outbox``
(:meth:`ExchangePath._flush_exchange`). A crawl on its own never enters this module's code.
"""

from __future__ import annotations

import time

import numpy as np

from .. import failpoints
from ..cluster.protocol import Link
from ..frontier.politeness import Outcome
from ..records.crawl_url import CrawlUrl
from .discovery import discovery
from .flush import Finished

RECEIVE_INTERVAL = 0.1
"""Seconds between two reads of the URLs other workers sent (a cluster worker)."""
RECEIVE_BATCH = 5000


class ExchangePath:
    """The cluster side of :class:`~pycrawler.crawl.engine.Crawler` (which sets the fields
    used here: its exchange, frontier, outbox, forwarded URLs and the pages finished)."""

    def _handed_over(self, batch: list[CrawlUrl]) -> list[CrawlUrl]:
        """The polled URLs this worker still fetches. Those whose host moved to another worker
        are forwarded to it, and those an earlier owner of their host fetched are dropped: both
        are finished here without a fetch at the next flush."""
        if self.exchange is None or not batch:
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
                self._in_process += 1
                self._finished.append(Finished(record.ori_url, None, record.layer, "", [], "", Outcome.success(),
                                                forwarded=record.ori_url in forwarded))
        return [record for record in batch if record.ori_url in keep]

    def _report(self, idle: bool) -> bool:
        return self.exchange.report(self._records_before + self.summary.fetched, len(self.frontier), idle)

    def _exchange_links(self) -> None:
        """Take the URLs other workers sent this one into the frontier, then acknowledge them:
        committed first, so a kill -9 in between only makes them arrive again."""
        if self.exchange is None or time.monotonic() - self._exchanged < RECEIVE_INTERVAL:
            return
        self._exchanged = time.monotonic()
        deliveries = self.exchange.receive(RECEIVE_BATCH)
        if deliveries:
            self._schedule_arrivals([link for delivery in deliveries for link in delivery.links])
            self.frontier.flush()  # an asynchronous Visited table enqueues what it holds
            failpoints.hit("cluster.arrivals.committed")
            self.exchange.ack(deliveries)
            self._wakeup.set()
        if self.outbox:  # links Redis did not take: try again, with or without pages to finish
            self._flush_exchange()
        self._report(idle=False)

    def _schedule_arrivals(self, links: list[Link]) -> None:
        """Schedule links that reached this worker from the cluster (or from its outbox). Those to
        URLs it forwarded away came back uncrawled: its seen table must not drop them, so they
        go past it, once each (a URL forced twice would be fetched twice)."""
        back = self.forwarded.came_back(links)
        if back:
            self._schedule(back, force=True)
            failpoints.hit("cluster.forwarded.rescheduled")
            urls = {link.url for link in back}
            links = [link for link in links if link.url not in urls]
        self._schedule(links)
        self.forwarded.forget(back)

    def _flush_exchange(self) -> None:
        """Flush the exchange outside a crawl flush; what it could not send goes to the outbox."""
        unsent = self.exchange.flush()
        if unsent is not None or self.outbox:
            with self.env.begin() as txn:
                self.outbox.update(unsent, txn)
            failpoints.hit("cluster.outbox.committed")
