"""The live progress line: pages/s, bytes/s, queues ready/snoozed, URLs pending/seen, errors,
and with a URL cache its hits and misses (each hit a seen-table operation saved).

Plain text rewritten in place with a carriage return, at most once per ``interval`` seconds;
silent unless the stream is a terminal (a crawl piped to a file or run by CI prints nothing
here), and one final line at :meth:`Progress.close`. The engine reports each fetch with
:meth:`Progress.fetched` and its frontier's gauges with :meth:`Progress.update`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import TextIO

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
    """Counts fetches and renders the progress line (see the module docstring)."""

    def __init__(self, stream: TextIO | None = None, *, interval: float = 1.0, enabled: bool | None = None,
                 clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stdout
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.interval, self.clock = interval, clock
        self.now = Snapshot()
        self._started = self._last_time = clock()
        self._last = Snapshot()
        self._width = 0

    def fetched(self, status: int, size: int) -> None:
        """One fetch attempt: its status and payload size."""
        if status < 0:
            self.now.errors += 1
        else:
            self.now.pages += 1
            self.now.bytes += size

    def update(self, **gauges: int) -> None:
        """Set gauges: ``queues_ready``, ``queues_snoozed``, ``pending``, ``seen``, ``cache_hits``,
        ``cache_misses``."""
        for name, value in gauges.items():
            if name not in GAUGES:
                raise TypeError(f"unknown progress gauge {name!r}")
            setattr(self.now, name, value)

    def render(self, elapsed: float, previous: Snapshot | None = None) -> str:
        """The line for the rates since ``previous`` over ``elapsed`` seconds (since the start by default)."""
        base = previous or Snapshot()
        seconds = max(elapsed, 1e-9)
        n = self.now
        lookups = n.cache_hits + n.cache_misses
        cache = (f"  cache {n.cache_hits:,} hits {n.cache_misses:,} misses ({n.cache_hits / lookups:.0%})"
                 if lookups else "")
        return (f"{(n.pages - base.pages) / seconds:,.0f} pages/s  "
                f"{human_bytes((n.bytes - base.bytes) / seconds)}/s  "
                f"queues {n.queues_ready:,} ready {n.queues_snoozed:,} snoozed  "
                f"URLs {n.pending:,} pending {n.seen:,} seen  "
                f"{n.pages:,} pages {human_bytes(n.bytes)}  {n.errors:,} errors{cache}")

    def tick(self) -> None:
        """Redraw the line if ``interval`` has passed since the last one (cheap to call often)."""
        if not self.enabled:
            return
        now = self.clock()
        if now - self._last_time < self.interval:
            return
        self._draw(self.render(now - self._last_time, self._last))
        self._last, self._last_time = dataclasses.replace(self.now), now

    def close(self) -> None:
        """The final line: averages over the whole run, then a newline."""
        if self.enabled:
            self._draw(self.render(self.clock() - self._started))
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, line: str) -> None:
        padding = " " * max(0, self._width - len(line))  # wipe what a longer previous line left
        self.stream.write("\r" + line + padding)
        self.stream.flush()
        self._width = len(line)
