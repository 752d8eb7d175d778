#!/usr/bin/env python3
"""Benchmark the TODO frontier: put then get of CrawlUrl records, batched, in both orders.

    .venv/bin/python scripts/bench/todo.py --records 1000000

Each order (key, fifo) gets a fresh store: ``--records`` records go in through ``put_urls``
in batches of ``--batch`` (one transaction and one JNI crossing each), then come out through
``get_next_batch`` until the store is empty. The baseline in the same run is the book's
one-at-a-time protocol (``put_url`` / ``get_next``: a transaction per record) on
``--single-records`` records. Records look like a crawl's TODO entries: URL, IP form of the
URL, number, layer and a hit count; they are built before the clock starts. Before each
order is timed, ``--warmup`` other records go through a scratch store of that order, so the
JVM has compiled JE's paths for both orders alike (the order timed first would otherwise pay
for the JIT, and the garbage collector's sizing, alone). Durability is the
frontier's default (``write_no_sync``: every batch survives kill -9). The last line is
``key=value`` figures; ``put_per_s`` / ``get_per_s`` are the key (book) order's.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pycrawler.frontier.todo import JeTodoFrontier  # noqa: E402
from pycrawler.records.crawl_url import CrawlUrl  # noqa: E402


def make_records(count: int, salt: str = "") -> list[CrawlUrl]:
    return [CrawlUrl(ori_url=f"http://www.host{i % 5000}.example.com/section{i % 97}/page{i}{salt}.html",
                     url=f"http://10.{i % 250}.{i // 250 % 250}.1/section{i % 97}/page{i}{salt}.html",
                     url_no=i, hit_num=i % 13, layer=i % 4)
            for i in range(count)]


def batched(frontier: JeTodoFrontier, records: list[CrawlUrl], batch: int) -> tuple[float, float, float, float]:
    """(put records/s, get records/s, put records per CPU second, get records per CPU second);
    CPU is the whole process's (Python, the JVM and JE's daemon threads)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    for offset in range(0, len(records), batch):
        frontier.put_urls(records[offset:offset + batch])
    put_seconds, put_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    start, start_cpu, got = time.perf_counter(), time.process_time(), 0
    while popped := frontier.get_next_batch(batch):
        got += len(popped)
    get_seconds, get_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    assert got == len(records), (got, len(records))
    return len(records) / put_seconds, got / get_seconds, len(records) / put_cpu, got / get_cpu


def one_at_a_time(frontier: JeTodoFrontier, records: list[CrawlUrl]) -> tuple[float, float]:
    start = time.perf_counter()
    for record in records:
        frontier.put_url(record)
    put_seconds = time.perf_counter() - start
    start = time.perf_counter()
    while frontier.get_next() is not None:
        pass
    return len(records) / put_seconds, len(records) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000, help="records per put_urls / get_next_batch")
    parser.add_argument("--single-records", type=int, default=20_000, help="records for the one-at-a-time baseline")
    parser.add_argument("--warmup", type=int, default=100_000, help="records through a scratch store first")
    parser.add_argument("--cache-mb", type=int, help="JE cache (default JE's: 60%% of the JVM heap, PYCRAWLER_HEAP)")
    parser.add_argument("--dir", type=Path, help="where the stores go (default: a temporary directory)")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)", flush=True)

    records = make_records(args.records)
    singles = make_records(args.single_records, salt="-single")
    cache_size = args.cache_mb and args.cache_mb << 20
    figures = {}
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        for order in ("key", "fifo"):
            if args.warmup:
                with JeTodoFrontier.open(Path(scratch) / f"warmup-{order}", order, create=True,
                                         cache_size=cache_size) as frontier:
                    batched(frontier, make_records(args.warmup, salt="-warmup"), args.batch)
            with JeTodoFrontier.open(Path(scratch) / order, order, create=True,
                                     cache_size=cache_size) as frontier:
                put_rate, get_rate, put_cpu, get_cpu = batched(frontier, records, args.batch)
                print(f"{order} order, batches of {args.batch:,}: put {put_rate:,.0f}/s ({put_cpu:,.0f} per CPU s), "
                      f"get {get_rate:,.0f}/s ({get_cpu:,.0f} per CPU s) over {args.records:,} records", flush=True)
                figures[f"{order}_put_per_s"], figures[f"{order}_get_per_s"] = put_rate, get_rate
                figures[f"{order}_put_per_cpu_s"], figures[f"{order}_get_per_cpu_s"] = put_cpu, get_cpu
        with JeTodoFrontier.open(Path(scratch) / "single", "key", create=True,
                                 cache_size=cache_size) as frontier:
            put_rate, get_rate = one_at_a_time(frontier, singles)
            print(f"key order, one at a time (put_url/get_next): put {put_rate:,.0f}/s, get {get_rate:,.0f}/s "
                  f"over {args.single_records:,} records", flush=True)
            figures["single_put_per_s"], figures["single_get_per_s"] = put_rate, get_rate
    figures["load_average"] = os.getloadavg()[0]
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    line = {"put_per_s": figures["key_put_per_s"], "get_per_s": figures["key_get_per_s"], **figures,
            "peak_rss_mb": peak_rss_mb}
    print(" ".join(f"{name}={value:.1f}" if name == "load_average" else f"{name}={value:.0f}"
                   for name, value in line.items()))


if __name__ == "__main__":
    main()
