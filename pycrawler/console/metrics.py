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

JE_METRICS = {
    "cache_bytes": (GaugeMetricFamily, "pycrawler_je_cache_bytes", "JE cache in use"),
    "cache_max_bytes": (GaugeMetricFamily, "pycrawler_je_cache_max_bytes", "JE cache size"),
    "cache_misses": (CounterMetricFamily, "pycrawler_je_cache_misses", "JE cache misses since the open"),
    "log_bytes": (GaugeMetricFamily, "pycrawler_je_log_bytes", "Size of the state's JE log files"),
}

SEEN_TABLE_METRICS = {
    "drum": {"keys": (GaugeMetricFamily, "pycrawler_drum_keys", "Keys merged into DRUM's repository"),
             "rounds": (CounterMetricFamily, "pycrawler_drum_merge_rounds", "DRUM merge rounds since the open"),
             "merges": (CounterMetricFamily, "pycrawler_drum_bucket_merges", "DRUM bucket merges since the open"),
             "merge_seconds": (CounterMetricFamily, "pycrawler_drum_merge_seconds",
                               "Wall seconds DRUM's merges took since the open"),
             "last_round_seconds": (GaugeMetricFamily, "pycrawler_drum_last_round_seconds",
                                    "Wall seconds DRUM's last merge round took")},
    "bloom": {"keys": (GaugeMetricFamily, "pycrawler_bloom_keys", "Keys the Bloom filter took as new"),
              "capacity": (GaugeMetricFamily, "pycrawler_bloom_capacity_keys", "Keys the Bloom filter was sized for"),
              "fill": (GaugeMetricFamily, "pycrawler_bloom_fill_ratio", "Bloom filter keys over its capacity"),
              "bits_set": (GaugeMetricFamily, "pycrawler_bloom_bits_set_ratio",
                           "Expected share of the Bloom filter's bits set"),
              "false_positive_rate": (GaugeMetricFamily, "pycrawler_bloom_false_positive_ratio",
                                      "Expected false-positive rate of the Bloom filter now"),
              "target_false_positive_rate": (GaugeMetricFamily, "pycrawler_bloom_target_false_positive_ratio",
                                             "False-positive rate the Bloom filter was sized for")},
}
"""The metrics of a seen table's own figures (:meth:`pycrawler.seen.protocol.Visited.figures`)."""

CLUSTER_COUNTERS = {
    "sent": ("pycrawler_cluster_links_sent", "Links this worker sent to the workers that own their hosts"),
    "received": ("pycrawler_cluster_links_received", "Links other workers sent this worker"),
    "forwarded": ("pycrawler_cluster_links_forwarded",
                  "URLs this worker polled and handed over to their host's new owner"),
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
        je = snap.get("je", {})  # a stopped crawl's: its log's size alone
        for field, (family, name, text) in JE_METRICS.items():
            if field in je:
                yield family(name, text, value=je[field])
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
        seen_table = snap.get("seen_table", {})
        for kind, metrics in SEEN_TABLE_METRICS.items():
            for field, value in seen_table.get(kind, {}).items():
                family, name, text = metrics[field]
                yield family(name, text, value=value)
        if "robots" in snap:
            robots = GaugeMetricFamily("pycrawler_robots_hosts", "Hosts by what their robots.txt says",
                                       labels=["standing"])
            for standing, n in snap["robots"].items():
                robots.add_metric([standing], n)
            yield robots
        yield from self._cluster()
        if "paused" in snap:
            yield GaugeMetricFamily("pycrawler_paused", "1 while the console holds new fetches back",
                                    value=int(snap["paused"]))


    def _cluster(self):
        """This worker's part of the cluster: each worker's scrape says its own."""
        cluster = self.figures.cluster()
        if cluster is None:
            return
        yield GaugeMetricFamily("pycrawler_cluster_members", "Live workers of the cluster",
                                value=len(cluster["members"]))
        me = next((row for row in cluster["workers"] if row["worker"] == cluster["worker"]), {})
        yield GaugeMetricFamily("pycrawler_cluster_hosts", "Hosts the cluster's host table gives this worker",
                                value=me.get("hosts", 0))
        for field, (name, text) in CLUSTER_COUNTERS.items():
            if field in cluster["traffic"]:
                yield CounterMetricFamily(name, text, value=cluster["traffic"][field])


def registry_for(figures) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FiguresCollector(figures))
    return registry
