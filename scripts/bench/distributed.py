#!/usr/bin/env python3
"""Cluster workers on a politeness-bound multi-host site: pages/s and Redis traffic per page.

    .venv/bin/python scripts/bench/distributed.py                      # 3 rounds, 1/2/3 workers
    .venv/bin/python scripts/bench/distributed.py --rounds 1 --hosts 8 --pages 10

The site (:class:`pycrawler.crawl.multihost.MultiHostSite`: ``--hosts`` addresses on loopback,
``--pages`` pages each, cross-host links half of which point to other hosts' roots) is crawled
with a fixed per-host delay and few fetches in flight per worker (``--concurrency``): the crawl
is bound by politeness and by each worker's connections, not by this 2-core machine's CPU, so
adding workers can add pages/s. Variants, run in turn round after round so the machine's drift
hits them alike:

- ``standalone``: one ``pycrawler crawl`` without a cluster (the baseline);
- ``MODE-Nw``: N workers with ``--dedupe MODE`` (``--dedupe`` lists the modes), sending cache on;
- ``MODE-Nw-nocache``: the most workers, ``--send-cache none``.

Each cluster run gets a fresh redis-server (:class:`pycrawler.cluster.local_redis.LocalRedis`);
its ``INFO commandstats`` (calls) and ``INFO stats`` (network bytes in and out) after the crawl,
divided by the pages fetched, are the Redis operations and bytes per page. pages/s is measured
at the server: pages over the time from the first page request to the last (the workers' JVM
start and membership settling left out). Every run must fetch every reachable page once, and
no host may see two page requests closer than the delay; a run that fails either is reported.

The last line is ``key=value`` figures: medians per variant.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pycrawler.cluster.local_redis import LocalRedis  # noqa: E402
from pycrawler.crawl.multihost import MultiHostSite  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    workers: int
    dedupe: str | None              # None: a crawl on its own
    options: tuple[str, ...] = ()


def variants(modes: list[str], workers: list[int]) -> list[Variant]:
    found = [Variant("standalone", 1, None)]
    for mode in modes:
        found += [Variant(f"{mode}-{n}w", n, mode) for n in workers]
        found.append(Variant(f"{mode}-{max(workers)}w-nocache", max(workers), mode, ("--send-cache", "none")))
    return found


def crawl_command(site: MultiHostSite, state: Path, args, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pycrawler", "crawl", *site.seeds, "--state", str(state), "--no-progress",
            "--delay", str(args.delay), "--concurrency", str(args.concurrency), "--parse-workers", "1", *extra]


def networks(variant: Variant, worker: int) -> tuple[str, ...]:
    """--dedupe central: workers alternate between two networks, so a run has both of seed 003's
    rounds (across the local network, then across networks) once it has two workers."""
    return ("--network", f"net{worker % 2}") if variant.dedupe == "central" else ()


def redis_traffic(client: redis.Redis) -> tuple[int, int]:
    """(commands, network bytes in + out) since the server started."""
    calls = sum(stats["calls"] for stats in client.info("commandstats").values())
    net = client.info("stats")
    return calls, net["total_net_input_bytes"] + net["total_net_output_bytes"]


def run(variant: Variant, args, work: Path) -> dict:
    with MultiHostSite(args.hosts, args.pages) as site:
        if variant.dedupe is None:
            subprocess.run(crawl_command(site, work / "state", args), cwd=ROOT, check=True, capture_output=True)
            figures = {}
        else:
            with LocalRedis(work / "redis") as url:
                workers = [subprocess.Popen(crawl_command(site, work / f"w{i}", args, "--redis", url, "--cluster", "bench",
                                                          "--dedupe", variant.dedupe, *networks(variant, i), *variant.options),
                                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                           for i in range(variant.workers)]
                for worker in workers:
                    try:
                        _, err = worker.communicate(timeout=args.timeout)
                    except subprocess.TimeoutExpired:
                        for started in workers:
                            started.kill()
                            started.wait()
                        raise SystemExit(f"{variant.name}: the workers did not finish in {args.timeout} s") from None
                    if worker.returncode:
                        raise SystemExit(f"{variant.name}: a worker exited {worker.returncode}: {err.strip()[-500:]}")
                client = redis.Redis.from_url(url)
                calls, nbytes = redis_traffic(client)
                sent = dropped = 0
                for key in client.scan_iter(match="pycrawler:bench:worker:*"):
                    row = client.hgetall(key)
                    sent += int(row.get(b"sent", 0))
                    dropped += int(row.get(b"dropped", 0))
                client.close()
            figures = {"ops_per_page": calls, "bytes_per_page": nbytes, "links_sent": sent, "links_dropped": dropped}
        counts = site.fetch_counts()
        pages = len(counts)
        complete = set(counts) == site.reachable
        return {"pages_per_s": pages / site.page_span() if site.page_span() else 0.0,
                "ops_per_page": figures.get("ops_per_page", 0) / pages,
                "bytes_per_page": figures.get("bytes_per_page", 0) / pages,
                "links_sent": figures.get("links_sent", 0), "links_dropped": figures.get("links_dropped", 0),
                "pages": pages, "repeats": sum(n - 1 for n in counts.values()),
                "complete": complete, "closest_gap": site.closest_gap()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--pages", type=int, default=20, help="pages per host")
    parser.add_argument("--delay", type=float, default=0.2, help="politeness delay per host, seconds")
    parser.add_argument("--concurrency", type=int, default=4, help="fetches in flight per worker")
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--dedupe", default="split", help="comma-separated --dedupe modes to measure")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300, help="seconds a run may take")
    args = parser.parse_args()
    chosen = variants(args.dedupe.split(","), [int(n) for n in args.workers.split(",")])
    results: dict[str, list[dict]] = {v.name: [] for v in chosen}
    print(f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    for round_ in range(args.rounds):
        for variant in chosen:
            with tempfile.TemporaryDirectory(prefix="pycrawler-distributed-") as work:
                result = run(variant, args, Path(work))
            results[variant.name].append(result)
            print(f"round {round_ + 1} {variant.name}: " + ", ".join(
                f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    base = statistics.median(r["pages_per_s"] for r in results["standalone"])
    print(f"{'variant':<22} {'pages/s':>8} {'x base':>7} {'ops/page':>9} {'B/page':>8} {'sent':>6} {'dropped':>8}"
          f" {'repeats':>8} {'complete':>9} {'min gap s':>9}")
    line = []
    for name, runs in results.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("pages_per_s", "ops_per_page", "bytes_per_page",
                                                                  "links_sent", "links_dropped")}
        print(f"{name:<22} {med['pages_per_s']:>8.1f} {med['pages_per_s'] / base:>7.2f} {med['ops_per_page']:>9.2f}"
              f" {med['bytes_per_page']:>8.0f} {med['links_sent']:>6.0f} {med['links_dropped']:>8.0f}"
              f" {max(r['repeats'] for r in runs):>8} {str(all(r['complete'] for r in runs)):>9}"
              f" {min(r['closest_gap'] for r in runs):>9.3f}")
        line += [f"{name}.pages_per_s={med['pages_per_s']:.1f}", f"{name}.ops_per_page={med['ops_per_page']:.2f}",
                 f"{name}.bytes_per_page={med['bytes_per_page']:.0f}"]
    print(" ".join(line))


if __name__ == "__main__":
    main()
