"""A stopped crawl's figures, for ``pycrawler console STATE``: read once, shown read-only.

The reports come from the state folder as the crawl left it: crawl.log tallied whole (codes,
MIME types, hosts, the rate over the crawl's time), the frontier's queues read once from JE
(read-only, closed again at once, so the crawl can be resumed while its console is open), the
size of its JE logs and the free space of its filesystem.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..crawl.diskspace import free_bytes
from ..crawl.settings import SETTINGS_FILE
from ..errors import BadInput
from ..frontier.politeness import Politeness
from ..frontier.workqueues import open_store
from .crawl_log import ROBOTS_PRECLUDED, LogTally
from .figures import Figures, je_log_bytes

LARGEST_KEPT = 1000
"""Queues the frontier report can show, read at the open."""


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
        finally:
            frontier.close()

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
            "seen_table": {"kind": self.settings.get("seen"), "url_cache": None, "cache_hits": 0, "cache_misses": 0},
            "je": {"log_bytes": je_log_bytes(self.state)},
            "disk": {"min_free_bytes": 0, "free_bytes": {str(self.state): free_bytes(self.state)}},
        }

    def _queues(self, top: int) -> tuple[dict, list[tuple]]:
        return self.queues, self.largest[:top]
