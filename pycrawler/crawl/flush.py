"""The crawl's flush: the finished URLs made durable in batches, in the commit order that makes a
kill -9 lose nothing (:class:`Committer`, where that order is written down)."""

from __future__ import annotations

import time

from .. import failpoints
from ..cluster.protocol import Link, LinkExchange
from ..frontier.politeness import RETRY
from ..parse.links import SAME_LAYER_HOPS
from ..frontier.workqueues import WorkQueueFrontier
from ..store import Database, Environment
from ..store.java_errors import je_errors
from ..store.tuple import java_utf
from .discovery import LinkScheduler
from .forwarded import Forwarded
from .inflight import Finished
from .outbox import Outbox
from .outputs import CrawlOutputs
from .state_check import LogMark
from .stats_log import StatsLog


def url_key(url: str) -> bytes:
    """A ``fetched`` database key: the URL as JE's StringBinding writes it."""
    return java_utf(url) + b"\x00"


class Committer:
    """Commits a flush's finished URLs (:meth:`commit`) in the crawl's commit order:

    1. the outputs (crawl.log, WARC files, the trace: :mod:`.outputs`) are flushed to the
       operating system, with ``--fsync`` to the disk (failpoint ``flush.outputs_written``);
    2. the links the URLs found are scheduled through the frontier, which canonicalises and
       dedupes them through the Visited table and commits them (``flush.links_enqueued``); a
       cluster worker first gives its exchange the links to other workers' hosts, and sends
       them to Redis after (``flush.links_sent``);
    3. the URLs' records are written to the ``fetched`` database, one per URL
       (``flush.fetched_written``);
    4. their completions are committed in the frontier, in one transaction with crawl.log's
       length at step 1 (:class:`~.state_check.LogMark`, which a later open checks the state
       against), then that length is written beside crawl.log (``flush.completions_committed``);
       a cluster worker commits with them the links Redis did not take (its :mod:`.outbox`) and
       the URLs it forwarded (:mod:`.forwarded`) (``flush.outbox_committed``);
    5. a cluster worker names its committed fetches to the cluster, whose later owners of
       their hosts skip them (``flush.fetched_announced``).

    The guarantee: a URL counts as done only once what it discovered is durable (in the
    frontier, or in Redis or the outbox) and its fetch is in every output. A kill -9 at any
    point loses nothing; at worst the URLs in process at the kill, at most ``concurrency``
    (:class:`~pycrawler.crawl.inflight.InFlight`), are fetched again by the next run: their
    records are overwritten and an output may hold their fetches twice (the next run first cuts
    what the killed one left half-written: :mod:`.durable`). Outside a flush,
    :meth:`send_exchange` commits the outbox the same way (``cluster.outbox.committed``).

    ``exchange``, ``outbox`` and ``forwarded`` are a cluster worker's (None for a crawl on its own)."""

    def __init__(self, env: Environment, frontier: WorkQueueFrontier, fetched: Database, outputs: CrawlOutputs,
                 schedule: LinkScheduler, state: str, log_mark: LogMark, stats_log: StatsLog | None = None, exchange: LinkExchange | None = None, outbox: Outbox | None = None,
                 forwarded: Forwarded | None = None):
        self.env, self.frontier, self.fetched, self.outputs, self.schedule = env, frontier, fetched, outputs, schedule
        self.state, self.log_mark, self.stats_log = state, log_mark, stats_log
        self.exchange, self.outbox, self.forwarded = exchange, outbox, forwarded

    def commit(self, finished: list[Finished]) -> None:
        """Commit ``finished`` in the commit order; raises what failed (after which the crawl
        commits nothing more: the URLs not committed stay pending)."""
        started = time.perf_counter()
        try:
            with je_errors(self.state):
                self._commit(finished)
        finally:
            if self.stats_log is not None:
                self.stats_log.flushed(time.perf_counter() - started)

    def _commit(self, finished: list[Finished]) -> None:
        logged = self.outputs.flush()
        failpoints.hit("flush.outputs_written")
        # Plain tuples in Link's field order: a lone crawl's hot path builds no named tuples.
        links = [(link, item.layer if hop in SAME_LAYER_HOPS else item.layer + 1, item.hop_path + hop, item.url)
                 for item in finished for link, hop in item.links]
        exchange, unsent = self.exchange, None
        if exchange is not None:  # links to other workers' hosts leave; this worker schedules its own
            links = exchange.add([Link._make(link) for link in links])
        self.schedule(links)
        failpoints.hit("flush.links_enqueued")
        if exchange is not None:  # the links this flush found, and its forwards, are in Redis before its pages count as done
            unsent = exchange.flush()
            failpoints.hit("flush.links_sent")
        fetches = [f for f in finished if f.record is not None]  # the others were handed over, not fetched
        self.fetched.put_many([url_key(f.url) for f in fetches], [f.record for f in fetches])
        failpoints.hit("flush.fetched_written")
        completions = ((f.url, f.outcome) for f in finished)
        forwarded = [f.url for f in finished if f.forwarded]
        cluster = unsent is not None or self.outbox or forwarded
        with self.env.begin() as txn:
            self.log_mark.put(logged, txn)
            if cluster:  # what Redis did not take, and what was handed over, are durable with the pages
                self.outbox.update(unsent, txn)
                self.forwarded.mark(forwarded, txn)
            self.frontier.completed_many(completions, txn=txn)
        if cluster:
            failpoints.hit("flush.outbox_committed")
        else:
            failpoints.hit("flush.completions_committed")
        self.log_mark.acknowledged(logged)
        if exchange is not None:
            done = [f.url for f in fetches if f.outcome.kind != RETRY]  # a retried URL is fetched again
            if done:
                # Only once committed: a later owner skips what these keys name, so a page named
                # before its own-host links were committed would never have them crawled.
                exchange.fetched(done, self.frontier.keys_of(done))
                self.send_exchange()
                failpoints.hit("flush.fetched_announced")

    def send_exchange(self) -> None:
        """Send what the exchange holds; what it could not send goes to the outbox, which is
        emptied once Redis takes everything (a cluster worker's, outside a flush too)."""
        unsent = self.exchange.flush()
        if unsent is not None or self.outbox:
            with self.env.begin() as txn:
                self.outbox.update(unsent, txn)
            failpoints.hit("cluster.outbox.committed")
