"""What the console tallies from crawl.log: response codes, MIME types, hosts, the rate over time.

crawl.log has a line per fetch attempt (:mod:`pycrawler.crawl.crawllog`): its time, status,
size, URL and MIME type are all these reports need, so the console reads them there instead of
adding a counter to the crawl's hot path, and a stopped crawl is read the same way as a
running one. :class:`LogTally` reads what was appended since its last call (a running crawl's
console starts at the end of the file; a stopped crawl's reads it all), a line at most once.
"""

from __future__ import annotations

import calendar
import collections
import dataclasses
import functools
import os
import time
from pathlib import Path

RECENT_SECONDS = 600
"""Seconds of the per-second series (the chart's 'last minutes')."""

WHOLE_BUCKET = 60
"""Seconds per point of the whole crawl's series."""

READ_AT_MOST = 4 << 20
"""Bytes of new log one :meth:`LogTally.read` takes (a stopped crawl's log is read in such steps)."""

TAIL_BYTES = 256 << 10
"""Bytes from the end of crawl.log the log report looks through at most."""

TAIL_STEP = 16 << 10
"""Bytes the log report reads back at a time, until it has its lines."""


@dataclasses.dataclass(slots=True)
class HostFigures:
    fetched: int = 0         # answered fetches
    errors: int = 0          # negative statuses other than robots.txt's refusal, and 4xx/5xx answers
    bytes: int = 0
    precluded: int = 0       # URLs robots.txt excluded (-9998)


ROBOTS_PRECLUDED = -9998


@functools.lru_cache(maxsize=4)
def _second(stamp: str) -> int:
    """Unix time of ``2024-05-01T12:00:00`` (the lines of one second share it: cached)."""
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S"))


def _line_time(stamp: str) -> float | None:
    """Unix time of ``2024-05-01T12:00:00.123Z``."""
    try:
        return _second(stamp[:19]) + int(stamp[20:23]) / 1000
    except (ValueError, IndexError):
        return None


def _host(url: str) -> str:
    """``host:port`` of an absolute URL (crawl.log's are), without a full parse: a line costs little."""
    parts = url.split("/", 3)
    return parts[2] if len(parts) > 2 else url


class RateSeries:
    """Pages and bytes per time bucket; :meth:`series` gives (times, pages/s, MB/s) lists.
    ``partial``: the bucket still filling is given too, as its rate so far (a minute's bucket
    is too long to leave out of a running crawl's picture; a second's is not). A bucket the
    crawl covered only in part (its first, its last) is divided by the seconds it covered."""

    def __init__(self, bucket: int, keep: int | None, *, partial: bool = False):
        self.bucket, self.keep, self.partial = bucket, keep, partial
        self.points: dict[int, list[int]] = {}
        self.start = self.end = 0.0  # the first and last times added

    def add(self, first: float, last: float, pages: int, size: int) -> None:
        """``pages`` answered fetches of ``size`` bytes in all, logged from ``first`` to ``last``
        within one second."""
        self.start = first if not self.points else self.start
        self.end = last
        slot = int(first) // self.bucket * self.bucket
        point = self.points.get(slot)
        if point is None:
            point = self.points[slot] = [0, 0]
            if self.keep is not None and len(self.points) > self.keep:
                del self.points[min(self.points)]
        point[0] += pages
        point[1] += size

    def series(self, until: float | None = None) -> list[list[float]]:
        """Every bucket from the first to ``until``'s (empty ones as zero; the one still filling
        only when ``partial``: else its rate would read as a drop), or to the last one when
        ``until`` is None (a stopped crawl)."""
        if not self.points:
            return [[], [], []]
        first = min(self.points)
        filling = None if until is None else int(until) // self.bucket * self.bucket
        last = max(self.points) if filling is None else filling if self.partial else filling - self.bucket
        if self.keep is not None:
            first = max(first, last - (self.keep - 1) * self.bucket)
        times, pages, megabytes = [], [], []
        for slot in range(first, last + 1, self.bucket):
            count, size = self.points.get(slot, (0, 0))
            covered = min(slot + self.bucket, self.end if until is None else until) - max(slot, self.start)
            seconds = min(max(covered, 1.0), self.bucket)
            times.append(slot)
            pages.append(count / seconds)
            megabytes.append(round(size / 1e6 / seconds, 6))
        return [times, pages, megabytes]


class LogTally:
    """Reads a crawl.log as it grows and keeps the reports' counts (module docstring)."""

    def __init__(self, path: Path, *, from_end: bool):
        self.path = Path(path)
        self.offset = self.path.stat().st_size if from_end and self.path.exists() else 0
        self.codes: collections.Counter = collections.Counter()
        self.mime: collections.Counter = collections.Counter()
        self.hosts: dict[str, HostFigures] = collections.defaultdict(HostFigures)
        self.recent = RateSeries(1, RECENT_SECONDS)
        self.whole = RateSeries(WHOLE_BUCKET, None, partial=True)
        self.first: float | None = None
        self.last: float | None = None
        self.lines = 0
        self.read_at = time.time()  # when the last read began: every line logged before it is in

    def read(self) -> int:
        """Tally the whole lines appended since the last call; returns how many bytes it read."""
        self.read_at = time.time()
        try:
            with open(self.path, "rb") as log:
                log.seek(self.offset)
                chunk = log.read(READ_AT_MOST)
        except FileNotFoundError:
            return 0
        end = chunk.rfind(b"\n") + 1  # a line being written stays for the next call
        self._tally(chunk[:end].decode("utf-8", "replace").splitlines())
        self.offset += end
        return end

    def read_all(self) -> None:
        while self.read():
            pass

    def _tally(self, lines: list[str]) -> None:
        """Count ``lines``. The rate series take the answered fetches of a run of lines of the
        same second at once: a running crawl's console reads hundreds of lines a second on the
        crawl's loop, and one add a second instead of one a line makes the tally ~30% cheaper."""
        codes, mime, hosts = self.codes, self.mime, self.hosts
        run_second, run = None, [0.0, 0.0, 0, 0]  # the run's first and last times, pages, bytes
        for line in lines:
            fields = line.split(None, 7)  # up to the MIME type; the annotations are not read
            if len(fields) < 7:
                continue
            try:
                status = int(fields[1])
            except ValueError:
                continue
            size = int(fields[2]) if fields[2].isdigit() else 0
            when = _line_time(fields[0])
            host = hosts[_host(fields[3])]
            codes[status] += 1
            if status == ROBOTS_PRECLUDED:
                host.precluded += 1
            elif status < 0 or status >= 400:
                host.errors += 1
            if status > 0:
                host.fetched += 1
                host.bytes += size
                mime[fields[6]] += 1
                if when is not None:
                    if int(when) != run_second:
                        self._add_rate(run)
                        run_second, run = int(when), [when, when, 0, 0]
                    run[1] = when
                    run[2] += 1
                    run[3] += size
            if when is not None:
                self.first = when if self.first is None else self.first
                self.last = when
            self.lines += 1
        self._add_rate(run)

    def _add_rate(self, run: list) -> None:
        if run[2]:
            self.recent.add(*run)
            self.whole.add(*run)

    def host_rows(self, limit: int) -> list[dict]:
        """The hosts with the most fetches first."""
        rows = sorted(self.hosts.items(), key=lambda item: (-item[1].fetched, item[0]))[:limit]
        return [{"host": host, **dataclasses.asdict(figures)} for host, figures in rows]


def tail(path: Path, *, contains: str = "", limit: int = 100) -> list[str]:
    """The last ``limit`` lines of crawl.log (within its last :data:`TAIL_BYTES`) that contain
    ``contains``, read back from the end a step at a time until they are found."""
    try:
        with open(path, "rb") as log:
            size = log.seek(0, os.SEEK_END)
            step, found = TAIL_STEP, []
            while True:
                start = max(0, size - step)
                log.seek(start)
                lines = log.read(size - start).decode("utf-8", "replace").splitlines()[1 if start else 0:]
                found = [line for line in lines if contains in line]
                if len(found) >= limit or start == 0 or step >= TAIL_BYTES:
                    return found[-limit:]
                step *= 2
    except FileNotFoundError:
        return []
