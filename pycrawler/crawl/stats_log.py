"""``pycrawler crawl --stats FILE``: the crawl's counters, one JSON line a second, for benchmarks.

A benchmark outside the crawl process sees its CPU and RSS in /proc and its pages in crawl.log,
but not what happens inside: how many URLs went to the seen table, how long flushes took, how
often JE's cache missed. Those are appended here, cumulative since the run started (a reader
takes differences over its windows). A line costs one JE statistics call (``setFast``: counters
only, no walk of the trees) and a listing of the state folder's ``.jdb`` files.

Fields: ``t`` (Unix time), ``done`` (URLs fetched or refused by this run), ``pending`` (URLs
in the frontier, in process included; ``done + pending`` are the URLs known), ``seen_checks``
(URLs scheduled, each a seen-table test unless the URL cache answered), ``cache_hits``,
``flushes``, ``flush_s`` (seconds spent committing), ``je_cache_misses``, ``je_cache_bytes``
and ``je_cache_max_bytes`` (:meth:`pycrawler.store.Environment.cache_stats`), ``je_log_bytes``;
and what may slow the crawl from beside it, for a benchmark to name the cause of a dip:
``drum_merge_s`` (seconds of DRUM's merges, from the seen table's figures), ``je_cleaner_runs`` and ``je_checkpoints`` (:meth:`pycrawler.store.Environment.background_stats`),
``jvm_gc_s`` (the JVM's collectors) and ``py_gc_s`` (Python's collector, timed by a
``gc.callbacks`` hook while the log is open).
"""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path

from .. import jvm
from ..errors import BadInput

INTERVAL = 1.0


class StatsLog:
    """Appends a line to ``path`` when :meth:`tick` finds a second gone by (the crawl writes a
    last one with :meth:`write` before it closes the stores)."""

    def __init__(self, path: Path, state: Path, interval: float = INTERVAL):
        self.path, self.state, self.interval = Path(path), Path(state), interval
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"cannot write --stats {path}: {exc.strerror or exc}") from None
        self._next = 0.0
        self.flushes, self.flush_seconds, self.seen_checks = 0, 0.0, 0
        self.gc_seconds, self._gc_began = 0.0, 0.0
        gc.callbacks.append(self._time_gc)

    def _time_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_began = time.perf_counter()
        else:
            self.gc_seconds += time.perf_counter() - self._gc_began

    def flushed(self, seconds: float) -> None:
        """Count one flush and its duration."""
        self.flushes += 1
        self.flush_seconds += seconds

    def scheduled(self, urls: int) -> None:
        """Count URLs handed to the frontier's seen test."""
        self.seen_checks += urls

    def tick(self, crawler) -> None:
        if time.monotonic() >= self._next:
            self._next = time.monotonic() + self.interval
            self.write(crawler)

    def write(self, crawler) -> None:
        summary = crawler.summary
        je = crawler.env.cache_stats() | crawler.env.background_stats()
        line = {"t": round(time.time(), 3), "done": summary.fetched + summary.failed + summary.precluded,
                "pending": len(crawler.frontier), "seen_checks": self.seen_checks,
                "cache_hits": crawler.url_cache.hits if crawler.url_cache is not None else 0,
                "flushes": self.flushes, "flush_s": round(self.flush_seconds, 3),
                "je_cache_misses": je["cache_misses"], "je_cache_bytes": je["cache_bytes"],
                "je_cache_max_bytes": je["cache_max_bytes"],
                "je_cleaner_runs": je["cleaner_runs"], "je_checkpoints": je["checkpoints"],
                "drum_merge_s": round(crawler.visited.figures().get("merge_seconds", 0.0), 3),
                "jvm_gc_s": round(jvm.gc_seconds(), 3), "py_gc_s": round(self.gc_seconds, 3),
                "je_log_bytes": sum(f.stat().st_size for f in self.state.glob("*.jdb"))}
        self._file.write(json.dumps(line) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file; idempotent."""
        if self._time_gc in gc.callbacks:
            gc.callbacks.remove(self._time_gc)
        self._file.close()
