#!/usr/bin/env python3
"""Several crawl workers over Redis: host splitting against seed 003's protocol, side by side.

    .venv/bin/python scripts/bench/distributed.py                       # 24 hosts x 30 pages, 3 rounds
    .venv/bin/python scripts/bench/distributed.py --hosts 12 --pages 20 --rounds 1

On a 2-core machine CPU does not grow with workers, so what is compared is what does not depend
on it: Redis commands and bytes per page, and pages/s of the modes side by side. The site has
many hosts (127.0.0.1..N on loopback) and a fixed delay per host: with --delay high enough
(hosts / delay below what one worker parses) the crawl is politeness-bound. Each run is a fresh redis-server and a fresh site; 1, 2 and 3
``pycrawler crawl --redis ... --cluster ...`` workers crawl it with ``--dedupe split`` and
``--dedupe central`` (central: two networks once there are two workers or more), with the send
cache (the default) and, for 3 workers, without it (``--send-cache none``). Variants alternate
round after round so the machine's drift hits them alike.

Per run: pages/s (reachable pages over the wall time from the workers' start to the last one's
exit, JVM start and the membership's settle wait included), and Redis commands and bytes (in + out, from ``INFO stats`` of the
fresh server) per fetched page. Every run must fetch every reachable page exactly once and
keep the per-host delay between page requests, or its figures are NA.

The last line is ``key=value`` figures: medians per variant.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from pycrawler.cluster.local_redis import LocalRedis
from pycrawler.crawl.multihost import MultiHostSite

ROOT = Path(__file__).resolve().parent.parent.parent


def variants(max_workers: int) -> dict[str, tuple[str, int, tuple[str, ...]]]:
    """name -> (mode, workers, extra options)."""
    table = {}
    for workers in range(1, max_workers + 1):
        for mode in ("split", "central"):
            table[f"{mode}-{workers}"] = (mode, workers, ())
    for mode in ("split", "central"):
        table[f"{mode}-{max_workers}-nocache"] = (mode, max_workers, ("--send-cache", "none"))
    return table


def crawl(mode: str, workers: int, extra: tuple[str, ...], hosts: int, pages: int, delay: float, work: Path) -> dict | None:
    with LocalRedis(work / "redis") as url, MultiHostSite(hosts=hosts, pages=pages) as site:
        procs = []
        started = time.monotonic()
        for i in range(workers):
            network = ("--network", f"net{i % 2}") if mode == "central" else ()
            command = [sys.executable, "-m", "pycrawler", "crawl", *site.seeds, "--state", str(work / f"w{i}"),
                       "--no-progress", "--redis", url, "--cluster", "bench", "--dedupe", mode, *network,
                       "--delay", str(delay), "--concurrency", "8", "--parse-workers", "1", *extra]
            procs.append(subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        errors = [p.communicate(timeout=900)[1] for p in procs]
        seconds = time.monotonic() - started
        if any(p.returncode for p in procs):
            print(f"  {mode}-{workers}: a worker failed: {next(e for e, p in zip(errors, procs) if p.returncode)[-300:]}")
            return None
        counts = site.fetch_counts()
        whole = set(counts) == site.reachable and all(n == 1 for n in counts.values())
        polite = site.closest_gap() >= delay * 0.95
        stats = redis.Redis.from_url(url).info("stats")
        fetched = sum(counts.values())
        if not (whole and polite):
            print(f"  {mode}-{workers}: NA (whole site once: {whole}, polite: {polite})")
            return None
        return {"pages_s": len(site.reachable) / seconds, "ops": stats["total_commands_processed"] / fetched,
                "bytes": (stats["total_net_input_bytes"] + stats["total_net_output_bytes"]) / fetched,
                "pages": fetched}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=24)
    parser.add_argument("--pages", type=int, default=30, help="pages per host")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds between two requests to one host")
    parser.add_argument("--workers", type=int, default=3, help="the most workers (runs 1 .. this many)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    table = variants(args.workers)
    runs: dict[str, list[dict]] = {name: [] for name in table}
    for round_no in range(args.rounds):
        for name, (mode, workers, extra) in table.items():
            with tempfile.TemporaryDirectory(prefix="bench-distributed-") as work:
                result = crawl(mode, workers, extra, args.hosts, args.pages, args.delay, Path(work))
            if result is not None:
                runs[name].append(result)
                print(f"round {round_no + 1} {name:>18}: {result['pages']} pages, {result['pages_s']:.1f} pages/s, "
                      f"{result['ops']:.1f} Redis ops/page, {result['bytes']:.0f} B/page", flush=True)
    figures = []
    for name, results in runs.items():
        for key in ("pages_s", "ops", "bytes"):
            value = statistics.median(r[key] for r in results) if results else float("nan")
            figures.append(f"{name}.{key}={value:.1f}")
    print(" ".join(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
