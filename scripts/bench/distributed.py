#!/usr/bin/env python3
"""Cluster workers on loopback multi-host sites: pages/s, CPU and Redis traffic per page.

    .venv/bin/python scripts/bench/distributed.py                                    # the run of record
    .venv/bin/python scripts/bench/distributed.py --scenarios connections --rounds 1 --hosts 40

The site is :class:`pycrawler.testing.multihost.MultiHostSite`: ``hosts`` addresses on loopback,
``pages`` pages each plus the root, two cross-host links a page, half of them to other hosts'
roots. Two scenarios (``--scenarios``), both in one run:

- ``connections``: many hosts (200), each answer taking a fixed time to arrive (``latency``,
  0.2 s, served without holding up other connections) and a short per-host delay (0.1 s), so
  the site's politeness ceiling (hosts / (latency + delay), ~670 pages/s) is far above what a
  worker with ``concurrency`` fetches in flight (8) can fetch (concurrency / latency, ~40
  pages/s): each worker is bound by its own connections, as a real crawler is by its
  connections and bandwidth, and workers should add pages/s;
- ``politeness``: 16 hosts, no latency, a 0.2 s delay, 4 fetches in flight: the site's ceiling
  (80 pages/s) is nearly reached by one worker, so this one shows the cluster's overhead.

``--hosts``, ``--pages``, ``--delay``, ``--latency`` and ``--concurrency`` override the chosen
scenarios' values. Variants per scenario, run in turn round after round so the machine's drift
hits them alike:

- ``standalone``: one ``pycrawler crawl`` without a cluster (the baseline);
- ``MODE-Nw``: N workers with ``--dedupe MODE``, the sending cache on (its default);
- ``MODE-Nw-nocache``: the same with ``--send-cache none``.

Each cluster run gets a fresh redis-server (:class:`pycrawler.testing.local_redis.LocalRedis`);
its ``INFO commandstats`` (calls), ``INFO stats`` (network bytes in and out) and ``INFO cpu``
after the crawl, divided by the pages fetched, are the Redis commands, bytes and CPU per page.
pages/s is measured at the server: pages over the time from the first page request to the last
(the workers' start and membership settling left out; they are reported apart: ``start`` is
from the launch to the first page request, ``tail`` from the last page request to the last
worker's exit, which is the end-of-crawl detection). Workers' CPU is user + system time of the
worker processes and their page workers (``wait4``); the load average is read after each run.
Every run must fetch every reachable page once, and no host may see two page requests closer
than the delay; a run that fails either is reported.

The last line is ``key=value`` figures: medians per scenario and variant.
"""

from __future__ import annotations

import argparse
import calendar
import dataclasses
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pycrawler.testing.local_redis import LocalRedis  # noqa: E402
from pycrawler.testing.multihost import MultiHostSite  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    hosts: int
    pages: int          # per host, plus its root
    delay: float        # politeness delay per host, seconds
    latency: float      # seconds each answer takes to arrive
    concurrency: int    # fetches in flight per worker


SCENARIOS = {
    "connections": Scenario("connections", hosts=200, pages=4, delay=0.1, latency=0.2, concurrency=8),
    "politeness": Scenario("politeness", hosts=16, pages=20, delay=0.2, latency=0.0, concurrency=4),
}


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    workers: int
    dedupe: str | None              # None: a crawl on its own
    cache: bool = True

    @property
    def base(self) -> str:
        """The variant this one's pages/s is compared with: the same mode and cache, 1 worker."""
        return f"{self.dedupe}-1w" + ("" if self.cache else "-nocache")


def variants(modes: list[str], workers: list[int], caches: list[bool]) -> list[Variant]:
    found = [Variant("standalone", 1, None)]
    for mode in modes:
        for cache in caches:
            found += [Variant(f"{mode}-{n}w" + ("" if cache else "-nocache"), n, mode, cache) for n in workers]
    return found


def crawl_command(site: MultiHostSite, state: Path, scenario: Scenario, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pycrawler", "crawl", *site.seeds, "--state", str(state), "--no-progress",
            "--delay", str(scenario.delay), "--concurrency", str(scenario.concurrency), "--parse-workers", "1",
            *extra]


def cluster_options(variant: Variant, worker: int, url: str) -> list[str]:
    """--dedupe central: workers alternate between two networks, so a run has both of seed 003's
    rounds (across the local network, then across networks) once it has two workers."""
    options = ["--redis", url, "--cluster", "bench", "--dedupe", variant.dedupe]
    if variant.dedupe == "central":
        options += ["--network", f"net{worker % 2}"]
    if not variant.cache:
        options += ["--send-cache", "none"]
    return options


def children_cpu() -> float:
    """User + system seconds of this process's reaped children (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


END_CHECK_COMMANDS = ("exists", "hget", "xlen")
"""The commands only the end-of-crawl check sends: idle flags, stream lengths, the first member's answer."""


def redis_figures(url: str) -> dict:
    """Redis commands, network bytes in + out and CPU seconds since the server started, and the
    links the workers sent and their send caches dropped."""
    client = redis.Redis.from_url(url)
    try:
        cpu = client.info("cpu")
        net = client.info("stats")
        sent = dropped = 0
        for key in client.scan_iter(match="pycrawler:bench:worker:*"):
            row = client.hgetall(key)
            sent += int(row.get(b"sent", 0))
            dropped += int(row.get(b"dropped", 0))
        calls = {name.removeprefix("cmdstat_"): stats["calls"] for name, stats in client.info("commandstats").items()}
        return {"commands": sum(calls.values()), "end_checks": sum(calls.get(c, 0) for c in END_CHECK_COMMANDS),
                "bytes": net["total_net_input_bytes"] + net["total_net_output_bytes"],
                "redis_cpu": cpu["used_cpu_user"] + cpu["used_cpu_sys"], "sent": sent, "dropped": dropped}
    finally:
        client.close()


def log_times(state: Path) -> list[float]:
    """Epoch times of the page fetches a worker's crawl.log holds (robots.txt left out)."""
    times = []
    for line in (state / "crawl.log").read_text().splitlines():
        fields = line.split()
        if len(fields) > 3 and not fields[3].endswith("/robots.txt") and int(fields[1]) > 0:
            stamp, millis = fields[0].rstrip("Z").split(".")
            times.append(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S")) + int(millis) / 1000)
    return times


def balance(states: list[Path]) -> dict:
    """How evenly the workers shared the crawl, from their crawl.logs: ``busiest``, the most
    pages one worker fetched over the mean (1.0: even); ``idle``, the share of the workers'
    time between the crawl's first and last page in which a worker had not begun yet or had
    already fetched its last page; ``stagger``, seconds between the first worker's first page and
    the last worker's first page."""
    logs = [log_times(state) for state in states]
    first, last = min(min(t) for t in logs), max(max(t) for t in logs)
    idle = sum((min(t) - first) + (last - max(t)) for t in logs)
    return {"busiest": max(len(t) for t in logs) * len(logs) / sum(len(t) for t in logs),
            "idle": idle / (len(logs) * (last - first)), "stagger": max(min(t) for t in logs) - first}


def wait_all(workers: list[subprocess.Popen], name: str, timeout: float) -> float:
    """Wait for every worker; the monotonic time the last one exited. A worker that fails or
    outlasts ``timeout`` ends the benchmark (the others killed first)."""
    deadline = time.monotonic() + timeout
    for worker in workers:
        try:
            _, err = worker.communicate(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            for started in workers:
                started.kill()
                started.wait()
            raise SystemExit(f"{name}: the workers did not finish in {timeout} s") from None
        if worker.returncode:
            raise SystemExit(f"{name}: a worker exited {worker.returncode}: {err.strip()[-500:]}")
    return time.monotonic()


def run(scenario: Scenario, variant: Variant, timeout: float, work: Path) -> dict:
    with MultiHostSite(scenario.hosts, scenario.pages, latency=scenario.latency) as site:
        cpu_before = children_cpu()
        launched = time.monotonic()
        if variant.dedupe is None:
            subprocess.run(crawl_command(site, work / "state", scenario), cwd=ROOT, check=True, capture_output=True)
            ended, cluster, states = time.monotonic(), {}, [work / "state"]
        else:
            states = [work / f"w{i}" for i in range(variant.workers)]
            with LocalRedis(work / "redis") as url:
                workers = [subprocess.Popen(crawl_command(site, states[i], scenario,
                                                          *cluster_options(variant, i, url)),
                                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                           for i in range(variant.workers)]
                ended = wait_all(workers, variant.name, timeout)
                cluster = redis_figures(url)
        cpu = children_cpu() - cpu_before  # before LocalRedis's exit reaps redis-server
        counts = site.fetch_counts()
        times = [at for _, path, at, _ in site.requests if path != "/robots.txt"]
        pages = len(counts)
        return {"pages_per_s": pages / site.page_span() if site.page_span() else 0.0,
                "pages_per_cpu_s": pages / cpu, "cpu_s_per_worker": cpu / variant.workers,
                "ops_per_page": cluster.get("commands", 0) / pages,
                "end_ops_per_page": cluster.get("end_checks", 0) / pages, "bytes_per_page": cluster.get("bytes", 0) / pages,
                "redis_cpu_ms_per_page": 1000 * cluster.get("redis_cpu", 0) / pages,
                "links_sent": cluster.get("sent", 0), "links_dropped": cluster.get("dropped", 0),
                **balance(states), "start_s": min(times) - launched, "tail_s": ended - max(times),
                "load": os.getloadavg()[0],
                "pages": pages, "repeats": sum(n - 1 for n in counts.values()),
                "complete": set(counts) == site.reachable, "closest_gap": site.closest_gap()}


MEDIANS = ("pages_per_s", "pages_per_cpu_s", "cpu_s_per_worker", "ops_per_page", "end_ops_per_page", "bytes_per_page",
           "redis_cpu_ms_per_page", "links_sent", "links_dropped", "busiest", "idle", "stagger", "start_s", "tail_s",
           "load")


def report(scenario: Scenario, results: dict[str, list[dict]], chosen: list[Variant]) -> list[str]:
    """Print one scenario's table of medians; the ``key=value`` figures for the last line."""
    med = {v.name: {k: statistics.median(r[k] for r in results[v.name]) for k in MEDIANS} for v in chosen}
    alone = med["standalone"]["pages_per_s"]
    print(f"\n{scenario.name}: {scenario.hosts} hosts x {scenario.pages + 1} pages, latency {scenario.latency} s,"
          f" delay {scenario.delay} s, concurrency {scenario.concurrency}")
    print(f"{'variant':<20} {'pages/s':>7} {'x 1w':>5} {'x alone':>7} {'pg/CPUs':>7} {'CPUs/w':>6}"
          f" {'ops/pg':>6} {'end/pg':>6} {'B/pg':>6} {'rCPUms':>6} {'sent':>5} {'drop':>5} {'busy':>4} {'idle':>5} {'stagr':>5}"
          f" {'start':>5} {'tail':>5}"
          f" {'load':>5} {'rep':>3} {'all':>4} {'gap':>6}")
    line = []
    for variant in chosen:
        m, runs = med[variant.name], results[variant.name]
        one = med.get(variant.base, med["standalone"])["pages_per_s"]
        print(f"{variant.name:<20} {m['pages_per_s']:>7.1f} {m['pages_per_s'] / one:>5.2f}"
              f" {m['pages_per_s'] / alone:>7.2f} {m['pages_per_cpu_s']:>7.1f} {m['cpu_s_per_worker']:>6.1f}"
              f" {m['ops_per_page']:>6.2f} {m['end_ops_per_page']:>6.2f} {m['bytes_per_page']:>6.0f} {m['redis_cpu_ms_per_page']:>6.3f}"
              f" {m['links_sent']:>5.0f} {m['links_dropped']:>5.0f} {m['busiest']:>4.2f} {m['idle']:>5.2f}"
              f" {m['stagger']:>5.1f}"
              f" {m['start_s']:>5.1f} {m['tail_s']:>5.1f}"
              f" {m['load']:>5.1f} {max(r['repeats'] for r in runs):>3} {str(all(r['complete'] for r in runs)):>4}"
              f" {min(r['closest_gap'] for r in runs):>6.3f}")
        key = f"{scenario.name}.{variant.name}"
        line += [f"{key}.pages_per_s={m['pages_per_s']:.1f}", f"{key}.pages_per_cpu_s={m['pages_per_cpu_s']:.1f}",
                 f"{key}.ops_per_page={m['ops_per_page']:.2f}", f"{key}.bytes_per_page={m['bytes_per_page']:.0f}"]
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="connections,politeness",
                        help=f"comma-separated: {', '.join(SCENARIOS)}")
    for field, kind in (("hosts", int), ("pages", int), ("delay", float), ("latency", float), ("concurrency", int)):
        parser.add_argument(f"--{field}", type=kind, help="override every chosen scenario's value")
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--dedupe", default="split,central", help="comma-separated --dedupe modes to measure")
    parser.add_argument("--cache", default="on,off", help="the sending cache: on, off or on,off")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300, help="seconds a run may take")
    args = parser.parse_args()
    unknown = set(args.scenarios.split(",")) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    overrides = {f: getattr(args, f) for f in ("hosts", "pages", "delay", "latency", "concurrency")
                 if getattr(args, f) is not None}
    scenarios = [dataclasses.replace(SCENARIOS[name], **overrides) for name in args.scenarios.split(",")]
    workers = [int(n) for n in args.workers.split(",")]
    if 1 not in workers:
        parser.error("--workers must include 1 (the ratios are to 1 worker)")
    chosen = variants(args.dedupe.split(","), workers, [c == "on" for c in args.cache.split(",")])
    results = {(s.name, v.name): [] for s in scenarios for v in chosen}
    print(f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    for round_ in range(args.rounds):
        for scenario in scenarios:
            for variant in chosen:
                with tempfile.TemporaryDirectory(prefix="pycrawler-distributed-") as work:
                    result = run(scenario, variant, args.timeout, Path(work))
                results[scenario.name, variant.name].append(result)
                print(f"round {round_ + 1} {scenario.name} {variant.name}: " + ", ".join(
                    f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    line = []
    for scenario in scenarios:
        line += report(scenario, {v.name: results[scenario.name, v.name] for v in chosen}, chosen)
    print(" ".join(line))


if __name__ == "__main__":
    main()
