"""The console's figures: one JSON document the page polls and ``/metrics`` reads.

:class:`Figures` holds what a running and a stopped crawl share (the crawl.log reports of
:mod:`.crawl_log`); :class:`LiveFigures` adds a running crawl's counters, read from the
:class:`~pycrawler.crawl.engine.Crawler` on its own event loop (no lock needed: the console
runs on that loop too). A snapshot is made at most once a second, however many pages and
scrapers ask: it costs one JE statistics call (counters only), a walk of the frontier's
queues in Python memory (no JE read) and a listing of the state folder.

The snapshot's fields (docs/console.md says what each means): ``mode``, ``state``,
``paused``, ``stopping``, ``counts``, ``rates``, ``codes``, ``mime``, ``seen_table``,
``je``, ``disk``, ``workers``, ``queues`` and ``history`` (the chart's series).
"""

from __future__ import annotations

import time
from pathlib import Path

from ..crawl.diskspace import free_bytes
from .crawl_log import LogTally, tail

MB = 1 << 20
REFRESH_SECONDS = 1.0
"""A snapshot or report is made again at most this often."""

TICK_SECONDS = 2.0
"""crawl.log is tallied this often (its lines carry their own times: a less frequent read
changes no figure, only how late it shows)."""

QUEUE_COLUMNS = ("queue", "state", "pending", "fetched")

RATE_WINDOW = 10
"""Seconds the 'now' rates are averaged over."""


def je_log_bytes(state: Path) -> int:
    return sum(f.stat().st_size for f in Path(state).glob("*.jdb"))


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

    def tick(self) -> None:
        """Tally what crawl.log gained (a running crawl flushes it at every commit)."""
        self.tally.read()

    def hosts(self, limit: int) -> list[dict]:
        return self.tally.host_rows(limit)

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
        stats, rows = self._queues(top)
        return stats | {"largest": [dict(zip(QUEUE_COLUMNS, row)) for row in rows]}

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
        cache = crawler.url_cache
        je = crawler.env.cache_stats()
        figures["rates"] |= {"pages_per_s_avg": summary.fetched / elapsed, "mb_per_s_avg": summary.bytes / 1e6 / elapsed}
        return figures | {
            "paused": crawler.paused, "stopping": summary.interrupted, "elapsed": elapsed,
            "counts": {"fetched": summary.fetched, "failed": summary.failed, "precluded": summary.precluded,
                       "bytes": summary.bytes, "pending": stats["pending"], "seen": frontier.totals["enqueued"],
                       "duplicates": frontier.totals["duplicates"], "links": summary.links},
            "queues": {name: entry["queues"] for name, entry in stats["by_state"].items()},
            "seen_table": {"kind": config.seen, "url_cache": config.url_cache,
                           "cache_hits": cache.hits if cache is not None else 0,
                           "cache_misses": cache.misses if cache is not None else 0},
            "je": je | {"log_bytes": je_log_bytes(self.state)},
            "disk": {"min_free_bytes": config.min_free_mb * MB,
                     "free_bytes": {str(folder): free_bytes(folder) for folder in crawler.disk.folders}},
            "workers": {"concurrency": config.concurrency, "in_flight": stats["in_process"],
                        "parse_workers": config.parse_workers},
        }

    def _queues(self, top: int) -> tuple[dict, list[tuple]]:
        frontier = self.crawler.frontier
        return frontier.stats(), frontier.queue_table(top)

    # -- actions ------------------------------------------------------------------------------------
    def pause(self) -> None:
        self.crawler.pause()

    def resume(self) -> None:
        self.crawler.resume()

    def stop(self) -> None:
        """The graceful stop a first SIGINT makes: the fetches in flight finish, all is
        flushed and closed, the summary printed."""
        self.crawler.stop()

    def add_seeds(self, urls: list[str]) -> int:
        return self.crawler.add_seeds(urls)
