"""The console's figures: one JSON document the page polls and ``/metrics`` reads.

:class:`Figures` holds what a running and a stopped crawl share (the crawl.log reports of
:mod:`.crawl_log`); :class:`LiveFigures` adds a running crawl's counters, read from the
:class:`~pycrawler.crawl.engine.Crawler` on its own event loop (no lock needed: the console
runs on that loop too). A snapshot is made at most once a second, however many pages and
scrapers ask: it costs one JE statistics call (counters only), a walk of the frontier's
queues in Python memory (no JE read) and a listing of the state folder.

The snapshot's fields (docs/console.md says what each means): ``mode``, ``state``,
``paused``, ``stopping``, ``counts``, ``rates``, ``codes``, ``mime``, ``seen_table`` (with
the table's own figures: DRUM's rounds, the Bloom filter's fill), ``robots`` (hosts by what
their robots.txt says), ``je``, ``disk``, ``workers``, ``queues`` and ``history`` (the
chart's series). The reports are asked for apart: the frontier's largest queues, the hosts
(with their robots.txt's standing) and a cluster worker's cluster.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..crawl.diskspace import free_bytes
from ..crawl.scope import seed_problem
from ..fetch.robots import AGENT, RobotsPolicy, host_key
from .crawl_log import LogTally, tail

MB = 1 << 20
REFRESH_SECONDS = 1.0
"""A snapshot or report is made again at most this often."""

TICK_SECONDS = 2.0
"""crawl.log is tallied this often (its lines carry their own times: a less frequent read
changes no figure, only how late it shows)."""

QUEUE_COLUMNS = ("queue", "state", "pending", "fetched", "next_fetch")

RATE_WINDOW = 10
"""Seconds the 'now' rates are averaged over."""


def je_log_bytes(state: Path) -> int:
    return sum(f.stat().st_size for f in Path(state).glob("*.jdb"))


def seed_refusal(url: str, canonicalizer) -> str | None:
    """Why ``url`` cannot be a seed of a crawl canonicalising with ``canonicalizer`` (a
    :class:`~pycrawler.keys.canon.Canonicalizer`), or None when it can: the command line's
    reasons (:func:`~pycrawler.crawl.scope.seed_problem`), then the crawl's canonicaliser."""
    if (problem := seed_problem(url)) is not None:
        return problem
    if canonicalizer.many([url])[0] is None:
        return f"the crawl's canonicaliser ({canonicalizer.name}) refuses it"
    return None


def robots_hosts(host: str) -> list[str]:
    """The robots.txt hosts (:func:`~pycrawler.fetch.robots.host_key`) crawl.log's ``host[:port]``
    may stand for: its http and https servers."""
    return [host_key(f"{scheme}://{host}/") for scheme in ("http", "https")]


class Cached:
    """A value made again only once :data:`REFRESH_SECONDS` have passed since the last time."""

    def __init__(self, make, clock=time.monotonic):
        self.make, self.clock = make, clock
        self._made: dict = {}

    def __call__(self, *args):
        at, value = self._made.get(args, (None, None))
        now = self.clock()
        if at is None or now - at >= REFRESH_SECONDS:
            value = self.make(*args)
            self._made[args] = (now, value)
        return value


class Figures:
    """What every console shows: the state folder, and crawl.log's reports (:class:`LogTally`)."""

    mode = ""
    can_act = False

    def __init__(self, state: Path, tally: LogTally):
        self.state, self.tally = Path(state), tally
        self.snapshot = Cached(self._snapshot)
        self.frontier = Cached(self._frontier)
        self.cluster = Cached(self._cluster)

    def tick(self) -> None:
        """Tally what crawl.log gained (a running crawl flushes it at every commit)."""
        self.tally.read()

    def hosts(self, limit: int) -> list[dict]:
        """crawl.log's busiest hosts, each with what its robots.txt says (``robots``: a
        :data:`~pycrawler.fetch.robots.ROBOTS_STANDINGS`, ``robots_code`` the status of its
        fetch), or None for both when the crawl holds none for it; and its queue's budget:
        ``budget_used``, the fetches its work queue counts (None when the queue policy gives a
        host no queue of its own), ``budget_left``, what ``--queue-budget`` leaves it (None
        without a budget)."""
        rows = self.tally.host_rows(limit)
        budget = self._queue_budget()
        for row in rows:
            policy = next(filter(None, map(self._robots, robots_hosts(row["host"]))), None)
            row["robots"] = None if policy is None else policy.standing(AGENT)
            row["robots_code"] = None if policy is None else policy.status
            used = row["budget_used"] = self._queue_fetched(row["host"])
            row["budget_left"] = None if used is None or budget is None else max(budget - used, 0)
        return rows

    def _robots(self, host: str) -> RobotsPolicy | None:
        """The robots.txt policy the crawl holds for ``host``, if any."""
        return None

    def _queue_budget(self) -> int | None:
        """The crawl's ``--queue-budget``, None for none."""
        return None

    def _queue_fetched(self, host: str) -> int | None:
        """Fetches the work queue of ``host`` counts (:meth:`WorkQueueFrontier.host_queue`)."""
        return None

    def _cluster(self) -> dict | None:
        """A cluster worker's view of its cluster; None for a crawl on its own."""
        return None

    def log_lines(self, contains: str, limit: int) -> list[str]:
        return tail(self.tally.path, contains=contains, limit=limit)

    def _snapshot(self) -> dict:
        tally = self.tally
        until = self._now()
        recent = tally.recent.series(until)
        window = recent[1][-RATE_WINDOW:], recent[2][-RATE_WINDOW:]
        return {"mode": self.mode, "state": str(self.state), "time": time.time(),
                "codes": {str(code): n for code, n in sorted(tally.codes.items())},
                "mime": dict(tally.mime.most_common(12)),
                "rates": {"pages_per_s": sum(window[0]) / max(len(window[0]), 1),
                          "mb_per_s": sum(window[1]) / max(len(window[1]), 1)},
                "history": {"recent": recent, "whole": tally.whole.series(until)}}

    def _now(self) -> float | None:
        """The end of the chart's time axis: the last read of crawl.log, whose lines are all in."""
        return self.tally.read_at

    def _frontier(self, top: int) -> dict:
        """The frontier's stats and its ``top`` largest queues, each with its ``next_fetch``:
        the epoch second its politeness wait ends, None when it has none to wait."""
        stats, rows = self._queues(top)
        now = time.time()
        largest = [dict(zip(QUEUE_COLUMNS, row)) for row in rows]
        for queue in largest:
            queue["next_fetch"] = queue["next_fetch"] if queue["next_fetch"] > now else None
        return stats | {"largest": largest}

    def _queues(self, top: int) -> tuple[dict, list[tuple]]:
        """The frontier's stats and its ``top`` largest queues (:meth:`WorkQueueFrontier.queue_table`)."""
        raise NotImplementedError


class LiveFigures(Figures):
    """A running crawl's figures (module docstring), and its actions."""

    mode = "live"
    can_act = True

    def __init__(self, crawler):
        super().__init__(crawler.config.state, LogTally(Path(crawler.config.state) / "crawl.log", from_end=True))
        self.crawler = crawler
        self.started = time.time()

    def _snapshot(self) -> dict:
        crawler, figures = self.crawler, super()._snapshot()
        summary, frontier, config = crawler.summary, crawler.frontier, crawler.config
        stats = frontier.stats()
        elapsed = max(time.time() - self.started, 1e-9)
        cache, robots = crawler.url_cache, crawler.robots
        je = crawler.env.cache_stats()
        seen_table = {"kind": config.seen, "url_cache": config.url_cache,
                      "cache_hits": cache.hits if cache is not None else 0,
                      "cache_misses": cache.misses if cache is not None else 0}
        if table_figures := crawler.visited.figures():
            seen_table[config.seen] = table_figures
        figures["rates"] |= {"pages_per_s_avg": summary.fetched / elapsed, "mb_per_s_avg": summary.bytes / 1e6 / elapsed}
        return figures | {
            "paused": crawler.paused, "stopping": summary.interrupted, "elapsed": elapsed,
            "counts": {"fetched": summary.fetched, "failed": summary.failed, "precluded": summary.precluded,
                       "bytes": summary.bytes, "pending": stats["pending"], "seen": frontier.totals["enqueued"],
                       "duplicates": frontier.totals["duplicates"], "links": summary.links},
            "queues": {name: entry["queues"] for name, entry in stats["by_state"].items()},
            "seen_table": seen_table,
            "robots": {} if robots is None else {standing: n for standing, n in robots.standings.items() if n},
            "je": je | {"log_bytes": je_log_bytes(self.state)},
            "disk": {"min_free_bytes": config.min_free_mb * MB,
                     "free_bytes": {str(folder): free_bytes(folder) for folder in crawler.disk.folders}},
            "workers": {"concurrency": config.concurrency, "in_flight": stats["in_process"],
                        "fetchers": crawler.fetchers.count},
        }

    def _queues(self, top: int) -> tuple[dict, list[tuple]]:
        frontier = self.crawler.frontier
        return frontier.stats(), frontier.queue_table(top)

    def _robots(self, host: str) -> RobotsPolicy | None:
        robots = self.crawler.robots
        return None if robots is None else robots.known(host)

    def _queue_budget(self) -> int | None:
        return self.crawler.config.queue_budget

    def _queue_fetched(self, host: str) -> int | None:
        queue = self.crawler.frontier.host_queue(host)
        return None if queue is None else queue.fetched

    def _cluster(self) -> dict | None:
        """The cluster as this worker sees it: ``members`` (live, by its last heartbeat),
        ``workers`` (each one's hosts, lease and published figures: pages, pending, links
        sent and received...; :meth:`~pycrawler.cluster.membership.Membership.view`) and this
        worker's own link ``traffic``, counted here. Redis away: the workers are unknown."""
        exchange = self.crawler.exchange
        if exchange is None:
            return None
        import redis  # a cluster worker has it

        membership = exchange.membership
        try:
            workers, unreachable = membership.view(), None
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            workers, unreachable = [], str(exc)
        return {"name": membership.name, "worker": membership.worker, "members": membership.members,
                "workers": workers, "traffic": dict(exchange.traffic), "unreachable": unreachable}

    # -- actions ------------------------------------------------------------------------------------
    def pause(self) -> None:
        self.crawler.pause()

    def resume(self) -> None:
        self.crawler.resume()

    def stop(self) -> None:
        """The graceful stop a first SIGINT makes: the fetches in flight finish, all is
        flushed and closed, the summary printed."""
        self.crawler.stop()

    def add_seeds(self, urls: list[str]) -> dict[str, str]:
        """Schedule the seeds the crawl can take (and record them in crawl.json); the others
        are neither recorded nor scheduled: returned, each with why (:func:`seed_refusal`)."""
        canonicalizer = self.crawler.frontier.canonicalizer
        refused = {url: reason for url in urls if (reason := seed_refusal(url, canonicalizer))}
        if taken := [url for url in urls if url not in refused]:
            self.crawler.add_seeds(taken)
        return refused
