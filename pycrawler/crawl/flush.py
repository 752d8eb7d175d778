"""The crawl's flush/commit path: finished pages become durable in batches.

Every :attr:`~pycrawler.crawl.settings.CrawlConfig.flush_interval` seconds, or sooner when
:attr:`~pycrawler.crawl.settings.CrawlConfig.flush_pages` pages wait, :meth:`FlushPath._flush`
takes the pages finished since the last flush (:class:`Finished`) and commits them in the
order that makes a kill -9 lose nothing: the outputs are flushed first (crawl.log, WARC,
trace), then the pages' links are scheduled through the frontier, their records written to
the ``fetched`` database, and only then their completions committed (see
:mod:`pycrawler.crawl.engine`). A cluster worker's links leave through its exchange before
the completions, with what Redis did not take kept in the ``outbox`` in the same transaction.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time

from .. import failpoints
from ..cluster.protocol import Link
from ..frontier.politeness import RETRY, Outcome
from ..parse.links import Hop
from ..records.crawl_url import CrawlUrl
from ..store.java_errors import je_errors
from ..store.tuple import java_utf
from .discovery import discovered


def url_key(url: str) -> bytes:
    """A ``fetched`` database key: the URL as JE's StringBinding writes it."""
    return java_utf(url) + b"\x00"


@dataclasses.dataclass(slots=True)
class Finished:
    """A URL whose fetch (or refusal) is over, waiting for the next flush."""

    url: str
    record: bytes | None                  # None: handed over to another worker, not fetched
    layer: int
    hop_path: str
    links: list[str]
    hops: str
    outcome: Outcome
    forwarded: bool = False               # handed over: remembered in case it comes back


class FlushPath:
    """The flush and commit of :class:`~pycrawler.crawl.engine.Crawler` (which sets the
    fields used here: its stores, outputs, frontier, exchange and the pages finished)."""

    async def _flusher(self) -> None:
        """Flush finished pages every ``flush_interval`` seconds, or sooner when ``flush_pages``
        wait; stop the crawl when the disk runs low or anything here fails."""
        try:
            await self._flush_and_watch()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a dead flusher would leave the crawl waiting forever
            self._fail(exc)

    async def _flush_and_watch(self) -> None:
        interval, shown = self.config.flush_interval, 0.0
        while True:
            try:
                await asyncio.wait_for(self._flush_due.wait(), timeout=interval)
            except TimeoutError:
                pass
            self._flush_due.clear()
            self._exchange_links()
            if self._finished:
                self._flush()
                self._wakeup.set()
            if self._stop_reason is None and (shortage := self.disk.shortage()):
                self._stop_reason = shortage
                self.stop()
            if self.stats_log is not None:
                self.stats_log.tick(self)
            if self.progress.enabled and time.monotonic() - shown >= 1.0:
                shown = time.monotonic()
                stats = self.frontier.stats()["by_state"]
                self.progress.update(queues_ready=stats["ready"]["queues"], queues_snoozed=stats["snoozed"]["queues"],
                                     pending=len(self.frontier), seen=self.frontier.totals["enqueued"])
                if self.url_cache is not None:
                    self.progress.update(cache_hits=self.url_cache.hits, cache_misses=self.url_cache.misses)

    def _flush(self) -> None:
        """Flush the outputs, then schedule the finished pages' links, write their records and
        commit their completions; after a failure, commit nothing (the pages stay pending)."""
        finished, self._finished = self._finished, []
        if not finished:
            return
        if self._failure is None:
            started = time.perf_counter()
            try:
                with je_errors(str(self.config.state)):
                    self._commit(finished)
            except Exception as exc:  # noqa: BLE001 -- whatever failed, what follows must not commit
                self._fail(exc)
            if self.stats_log is not None:
                self.stats_log.flushed(time.perf_counter() - started)
        self._in_process -= len(finished)

    def _commit(self, finished: list[Finished]) -> None:
        self.outputs.flush()
        failpoints.hit("flush.outputs_written")
        redirect = Hop.REDIRECT.value
        # Plain tuples in Link's field order: a lone crawl's hot path builds no named tuples.
        links = [(link, item.layer if hop == redirect else item.layer + 1, item.hop_path + hop, item.url)
                 for item in finished for link, hop in zip(item.links, item.hops)]
        exchange, unsent = self.exchange, None
        if exchange is not None:  # links to other workers' hosts leave; this worker schedules its own
            links = exchange.add([Link._make(link) for link in links])
        self._schedule(links)
        failpoints.hit("flush.links_enqueued")
        if exchange is not None:  # the links this flush found, and its forwards, are in Redis before its pages count as done
            unsent = exchange.flush()
            failpoints.hit("flush.links_sent")
        fetches = [f for f in finished if f.record is not None]  # the others were handed over, not fetched
        self.fetched.put_many([url_key(f.url) for f in fetches], [f.record for f in fetches])
        failpoints.hit("flush.fetched_written")
        completions = ((f.url, f.outcome) for f in finished)
        forwarded = [f.url for f in finished if f.forwarded]
        if unsent is None and not self.outbox and not forwarded:
            self.frontier.completed_many(completions)
            failpoints.hit("flush.completions_committed")
        else:
            with self.env.begin() as txn:  # what Redis did not take, and what was handed over, are durable with the pages
                self.outbox.update(unsent, txn)
                self.forwarded.mark(forwarded, txn)
                self.frontier.completed_many(completions, txn=txn)
            failpoints.hit("flush.outbox_committed")
        if exchange is not None:
            done = [f.url for f in fetches if f.outcome.kind != RETRY]  # a retried URL is fetched again
            if done:
                # Only once committed: a later owner skips what these keys name, so a page named
                # before its own-host links were committed would never have them crawled.
                exchange.fetched(done, self.frontier.keys_of(done))
                self._flush_exchange()
                failpoints.hit("flush.fetched_announced")

    def _schedule(self, links: list[Link] | list[tuple[str, int, str, str | None]], force: bool = False) -> None:
        """Put links in the frontier, each at its layer with its hop path and via (``force``:
        past the seen table)."""
        by_layer: dict[int, list[CrawlUrl]] = {}
        for url, layer, hops, via in links:
            by_layer.setdefault(layer, []).append(discovered(url, layer, hops, via))
        if self.stats_log is not None:
            self.stats_log.scheduled(len(links))
        for layer, records in sorted(by_layer.items()):
            self.frontier.schedule(records, layer=layer, force=force)

    def _count_links(self) -> None:
        """The summary's new URLs and dupes avoided, counted where the answers arrive: the
        frontier's totals of this run (DRUM answers a check when it merges, at a later schedule
        call, a flush or the close, not when the link is offered), the links the page workers
        dropped as passed on before, and those the cluster dropped as known before they reached
        any frontier."""
        totals = self.frontier.totals
        self.summary.enqueued = totals["enqueued"]
        self.summary.dupes_avoided = (self._repeats + totals["duplicates"]
                                      + (self.exchange.duplicates() if self.exchange is not None else 0))
