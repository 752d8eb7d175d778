"""The crawl's live display: pages and pages/s, bytes/s, queues ready/snoozed, URLs pending/seen,
errors, and with a URL cache its hits and misses (each hit a seen-table operation saved).

Two lines on stderr (:mod:`pycrawler.progress`): a tqdm counter of answered pages with its rate
and elapsed time, and under it the gauges, redrawn at most once per ``interval`` seconds; nothing
unless stderr is a terminal (a crawl piped to a file or run by CI prints only its summary), and
the averages over the whole run at :meth:`Progress.close`. The engine reports each fetch with
:meth:`Progress.fetched` and its frontier's gauges with :meth:`Progress.update`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import TextIO

from ..progress import meter, status_line, wanted

_UNITS = ("B", "kB", "MB", "GB", "TB")


def human_bytes(count: float) -> str:
    """``1.5 MB``: decimal units, one decimal below 100."""
    for unit in _UNITS:
        if count < 1000 or unit == _UNITS[-1]:
            return f"{count:.1f} {unit}" if count < 100 and unit != "B" else f"{count:.0f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")


@dataclasses.dataclass(slots=True)
class Snapshot:
    """The counters and gauges at one moment."""

    pages: int = 0           # answered fetches
    bytes: int = 0           # payload bytes received
    errors: int = 0          # fetches with a negative status
    queues_ready: int = 0
    queues_snoozed: int = 0
    pending: int = 0
    seen: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


GAUGES = ("queues_ready", "queues_snoozed", "pending", "seen", "cache_hits", "cache_misses")


class Progress:
    """Counts fetches and draws the display (see the module docstring)."""

    def __init__(self, stream: TextIO | None = None, *, interval: float = 1.0, enabled: bool | None = None,
                 clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = wanted(enabled, self.stream)
        self.interval, self.clock = interval, clock
        self.now = Snapshot()
        self._started = self._last_time = clock()
        self._last = Snapshot()
        self._pages = meter("crawl", unit="pages", enabled=self.enabled, stream=self.stream, position=0)
        self._gauges = status_line(enabled=self.enabled, stream=self.stream, position=1)

    def fetched(self, status: int, size: int) -> None:
        """One fetch attempt: its status and payload size."""
        if status < 0:
            self.now.errors += 1
        else:
            self.now.pages += 1
            self.now.bytes += size
            self._pages.update()

    def update(self, **gauges: int) -> None:
        """Set gauges: ``queues_ready``, ``queues_snoozed``, ``pending``, ``seen``, ``cache_hits``,
        ``cache_misses``."""
        for name, value in gauges.items():
            if name not in GAUGES:
                raise TypeError(f"unknown progress gauge {name!r}")
            setattr(self.now, name, value)

    def render(self, elapsed: float, previous: Snapshot | None = None) -> str:
        """The gauges line, with bytes/s since ``previous`` over ``elapsed`` seconds (since the start by default)."""
        base = previous or Snapshot()
        n = self.now
        lookups = n.cache_hits + n.cache_misses
        cache = (f"  cache {n.cache_hits:,} hits {n.cache_misses:,} misses ({n.cache_hits / lookups:.0%})"
                 if lookups else "")
        return (f"{human_bytes((n.bytes - base.bytes) / max(elapsed, 1e-9))}/s  "
                f"queues {n.queues_ready:,} ready {n.queues_snoozed:,} snoozed  "
                f"URLs {n.pending:,} pending {n.seen:,} seen  "
                f"{human_bytes(n.bytes)}  {n.errors:,} errors{cache}")

    def tick(self) -> None:
        """Redraw the gauges if ``interval`` has passed since the last time (cheap to call often)."""
        if not self.enabled:
            return
        now = self.clock()
        if now - self._last_time < self.interval:
            return
        self._gauges.set_description_str(self.render(now - self._last_time, self._last))
        self._last, self._last_time = dataclasses.replace(self.now), now

    def close(self) -> None:
        """The final display: the page count, and bytes/s averaged over the whole run."""
        if self.enabled:
            self._gauges.set_description_str(self.render(self.clock() - self._started), refresh=False)
        self._pages.close()
        self._gauges.close()
