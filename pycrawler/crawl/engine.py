"""The crawl engine: a work-queue frontier on JE, driven from one asyncio loop, and fetcher processes.

One :class:`Crawler` runs one crawl in a state folder; the same folder resumes it::

    summary = Crawler(CrawlConfig(seeds=["http://127.0.0.1:8080/"], state=Path("state"))).run()

The flow of a URL:

1. **poll**: the dispatcher takes up to the free slots' worth of URLs from the frontier in
   one call (:meth:`WorkQueueFrontier.poll`); with nothing ready it sleeps until the
   frontier's ``wait_time()`` or until finished pages free slots. A *slot* is held from the
   poll until the page's completion is committed (:class:`~.inflight.InFlight`).
2. **robots.txt** (:class:`~pycrawler.fetch.RobotsCache`, read as ``config.robots`` says):
   a precluded URL is logged with status -9998 and recorded, not fetched; while the host's
   robots.txt is unreachable its URLs wait (-61, retried with the queue's backoff); the
   host's ``Crawl-delay`` goes into the queue's politeness delay.
3. **fetch and page work** in a fetcher process (:mod:`.fetchers`, ``--fetchers N``): the
   GET, extraction, scope, depth and trap filters (:mod:`.pages`), the crawl.log line (which
   this process appends to crawl.log), WARC records when asked (in the fetcher's own WARC
   files). The URL's queue is released as the fetcher answers
   (:meth:`WorkQueueFrontier.release`): it hands out its next URL once its politeness delay
   has passed, while this one keeps its slot and stays pending until the flush.
4. **the record**: the fetch's fields and the page's, encoded here. A redirect's target is a
   discovered URL with hop ``R`` (same layer; at most :data:`MAX_TRAILING_REDIRECTS` in a row).
5. **flush**, in batches (every :attr:`CrawlConfig.flush_interval` seconds, or sooner once
   :attr:`CrawlConfig.flush_pages` pages or a quarter of the slots wait): the pages' new
   links are scheduled through the frontier (which canonicalises and dedupes them through the
   Visited table), their records are written to the ``fetched`` database, then their
   completions are committed, in the commit order of :class:`~.flush.Committer`, which says
   what a kill -9 can cost.

A cluster worker (:mod:`pycrawler.cluster`, a ``LinkExchange`` given to :class:`Crawler`) has a
:class:`~.cluster_side.ClusterSide`: the links to other workers' hosts leave through the
exchange at each flush, the URLs other workers sent are scheduled at the depth and with the via
they were found with, a polled URL whose host moved is forwarded instead of fetched, and the
crawl ends when the whole cluster is idle.

Stopping: :meth:`Crawler.stop` (SIGINT or SIGTERM in :meth:`Crawler.run`) stops polling,
lets the fetches in flight finish for :attr:`CrawlConfig.grace` seconds, cancels the rest
(they stay in the frontier and are handed out again by the next run), flushes and closes
every store; a second signal cancels the fetches in flight at once (:meth:`Crawler.stop_now`)
and still flushes what finished. A signal during start-up or close stops the run too
(:mod:`.stop_signals`): start-up unwinds at once, a close finishes first. Free space under the state and output folders below
:attr:`CrawlConfig.min_free_mb` stops the crawl the same graceful way, and :meth:`Crawler.run`
then raises :class:`~pycrawler.errors.DiskFull`; a failed write (the disk full after all, an
I/O error) or a failed JE commit stops it at once, commits nothing more, and is raised.

State folder: one JE environment (the frontier's ``pending``, ``queues``, ``retries``,
``frontier_meta``; ``visited`` for ``--seen exact``; ``fetched``: URL (StringBinding) ->
CrawlUrl record (binding ``crawl_url``); ``robots``; ``crawl_log_mark``: crawl.log's length at the
last commit, which every open checks the state against (:mod:`.state_check`); a cluster worker's
``outbox`` and ``forwarded``), ``crawl.log``, ``crawl.log.committed`` (that length again, outside
JE), ``crawl.json`` (the settings a resumed crawl must keep, and the seeds added while it ran), ``visited.bloom`` or
``drum/`` (DRUM's bucket files; its repository is ``drum.blocks`` and ``drum.meta`` of the
environment, and ``visited_marks`` logs the Bloom file's marks until they are made) for the
other Visited tables, each bound to the environment's transactions (docs/frontier.md).
``pycrawler heritrix import`` writes such a folder from a Heritrix crawl
(:mod:`pycrawler.heritrix.migrate`).

Kept settings (:data:`KEPT_SETTINGS`): the Visited table, the queue policy, the
canonicaliser and the seen-key scheme. A setting left unset (None) takes the folder's value
from ``crawl.json``, else its default (:data:`SETTING_DEFAULTS`; the canonicaliser defaults
to the seen-key scheme's own, ``heritrix`` for ``heritrix`` keys, else ``safe``); one set to
another value than the folder's is refused.

The crawl is built from objects, each with one job: the settings and the run's summary
(:mod:`.settings`), the URLs in process and finished (:class:`~.inflight.InFlight`), how a URL
was found and its links scheduled (:mod:`.discovery`), the flush's commit
(:class:`~.flush.Committer`) and a cluster worker's exchange of links
(:class:`~.cluster_side.ClusterSide`); this module runs the loop that polls, fetches, hands
pages to the page workers and flushes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .. import failpoints, jvm
from ..atomic_write import write_atomically
from ..cluster.protocol import Link, LinkExchange
from ..errors import BadInput, PycrawlerError
from ..fetch import ALLOWED, FetchConfig, RobotsCache, user_agent
from ..fetch import status as fetch_status
from ..fetch.robots import host_key
from ..frontier.politeness import Outcome
from ..frontier.todo import JE_CONFIG
from ..frontier.workqueues import WorkQueueFrontier
from ..keys.schemes import get_seen_key_scheme
from ..parse.links import Hop, Outlink, PathRepetitionRule, trailing_redirects
from ..records.crawl_url import CrawlUrl
from ..seen.tables import open_visited
from ..store import Environment, je_choice
from .cluster_side import RECEIVE_INTERVAL, ClusterSide
from .discovery import LinkScheduler, discovery
from .diskspace import DiskSpaceMonitor
from .fetchers import Fetched, FetchEnded, FetcherPool, FetcherSetup, FetchTask, RobotsFetches, default_fetchers
from .flush import Committer
from .forwarded import Forwarded
from .inflight import Finished, InFlight
from .outbox import Outbox
from .outputs import CrawlOutputs
from .pages import LinkPolicy
from .progress import Progress
from .scope import Scope, check_seeds, server
from .settings import JE_CACHE_MB, KEPT_SETTINGS, SETTING_DEFAULTS, SETTINGS_FILE, CrawlConfig, CrawlSummary
from .state_check import LogMark, check_state, require_crawl_folder
from .stats_log import StatsLog
from .stop_signals import CLOSING, Interrupted, StopSignals

MAX_TRAILING_REDIRECTS = 5
"""Redirects (HTTP or meta refresh) followed in a row before the chain is dropped (RFC 9309's 5 hops)."""

FETCHED, ROBOTS = "fetched", "robots"
CRAWL_LOG = "crawl.log"
ADDED_SEEDS = "added_seeds"
"""crawl.json's list of the seeds added while the crawl ran (the console's), kept across resumes."""
QUEUE_BUDGET = "queue_budget"
"""crawl.json's queue budget (:attr:`CrawlConfig.queue_budget`), kept until a command names another."""

TRANSIENT_STATUSES = frozenset({fetch_status.CONNECT_FAILED, fetch_status.CONNECT_LOST, fetch_status.TIMEOUT,
                                fetch_status.ROBOTS_PREREQUISITE_FAILURE, 408, 429, 500, 502, 503, 504})
"""Fetch outcomes retried later (with the politeness backoff, up to its retry budget)."""


def is_transient(status: int) -> bool:
    return status in TRANSIENT_STATUSES


def fetch_outcome(fetched: FetchEnded | Fetched, crawl_delay: float | None = None, requested: bool = True) -> Outcome:
    """What the URL's queue turns around on after ``fetched`` (``requested``: see :class:`Outcome`)."""
    status, seconds = fetched.status, fetched.duration_ms / 1000
    transient = is_transient(status)
    kind = Outcome.retry if transient else Outcome.success if status > 0 else Outcome.failure
    retry_after = fetched.retry_after if transient else None
    return kind(seconds, crawl_delay=crawl_delay, status_code=status, retry_after=retry_after, requested=requested)


@dataclasses.dataclass(slots=True)
class Fetch:
    """A fetch that is over, its page worked on by its fetcher: what the fetcher sent, the
    outcome its queue turns around on, and crawl.log's hop path and via of the URL."""

    fetched: Fetched
    outcome: Outcome
    hop_path: str
    via: str
    replayed: bool = False  # read back from the WARC files (:mod:`.state_check`), not fetched


class Crawler:
    """Runs a :class:`CrawlConfig`'s crawl (:meth:`run`), resumable from its state folder."""

    def __init__(self, config: CrawlConfig, exchange: LinkExchange | None = None, console=None):
        """``exchange``: the cluster this crawl is a worker of (:mod:`pycrawler.cluster`), or
        None for a crawl on its own; the caller starts and closes it. ``console``: served
        on the crawl's loop while it runs (:class:`pycrawler.console.server.CrawlConsole`)."""
        self.config = config
        self.exchange = exchange
        self.console = console
        seeds = config.seeds
        check_seeds(seeds)
        if config.concurrency < 1:
            raise BadInput("--concurrency must be at least 1")
        if config.max_depth is not None and config.max_depth < 0:
            raise BadInput("--max-depth cannot be negative")
        self.url_cache = None
        self.robots: RobotsCache | None = None  # once the fetcher is open
        self.gateway = None  # the py4j gateway of --serve
        self.stats_log = None  # --stats
        if config.url_cache:
            from ..seen.cache import cache_from_spec
            self.url_cache = cache_from_spec(config.url_cache)  # refuses a bad spec before anything opens
        self.scope = Scope.of(config.scope, seeds)
        self.path_rule = PathRepetitionRule()
        self.summary = CrawlSummary(url_cache=config.url_cache)
        self.added_seeds: list[str] = []  # crawl.json's, then the console's: scheduled like the command's
        self._stopping = False
        self.paused = False  # the console's pause: no new fetch starts
        self.in_flight = InFlight(config.concurrency, config.max_pages, config.flush_pages)
        self.committer: Committer | None = None  # built once the stores are open
        self.replays = None  # the fetches a damaged state lost (:mod:`.state_check`)
        self.cluster: ClusterSide | None = None  # a cluster worker's
        self._repeats = 0  # links the page workers dropped as passed on before (dupes avoided)
        self._sitemap_hosts: set[str] = set()  # hosts whose robots.txt sitemaps this run scheduled
        self._wakeup: asyncio.Event | None = None
        self._flush_due: asyncio.Event | None = None
        self._tasks: set[asyncio.Task] = set()
        self._records_before = 0
        self._failure: BaseException | None = None   # commits nothing more; raised by run()
        self._stop_reason: PycrawlerError | None = None  # a graceful stop that run() raises

    # -- the state folder -------------------------------------------------------------------------
    def _check_settings(self, state: Path) -> None:
        """Bind the state folder to the settings its stores depend on: fill the unset ones
        from ``crawl.json`` (else the defaults), refuse a mismatch, write them back; take the
        seeds earlier runs had added (:meth:`add_seeds`) in, scope included."""
        path = state / SETTINGS_FILE
        stored = json.loads(path.read_text()) if path.is_file() else {}
        chosen = {}
        for name in KEPT_SETTINGS:
            value = getattr(self.config, name)
            if value is not None and stored.get(name, value) != value:
                raise BadInput(f"{state} holds a crawl made with {name.replace('_', '-')} {stored[name]!r}; "
                               f"resume it with the same setting (got {value!r}) or use another --state")
            chosen[name] = value if value is not None else stored.get(name, SETTING_DEFAULTS.get(name))
        chosen["canon"] = get_seen_key_scheme(chosen["seen_key"]).canonicalizer_for(chosen["canon"])
        # The budget is the state's until a command names another: a higher one wakes the retired queues.
        budget = self.config.queue_budget
        budget = (stored.get(QUEUE_BUDGET) if budget is None else budget) or None
        self.config = dataclasses.replace(self.config, **chosen, queue_budget=budget)
        self.added_seeds = [url for url in stored.get(ADDED_SEEDS, []) if url not in self.config.seeds]
        self.scope = self._seeds_scope()
        self._settings = chosen | {"seeds": self.config.seeds} | ({QUEUE_BUDGET: budget} if budget else {})
        self.summary.queue_budget = budget
        self._write_settings()
        failpoints.hit("crawl.settings_written")

    def _write_settings(self) -> None:
        """crawl.json: the kept settings, the command's seeds and the seeds added while the crawl
        ran (:meth:`add_seeds`), written whole or not at all (write, fsync, rename)."""
        written = self._settings | ({ADDED_SEEDS: self.added_seeds} if self.added_seeds else {})
        write_atomically(Path(self.config.state) / SETTINGS_FILE, json.dumps(written, indent=1) + "\n")

    def _open(self, stack: contextlib.ExitStack) -> None:
        """Open the state folder's stores and the outputs, then build the objects that use them;
        the stats log is closed by ``stack``, whichever way the run ends."""
        config = self.config
        state = Path(config.state)
        require_crawl_folder(state)  # before anything is written into it
        user_agent(config.contact_url)  # a contact no user agent can carry is refused here, not by each fetcher
        state.mkdir(parents=True, exist_ok=True)
        self._check_settings(state)
        config = self.config  # the kept settings resolved
        written = [state, *(Path(p) for p in (config.warc, config.trace and Path(config.trace).parent) if p)]
        for folder in written:
            folder.mkdir(parents=True, exist_ok=True)
        self.disk = DiskSpaceMonitor(written, config.min_free_mb)
        if shortage := self.disk.shortage():  # before JE opens: JE 7 would refuse first, in its own words
            raise shortage
        if config.stats is not None:  # before JE opens too: a bad path is refused with nothing to undo
            self.stats_log = stack.enter_context(contextlib.closing(StatsLog(config.stats, state)))
        # The fetchers' interpreters start while the JVM and JE do (a third of a second each).
        self.fetchers = FetcherPool(config.fetchers or default_fetchers())
        stack.callback(self.fetchers.abandon)
        je_choice.start_for(state)  # on the JE that reads the state (a new one: the JE of new stores)
        self._signals.claim()
        policy = config.queue_policy
        if policy == "bkdr":  # one site spread over enough queues to keep every slot busy
            policy = f"bkdr:{4 * config.concurrency}"
        # JE 7's own free-space floor sits below the crawl's, so the crawl's stop comes first.
        je_config = JE_CONFIG | {"je.freeDisk": str(config.min_free_mb << 19)} if jvm.je_major() >= 7 else JE_CONFIG
        # The Visited table's default, at most JE's own default share of the heap (60%; JE refuses
        # a cache larger than the heap): a PYCRAWLER_HEAP of the user's own may be smaller.
        cache_mb = config.je_cache_mb or min(JE_CACHE_MB[config.seen], jvm.max_heap_mb() * 60 // 100)
        self.env = Environment(state, create=True, durability="write_no_sync", cache_size=cache_mb << 20,
                               config=je_config)
        try:
            self.visited = open_visited(config.seen, self.env, state, bloom_capacity=config.bloom_capacity)
            if self.url_cache is not None:
                from ..seen.cached import cached
                self.visited = cached(self.visited, self.url_cache)
            self.frontier = WorkQueueFrontier(self.env, self.visited, create=True, assignment=policy,
                                              seen_key=config.seen_key, canonicalizer=config.canon,
                                              politeness=config.politeness, queue_budget=config.queue_budget,
                                              prefetch=16)
            self.fetched = self.env.open_database(FETCHED, create=True)
            self.robots_db = self.env.open_database(ROBOTS, create=True)
            self.log_mark = LogMark(self.env, state)
            self.log_mark.require_log(state / CRAWL_LOG)  # before the outputs create it
            outbox = Outbox(self.env) if self.exchange is not None else None
            forwarded = Forwarded(self.env) if self.exchange is not None else None
        except BaseException:
            self.env.close()
            raise
        self._records_before = self.fetched.count()
        try:
            self.outputs = CrawlOutputs(state / CRAWL_LOG, config.warc, config.trace, fsync=config.fsync,
                                        progress=config.progress)
        except BaseException:
            self._close_stores()
            raise
        self.summary.repairs = self.outputs.repairs
        try:
            self.replays = check_state(state, self.log_mark, state / CRAWL_LOG, config.warc, repair=config.repair,
                                       is_transient=is_transient, seen=config.seen)
            self.gateway = None if config.serve is None else self._serve(config.serve)
        except BaseException:
            self.outputs.close()
            self._close_stores()
            raise
        self.schedule = LinkScheduler(self.frontier, self.stats_log)
        self.committer = Committer(self.env, self.frontier, self.fetched, self.outputs, self.schedule,
                                   str(config.state), self.log_mark, self.stats_log, self.exchange, outbox, forwarded)
        if self.exchange is not None:
            self.cluster = ClusterSide(self.exchange, self.frontier, self.in_flight, self.schedule, self.committer,
                                       outbox, forwarded, pages_fetched=self._pages_fetched)

    def _serve(self, port: int):
        """Serve the crawl's environment to other processes (``store ls/dump``, ``frontier
        stats``, ``heritrix journal`` on its address) while it runs: their calls run on py4j's
        threads in this JVM, against committed data, and take no Python lock, so they hold the
        crawl up only by JE's own record locks, each kept for one read."""
        from ..store.gateway_server import Gateway

        gateway = Gateway(self.env, port=port)
        print(f"pycrawler crawl: serving {self.config.state} at {gateway.address}", file=sys.stderr, flush=True)
        return gateway

    def _close(self) -> None:
        """Close outputs and stores. After a failure the stores are left as a kill -9 at that
        moment would leave them, which the next run recovers from: closing writes (JE's
        checkpoint, the Visited table's files), and on a full disk such a write would be torn."""
        self.outputs.close()
        failpoints.hit("crawl.close.outputs_closed")
        if self.gateway is not None:  # before the stores: nobody else reads or writes them from here on
            self.gateway.close()
        with contextlib.suppress(Exception):  # counts for the summary
            if self._failure is None:   # what DRUM still holds is enqueued now, as the close would: counted
                self.frontier.flush()
            self.summary.pending = len(self.frontier)
            retired = self.frontier.stats()["by_state"]["retired"]
            self.summary.retired_queues, self.summary.retired_urls = retired["queues"], retired["urls"]
            self.summary.records = self.fetched.count()
        if self.url_cache is not None:
            self.summary.cache_hits, self.summary.cache_misses = self.url_cache.hits, self.url_cache.misses
        if self.replays is not None:
            self.summary.repairs.append(self.replays.line())
            if self.replays.fetches and self._failure is None and self.summary.pending == 0:  # never handed out
                self.log_mark.settle((Path(self.config.state) / CRAWL_LOG).stat().st_size)
        if self.stats_log is not None:
            with contextlib.suppress(Exception):  # the last line; a failed crawl's stores may not answer
                self.stats_log.write(self)
        if self._failure is None:
            self._close_stores()  # the frontier's close resolves what DRUM still holds
        self._count_links()
        self.summary.store_bytes = sum(f.stat().st_size for f in Path(self.config.state).glob("*.jdb"))

    def _close_stores(self) -> None:
        self.frontier.close()
        failpoints.hit("crawl.close.frontier_closed")
        self.visited.close()
        self.log_mark.close()
        self.env.close()

    # -- running ----------------------------------------------------------------------------------
    def run(self, signals: StopSignals | None = None) -> CrawlSummary:
        """Crawl until the frontier is empty, ``max_pages`` is reached or a signal; then close.

        ``signals``: the caller's :class:`StopSignals`, already entered, when its own start-up
        is to be covered too (the CLI's joining of a cluster). Raises what stopped the crawl
        otherwise (:class:`~pycrawler.errors.DiskFull`, a failed write or commit,
        :class:`Interrupted` for a signal during start-up or close), after closing;
        :attr:`summary` still tells what the run did."""
        with contextlib.ExitStack() as stack:
            self._signals = signals or stack.enter_context(StopSignals())
            self._open(stack)
            started = time.perf_counter()
            try:
                asyncio.run(self._crawl())
            finally:
                self._signals.closing()
                self.summary.seconds = time.perf_counter() - started
                self._close()
        if self._failure is not None or self._stop_reason is not None:
            raise self._failure or self._stop_reason
        if self.summary.signal is None and self._signals.caught is not None:
            raise Interrupted(self._signals.caught, CLOSING)
        return self.summary

    def stop(self) -> None:
        """Stop gracefully (see the module docstring); safe to call from a signal handler on the loop."""
        self._stopping = True
        self.summary.interrupted = True
        if self._wakeup is not None:
            self._wakeup.set()

    def pause(self) -> None:
        """Start no new fetch; the fetches in flight finish and their pages are committed."""
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self._wakeup.set()

    def add_seeds(self, urls: list[str]) -> None:
        """Schedule more seeds (from the loop's thread), through the cluster when a worker. They
        are written into crawl.json first, so a resume schedules them again, like the command's
        own seeds, whether or not the frontier had committed them before the crawl stopped."""
        new = [url for url in dict.fromkeys(urls) if url not in self.config.seeds and url not in self.added_seeds]
        if new:
            self.added_seeds += new
            self._write_settings()
            self._widen_scope()
        self._schedule_found([Link(url, 0, "", None) for url in urls])

    def _seeds_scope(self) -> Scope:
        return Scope.of(self.config.scope, self.config.seeds + self.added_seeds)

    def _widen_scope(self) -> None:
        """The scope of the command's seeds and the added ones, as a resume will have it: an
        added seed's links are followed as a command-line seed's are. The fetchers take it for
        the pages they fetch from now on."""
        scope = self._seeds_scope()
        if scope != self.scope:
            self.scope = scope
            self.link_policy = dataclasses.replace(self.link_policy, scope=scope)
            self.fetchers.use_policy(self.link_policy)

    def stop_now(self) -> None:
        """Stop without waiting for the fetches in flight: they are cancelled and stay pending;
        what finished is still flushed."""
        self.stop()
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()

    def _on_signal(self, signum: int) -> None:
        """The first SIGINT or SIGTERM stops gracefully, a second one at once."""
        if self.summary.signal is None:
            self.summary.signal = signum
            self.stop()
        else:
            self.stop_now()

    def _fail(self, exc: BaseException) -> None:
        """Stop at once for a failed write or commit; nothing more is committed."""
        if self._failure is None:
            self._failure = exc
        self.stop_now()

    async def _crawl(self) -> None:
        config = self.config
        loop = asyncio.get_running_loop()
        self._wakeup, self._flush_due = asyncio.Event(), asyncio.Event()
        self._signals.running(loop, self._on_signal)
        self.link_policy = LinkPolicy(self.scope, config.max_depth, self.path_rule, config.embeds,
                                      outlinks=bool(config.warc or config.trace))
        fetch_config = FetchConfig(contact_url=config.contact_url, connections=max(64, config.concurrency * 2),
                                   connections_per_host=config.concurrency, **config.fetch)
        setup = FetcherSetup(self.link_policy, fetch_config, sitemaps=config.sitemaps, warc=config.warc,
                             fsync=config.fsync, trace=config.trace is not None)
        self.fetchers.serve(setup)
        self.progress = Progress(enabled=config.progress)
        try:
            if self.console is not None:
                await self.console.start(self)
            await self.fetchers.warm_up()
            politeness = config.politeness  # robots.txt is retried as its URLs are: they wait in step
            # robots.txt is fetched by the fetchers too (each host's once), its result sent back whole.
            self.robots = RobotsCache(RobotsFetches(self.fetchers), store=self.robots_db, reading=config.robots,
                                      retry_delay=politeness.retry_delay,
                                      max_retry_delay=politeness.max_retry_delay,
                                      max_failures=politeness.max_retries + 1)
            seeds = [Link(seed, 0, "", None) for seed in config.seeds + self.added_seeds]
            if self.cluster is not None:
                seeds = self.cluster.start(seeds)
            self.schedule(seeds)
            flusher = asyncio.create_task(self._flusher())
            try:
                await self._dispatch()
                await self._drain()
            finally:
                flusher.cancel()
                self._flush()
        finally:
            self._signals.closing()
            if self.console is not None:
                await self.console.close()
            await self.fetchers.close()
            self.progress.close()

    def _done(self) -> int:
        """URLs fetched or refused in the state folder, earlier runs' included."""
        summary = self.summary
        return self._records_before + summary.fetched + summary.failed + summary.precluded

    def _pages_fetched(self) -> int:
        """Pages that got an HTTP answer in the state folder, earlier runs' included."""
        return self._records_before + self.summary.fetched

    async def _dispatch(self) -> None:
        """Hand URLs to fetch tasks until the crawl is over or stopped."""
        frontier, in_flight, cluster = self.frontier, self.in_flight, self.cluster
        while not self._stopping:
            self._wakeup.clear()
            if self.paused:
                await self._wakeup.wait()
                continue
            room = in_flight.room(self._done())
            wait = None
            if room > 0:
                batch, wait = frontier.poll(room)
                for record in batch if cluster is None else cluster.kept(batch):
                    in_flight.start()
                    task = asyncio.create_task(self._process(record))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                if batch:
                    continue
            if in_flight.idle:
                if room <= 0:
                    return  # max_pages reached
                frontier.refill()  # an asynchronous Visited table may still hold new URLs
                if frontier.wait_time() is None:
                    if cluster is None or cluster.report(idle=True):
                        return
                    wait = RECEIVE_INTERVAL
                else:
                    wait = frontier.wait_time()
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout=wait)
            except TimeoutError:
                pass

    async def _drain(self) -> None:
        """Let the fetches in flight finish (up to ``grace`` seconds when stopping), flushing them."""
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=self.config.grace if self._stopping else None)
            for task in late:  # their URLs stay in the frontier: the next run fetches them
                task.cancel()
            if late:
                await asyncio.wait(late)

    # -- flushing ---------------------------------------------------------------------------------
    async def _flusher(self) -> None:
        """Flush finished pages every ``flush_interval`` seconds, or sooner when ``flush_pages``
        (or a quarter of the slots) wait; stop the crawl when the disk runs low or anything
        here fails."""
        try:
            await self._flush_and_watch()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a dead flusher would leave the crawl waiting forever
            self._fail(exc)

    async def _flush_and_watch(self) -> None:
        interval, shown = self.config.flush_interval, 0.0
        while True:
            try:
                await asyncio.wait_for(self._flush_due.wait(), timeout=interval)
            except TimeoutError:
                pass
            self._flush_due.clear()
            if self.cluster is not None and self.cluster.receive():
                self._wakeup.set()
            if self.in_flight.waiting:
                self._flush()
                self._wakeup.set()
            if self._stop_reason is None and (shortage := self.disk.shortage()):
                self._stop_reason = shortage
                self.stop()
            if self.stats_log is not None:
                self.stats_log.tick(self)
            if self.progress.enabled and time.monotonic() - shown >= 1.0:
                shown = time.monotonic()
                self._show_progress()

    def _show_progress(self) -> None:
        stats = self.frontier.stats()["by_state"]
        self.progress.update(queues_ready=stats["ready"]["queues"], queues_snoozed=stats["snoozed"]["queues"],
                             pending=len(self.frontier), seen=self.frontier.totals["enqueued"])
        if self.url_cache is not None:
            self.progress.update(cache_hits=self.url_cache.hits, cache_misses=self.url_cache.misses)

    def _flush(self) -> None:
        """Commit the finished pages (:meth:`Committer.commit`); after a failure, commit
        nothing: the pages stay pending."""
        finished = self.in_flight.take_finished()
        if not finished:
            return
        if self._failure is None:
            try:
                self.committer.commit(finished)
            except Exception as exc:  # whatever failed, what follows must not commit
                self._fail(exc)
        self.in_flight.flushed(finished)

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

    async def _process(self, record: CrawlUrl) -> None:
        worker = self.in_flight.worker()
        released = False

        def release(outcome: Outcome) -> None:
            """The queue turns around as the fetch ends, not after the page's work (its fetcher
            says so first): with one connection a host, its next fetch overlaps this page's parse."""
            nonlocal released
            self._release(record.ori_url, outcome)
            released = True

        try:
            try:
                replay = self.replays.take(record.ori_url) if self.replays is not None else None
                fetch = (await self._replay(record, worker, replay, release) if replay is not None
                         else await self._fetch(record, worker, release))
                if isinstance(fetch, Finished):  # refused without a fetch (robots.txt)
                    finished = fetch
                else:
                    finished = self._work(record, worker, fetch)
            except (asyncio.CancelledError, PycrawlerError):
                raise
            except Exception as exc:  # a bug on one URL must not stop the crawl: -5 records it
                finished = self._broken(record, worker, exc)
        except asyncio.CancelledError:
            self.in_flight.abandon()
            raise
        except PycrawlerError as exc:  # an output (or a store) failed: the URL stays pending, the crawl stops
            self.in_flight.abandon()
            self._fail(exc)
            return
        finally:
            self.in_flight.free(worker)
        if not released:
            self._release(finished.url, finished.outcome)
        if self.in_flight.finish(finished):
            self._flush_due.set()

    def _release(self, url: str, outcome: Outcome) -> None:
        """The URL's queue may hand out its next URL now (after its delay); the URL stays
        pending, and in this run's count of URLs in process, until the flush commits its
        completion (a processing that raises after it keeps the fetch's outcome)."""
        self.frontier.release(url, outcome)
        self._wakeup.set()

    def _schedule_sitemaps(self, url: str) -> None:
        """At the first URL of a host in this run, schedule the sitemaps its robots.txt names
        (in scope), hop ``M`` from robots.txt at layer 0: a sitemap is a manifest of the site,
        as a seed is its start. Once a run, not once a crawl: the seen table drops those a run
        before scheduled, and a run killed before their schedule committed schedules them again.
        A host whose robots.txt has not answered yet is asked again at its next URL."""
        host = host_key(url)
        if host in self._sitemap_hosts:
            return
        policy = self.robots.known(host)
        if policy is None or not policy.valid:  # robots.txt ignored, or no answer yet
            return
        self._sitemap_hosts.add(host)
        robots_url = f"{host}/robots.txt"
        links = [Link(sitemap, 0, Hop.MANIFEST.value, robots_url) for sitemap in policy.sitemaps
                 if server(sitemap) is not None and self.scope.allows(sitemap) and not self.path_rule.rejects(sitemap)]
        if links:
            self._schedule_found(links)

    def _schedule_found(self, links: list[Link]) -> None:
        """Schedule ``links`` now, outside a flush (through the cluster when a worker)."""
        self.schedule(self.exchange.add(links) if self.exchange is not None else links)
        self._wakeup.set()

    def _broken(self, record: CrawlUrl, worker: int, exc: Exception) -> Finished:
        """A URL whose processing raised: logged and recorded as Heritrix's -5 (runtime exception)."""
        hop_path, via = discovery(record)
        code = fetch_status.RUNTIME_EXCEPTION
        self.outputs.log_line(status=code, url=record.ori_url, hop_path=hop_path, via=via, worker=worker,
                              annotations=[f"err={type(exc).__name__}"])
        record.status_code = code
        self.summary.failed += 1
        self.summary.statuses[code] += 1
        return Finished.failed(record, hop_path, code)

    async def _fetch(self, record: CrawlUrl, worker: int, release: Callable[[Outcome], None]) -> Fetch | Finished:
        """The URL's fetch and its outcome (``release`` called with it as the fetch ends), or,
        when robots.txt refuses it, the URL finished."""
        url = record.ori_url
        hop_path, via = discovery(record)
        summary = self.summary
        verdict = await self.robots.verdict(url)
        if self.config.sitemaps:
            self._schedule_sitemaps(url)
        if verdict != ALLOWED:
            self.outputs.log_line(status=verdict, url=url, hop_path=hop_path, via=via, worker=worker)
            record.status_code = verdict
            record.last_update_time = time.time_ns()
            summary.statuses[verdict] += 1
            if verdict == fetch_status.ROBOTS_PRECLUDED:
                summary.precluded += 1
                return Finished.failed(record, hop_path, verdict)
            if self.robots.gave_up(url):  # robots.txt failed as often as a page may: the URL ends with -61
                summary.failed += 1
                return Finished.failed(record, hop_path, verdict)
            return Finished.retry(record, hop_path, verdict)  # the host is disallowed for now: the URL waits

        task = FetchTask(0, url, record.layer, hop_path, via, worker)
        fetched, outcome = await self._fetched(task, release, crawl_delay=self.robots.crawl_delay(url))
        return Fetch(fetched, outcome, hop_path, via)

    async def _replay(self, record: CrawlUrl, worker: int, replay, release: Callable[[Outcome], None]) -> Fetch:
        """A fetch a damaged state lost, read back from a WARC file: its page worked on by a fetcher."""
        hop_path, via = discovery(record)
        task = FetchTask(0, record.ori_url, record.layer, hop_path, via, worker, replay)
        fetched, outcome = await self._fetched(task, release, requested=False)
        return Fetch(fetched, outcome, hop_path, via, replayed=True)

    async def _fetched(self, task: FetchTask, release: Callable[[Outcome], None], **how) -> tuple[Fetched, Outcome]:
        """``task``'s answer from a fetcher, and its outcome (:func:`fetch_outcome` with ``how``),
        which ``release`` is given as the fetch ends, ahead of the answer."""
        outcome = None

        def ended(end: FetchEnded | Fetched) -> None:
            nonlocal outcome
            outcome = fetch_outcome(end, **how)
            release(outcome)

        fetched = await self.fetchers.fetch(task, ended)
        return fetched, outcome

    def _work(self, record: CrawlUrl, worker: int, fetch: Fetch) -> Finished:
        """What a fetch gives: the record's fields and the page's links (from its fetcher), the
        summary's counts, crawl.log's line and the trace's outlinks."""
        fetched, hop_path, summary = fetch.fetched, fetch.hop_path, self.summary
        status = fetched.status
        if fetched.error is not None:  # the fetcher's WARC file failed: the URL stays pending, the crawl stops
            self.outputs.failed_elsewhere(*fetched.error)
        if not fetch.replayed:  # a replay was counted by the run that fetched it
            summary.statuses[status] += 1
            self.progress.fetched(status, fetched.size)
            self.progress.tick()
            if status > 0:
                summary.fetched += 1
                summary.bytes += fetched.size
            else:
                summary.failed += 1
        fetched.record.copy_to(record)
        page = fetched.page
        if page is not None:
            if fetched.sitemap:
                if page.sitemap is not None:
                    summary.sitemaps += 1
                    summary.sitemap_urls += page.extracted - page.refused
                    summary.sitemap_refused += page.refused
                    summary.sitemaps_truncated += page.truncated
            else:
                page.record_on(record)
            links = list(zip(page.links, page.hops))  # the fetchers send a list and a string: less to pickle
            if trailing_redirects(hop_path) >= MAX_TRAILING_REDIRECTS:
                # a meta refresh is a redirect: a chain of them ends where one of HTTP redirects does
                links = [(target, hop) for target, hop in links if hop != Hop.REDIRECT.value]
            summary.links += page.extracted
            summary.out_of_scope += page.rejected
            self._repeats += page.repeats
        else:
            links = []
        record.type = fetched.media
        if fetched.redirect is not None:
            target = fetched.redirect
            if (trailing_redirects(hop_path) < MAX_TRAILING_REDIRECTS and self.scope.allows(target)
                    and not self.path_rule.rejects(target)):
                links.append((target, Hop.REDIRECT.value))
        finished = Finished.fetched(record, hop_path, links, fetch.outcome)  # the record encoded before the outputs see the fetch
        parsed = page.outlinks if page is not None else None  # a list only when the trace asks
        outlinks = [Outlink(u, Hop(h), c) for u, h, c in parsed] if parsed is not None else None
        if not fetch.replayed:  # its crawl.log line and WARC records are there already
            self.outputs.fetched(fetched.line, outlinks=outlinks)
        return finished
