"""``/metrics``: the console's figures in Prometheus' text format, through ``prometheus_client``.

A custom collector over :meth:`Figures.snapshot` (itself made at most once a second), so a
scrape reads the same numbers the page shows and the crawl keeps no metric objects of its own
on its hot path. Names follow Prometheus' conventions: a ``pycrawler_`` prefix, base units
(bytes, seconds), ``_total`` for counters.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

COUNTERS = {
    "fetched": ("pycrawler_pages_fetched", "Fetch attempts answered by a server, this run"),
    "failed": ("pycrawler_fetch_failures", "Fetch attempts without an answer (negative status), this run"),
    "precluded": ("pycrawler_robots_precluded", "URLs robots.txt excluded, this run"),
    "bytes": ("pycrawler_fetched_bytes", "Payload bytes received, this run"),
    "seen": ("pycrawler_urls_discovered", "URLs new to the seen table, put in the frontier, this run"),
    "duplicates": ("pycrawler_urls_duplicate", "Links the seen table answered as seen before, this run"),
    "links": ("pycrawler_links_extracted", "Outlinks extracted from pages, this run"),
}


class FiguresCollector:
    """Yields the metric families of one :class:`~.figures.Figures`."""

    def __init__(self, figures):
        self.figures = figures

    def collect(self):
        snap = self.figures.snapshot()
        counts = snap.get("counts", {})
        for field, (name, text) in COUNTERS.items():
            if field in counts:
                yield CounterMetricFamily(name, text, value=counts[field])
        if "pending" in counts:
            yield GaugeMetricFamily("pycrawler_urls_pending", "URLs in the frontier, in process included",
                                    value=counts["pending"])
        codes = CounterMetricFamily("pycrawler_responses", "Fetch attempts by status (crawl.log's codes)",
                                    labels=["code"])
        for code, n in snap["codes"].items():
            codes.add_metric([code], n)
        yield codes
        mime = CounterMetricFamily("pycrawler_responses_by_type", "Answered fetches by MIME type (the 12 most common)",
                                   labels=["mime"])
        for media, n in snap["mime"].items():
            mime.add_metric([media], n)
        yield mime
        if "queues" in snap:
            queues = GaugeMetricFamily("pycrawler_queues", "Work queues by state", labels=["state"])
            for state, n in snap["queues"].items():
                queues.add_metric([state], n)
            yield queues
        if "je" in snap:
            je = snap["je"]
            yield GaugeMetricFamily("pycrawler_je_cache_bytes", "JE cache in use", value=je["cache_bytes"])
            yield GaugeMetricFamily("pycrawler_je_cache_max_bytes", "JE cache size", value=je["cache_max_bytes"])
            yield CounterMetricFamily("pycrawler_je_cache_misses", "JE cache misses since the open",
                                      value=je["cache_misses"])
            yield GaugeMetricFamily("pycrawler_je_log_bytes", "Size of the state's JE log files",
                                    value=je["log_bytes"])
        if "disk" in snap:
            free = GaugeMetricFamily("pycrawler_disk_free_bytes", "Free bytes on a filesystem the crawl writes to",
                                     labels=["folder"])
            for folder, n in snap["disk"]["free_bytes"].items():
                free.add_metric([folder], n)
            yield free
            yield GaugeMetricFamily("pycrawler_disk_min_free_bytes", "--min-free: the crawl stops below it",
                                    value=snap["disk"]["min_free_bytes"])
        if "workers" in snap:
            workers = snap["workers"]
            yield GaugeMetricFamily("pycrawler_fetches_in_flight", "URLs handed out and not yet committed",
                                    value=workers["in_flight"])
            yield GaugeMetricFamily("pycrawler_fetch_slots", "--concurrency", value=workers["concurrency"])
        if "seen_table" in snap and snap["seen_table"]["url_cache"]:
            seen = snap["seen_table"]
            yield CounterMetricFamily("pycrawler_url_cache_hits", "Seen lookups the URL cache answered",
                                      value=seen["cache_hits"])
            yield CounterMetricFamily("pycrawler_url_cache_misses", "Seen lookups past the URL cache",
                                      value=seen["cache_misses"])
        if "paused" in snap:
            yield GaugeMetricFamily("pycrawler_paused", "1 while the console holds new fetches back",
                                    value=int(snap["paused"]))


def registry_for(figures) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FiguresCollector(figures))
    return registry
