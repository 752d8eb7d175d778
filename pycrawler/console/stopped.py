"""A stopped crawl's figures, for ``pycrawler console STATE``: read once, shown read-only.

The reports come from the state folder as the crawl left it: crawl.log tallied whole (codes,
MIME types, hosts, the rate over the crawl's time), the frontier's queues, and the robots.txt
and queue's fetch count of the busiest hosts read once from JE (read-only, closed again at once, so the crawl can be
resumed while its console is open), a Bloom filter's header, the size of its JE logs and the
free space of its filesystem. Nothing in the folder is written.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from ..crawl.diskspace import free_bytes
from ..crawl.engine import QUEUE_BUDGET, ROBOTS
from ..crawl.settings import SETTINGS_FILE
from ..errors import BadInput
from ..fetch.robots import AGENT, RobotsPolicy
from ..frontier.politeness import Politeness
from ..frontier.workqueues import open_store
from ..seen.tables import SEEN_TABLE_PATHS
from .crawl_log import ROBOTS_PRECLUDED, LogTally
from .figures import Figures, je_log_bytes, robots_hosts

LARGEST_KEPT = 1000
"""Queues the frontier report can show, and hosts whose robots.txt it reads, at the open."""


class StoppedFigures(Figures):
    mode = "stopped"

    def __init__(self, state: Path):
        state = Path(state)
        if not (state / SETTINGS_FILE).is_file():
            raise BadInput(f"{state} holds no crawl (no {SETTINGS_FILE}): give a crawl's --state folder")
        super().__init__(state, LogTally(state / "crawl.log", from_end=False))
        self.tally.read_all()
        self.settings = json.loads((state / SETTINGS_FILE).read_text())
        frontier = open_store(state, read_only=True, politeness=Politeness.none())
        if frontier is None:
            raise BadInput(f"{state} holds no work-queue frontier")
        try:
            self.queues = frontier.stats()
            self.largest = frontier.queue_table(LARGEST_KEPT)
            self.robots = self._read_robots(frontier.env)
            self.host_fetches = {row["host"]: queue.fetched for row in self.tally.host_rows(LARGEST_KEPT)
                                 if (queue := frontier.host_queue(row["host"])) is not None}
        finally:
            frontier.close()
        self.seen_figures = self._seen_figures()

    def _read_robots(self, env) -> dict[str, RobotsPolicy]:
        """The stored robots.txt of the hosts the report can show (crawl.log's busiest)."""
        if ROBOTS not in env.database_names():
            return {}
        stored = env.open_database(ROBOTS, read_only=True)
        policies = {}
        for row in self.tally.host_rows(LARGEST_KEPT):
            for host in robots_hosts(row["host"]):
                record = stored.get(host.encode())
                if record is not None and (policy := RobotsPolicy.unpack(host, record)) is not None:
                    policies[host] = policy
        return policies

    def _seen_figures(self) -> dict:
        """A Bloom filter's figures, from its file opened read-only (DRUM's are a run's)."""
        if self.settings.get("seen") != "bloom":
            return {}
        from ..seen.bloom import BloomFilter

        bloom = BloomFilter.open(self.state / SEEN_TABLE_PATHS["bloom"], read_only=True)
        try:
            return bloom.figures()
        finally:
            bloom.close()

    def _robots(self, host: str) -> RobotsPolicy | None:
        return self.robots.get(host)

    def _queue_budget(self) -> int | None:
        return self.settings.get(QUEUE_BUDGET)

    def _queue_fetched(self, host: str) -> int | None:
        return self.host_fetches.get(host)

    def _now(self) -> float | None:
        return None  # the crawl is over: its last second and minute count whole

    def _snapshot(self) -> dict:
        figures, tally = super()._snapshot(), self.tally
        codes = tally.codes
        fetched = sum(n for code, n in codes.items() if code > 0)
        precluded = codes.get(ROBOTS_PRECLUDED, 0)
        size = sum(host.bytes for host in tally.hosts.values())
        seconds = max((tally.last or 0) - (tally.first or 0), 1e-9)
        figures["rates"] |= {"pages_per_s_avg": fetched / seconds, "mb_per_s_avg": size / 1e6 / seconds}
        return figures | {
            "elapsed": seconds,
            "counts": {"fetched": fetched, "failed": sum(n for code, n in codes.items() if code < 0) - precluded,
                       "precluded": precluded, "bytes": size, "pending": self.queues["pending"]},
            "queues": {name: entry["queues"] for name, entry in self.queues["by_state"].items()},
            "seen_table": {"kind": self.settings.get("seen"), "url_cache": None, "cache_hits": 0, "cache_misses": 0}
                          | ({self.settings["seen"]: self.seen_figures} if self.seen_figures else {}),
            "robots": dict(collections.Counter(policy.standing(AGENT) for policy in self.robots.values())),
            "je": {"log_bytes": je_log_bytes(self.state)},
            "disk": {"min_free_bytes": 0, "free_bytes": {str(self.state): free_bytes(self.state)}},
        }

    def _queues(self, top: int) -> tuple[dict, list[tuple]]:
        return self.queues, self.largest[:top]
