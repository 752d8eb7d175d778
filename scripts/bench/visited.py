#!/usr/bin/env python3
"""Benchmark the Visited tables: the sized Bloom filter and the exact JE set, with baselines.

    .venv/bin/python scripts/bench/visited.py --keys 10000000 --urls 2000000 --exact-keys 1000000,10000000

Bloom: check+update (``add_many``) and check (``contains_many``) of random pre-hashed
64-bit keys in batches, into a memory-mapped filter sized for ``--keys`` at ``--fpr``; the
same for URL strings (the filter's URL key, XXH64 in format 2, + probes); the false-positive rate measured at
capacity. Baselines in the same run: rbloom (``pip install rbloom``; Python's per-process
hash, so not persistable) and a Python ``set``. Exact: check+update of random keys into a JE
database, 8-byte keys, one JVM crossing per ``--batch`` keys, at each size of ``--exact-keys``.

Rates are medians of ``--repeat`` runs. The last line is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pycrawler.keys import fingerprints64
from pycrawler.keys.xxh64 import xxh64_urls
from pycrawler.seen import BloomFilter, ExactVisited


def rate(n: int, seconds: float) -> float:
    return n / seconds if seconds else float("inf")


def timed(fn, cpu: list | None = None) -> float:
    """Wall seconds of fn(); its process CPU seconds go to ``cpu`` when given."""
    start, start_cpu = time.perf_counter(), time.process_time()
    fn()
    if cpu is not None:
        cpu.append(time.process_time() - start_cpu)
    return time.perf_counter() - start


def median_rate(n: int, runs: list[float]) -> int:
    return round(rate(n, statistics.median(runs)))


def in_batches(fn, items, batch: int):
    for start in range(0, len(items), batch):
        fn(items[start:start + batch])


def synthetic_urls(n: int, seed: int) -> list[str]:
    """URLs shaped like a crawl's: a few thousand hosts, paths of 40-80 characters."""
    rng = np.random.default_rng(seed)
    hosts, pages = rng.integers(0, 5000, n), rng.integers(0, 1 << 40, n)
    return [f"http://www{h}.example.org/docs/api/section-{p % 997}/page-{p:x}.html?ref=nav"
            for h, p in zip(hosts.tolist(), pages.tolist())]


def bench_bloom(args, figures: dict, workdir: Path) -> None:
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 2**64 - 1, args.keys, dtype=np.uint64, endpoint=True)
    fresh = rng.integers(0, 2**64 - 1, args.keys, dtype=np.uint64, endpoint=True)
    BloomFilter(1000).add_many(keys[:10])            # compile the kernels outside the timings
    adds, checks, add_cpu = [], [], []
    for rep in range(args.repeat):
        bloom = BloomFilter.create(workdir / f"prehashed{rep}.bloom", args.keys, args.fpr)
        adds.append(timed(lambda: in_batches(bloom.add_many, keys, args.batch), add_cpu))
        checks.append(timed(lambda: in_batches(bloom.contains_many, fresh, args.batch)))
        fpr = float(bloom.contains_many(fresh).mean())
        bloom.close()
    figures["bloom_prehashed_ops_per_s"] = median_rate(args.keys, adds)
    figures["bloom_prehashed_ops_per_cpu_s"] = median_rate(args.keys, add_cpu)
    figures["bloom_prehashed_contains_per_s"] = median_rate(args.keys, checks)
    figures["fpr"] = round(fpr, 5)
    figures["fpr_target"] = args.fpr
    print(f"bloom pre-hashed: format {bloom.version}, m={bloom.m} bits k={bloom.k}; add {figures['bloom_prehashed_ops_per_s']:,}/s, "
          f"contains (absent keys) {figures['bloom_prehashed_contains_per_s']:,}/s, "
          f"measured FPR at capacity {fpr:.5f} (target {args.fpr})", flush=True)

    urls = synthetic_urls(args.urls, 2)
    fingerprints64(urls[:10])
    xxh64_urls(urls[:10])
    keying, hashing, url_adds, url_cpu = [], [], [], []
    for rep in range(args.repeat):
        keying.append(timed(lambda: in_batches(fingerprints64, urls, args.batch)))
        hashing.append(timed(lambda: in_batches(xxh64_urls, urls, args.batch)))
        bloom = BloomFilter.create(workdir / f"urls{rep}.bloom", args.urls, args.fpr)
        url_adds.append(timed(lambda: in_batches(bloom.add_many_urls, urls, args.batch), url_cpu))
        bloom.close()
    figures["bloom_url_ops_per_s"] = median_rate(args.urls, url_adds)
    figures["bloom_url_ops_per_cpu_s"] = median_rate(args.urls, url_cpu)
    figures["xxh64_urls_per_s"] = median_rate(args.urls, hashing)
    figures["fingerprint_urls_per_s"] = median_rate(args.urls, keying)
    print(f"bloom URLs (format {bloom.version}): add {figures['bloom_url_ops_per_s']:,}/s "
          f"({figures['bloom_url_ops_per_cpu_s']:,} per CPU second); URL hashing alone: XXH64 "
          f"{figures['xxh64_urls_per_s']:,}/s, MD5 fingerprint {figures['fingerprint_urls_per_s']:,}/s", flush=True)

    try:
        import rbloom
    except ImportError:
        print("rbloom is not installed (pip install rbloom): its baseline is skipped", flush=True)
    else:
        key_list, rb_adds, rb_urls = keys.tolist(), [], []
        for _ in range(args.repeat):
            rb = rbloom.Bloom(args.keys, args.fpr)
            rb_adds.append(timed(lambda items=key_list: in_batches(rb.update, items, args.batch)))
            rb = rbloom.Bloom(args.urls, args.fpr)
            rb_urls.append(timed(lambda: in_batches(rb.update, urls, args.batch)))
        figures["rbloom_ops_per_s"] = median_rate(args.keys, rb_adds)
        figures["rbloom_url_ops_per_s"] = median_rate(args.urls, rb_urls)
        print(f"rbloom: update ints {figures['rbloom_ops_per_s']:,}/s, URL strings "
              f"{figures['rbloom_url_ops_per_s']:,}/s", flush=True)
        del key_list

    figures["set_url_ops_per_s"] = median_rate(args.urls, [timed(lambda: set_check_update(urls))
                                                           for _ in range(args.repeat)])
    print(f"python set: check+update URL strings {figures['set_url_ops_per_s']:,}/s", flush=True)


def set_check_update(items) -> set:
    """The Visited operation on a Python set, one item at a time as a frontier would."""
    seen, new = set(), 0
    for item in items:
        if item not in seen:
            seen.add(item)
            new += 1
    return seen


def bench_exact(args, figures: dict, workdir: Path) -> None:
    from pycrawler.store import Environment

    rng = np.random.default_rng(3)
    for size in args.exact_keys:
        keys = rng.integers(0, 2**64 - 1, size, dtype=np.uint64, endpoint=True)
        runs, checks = [], []
        for rep in range(args.exact_repeat):
            with Environment(workdir / f"exact{size}-{rep}", create=True, transactional=False,
                             cache_size=args.je_cache_mb << 20) as env:
                seen = ExactVisited(env, batch=args.batch)
                runs.append(timed(lambda: in_batches(seen.add_many, keys, args.batch)))
                sample = keys[rng.integers(0, size, min(size, 200_000))]
                checks.append(timed(lambda: seen.contains_many(sample)))
                seen.close()
        label = f"{size // 1_000_000}m" if size % 1_000_000 == 0 else str(size)
        figures[f"exact_ops_per_s_{label}"] = median_rate(size, runs)
        figures[f"exact_contains_per_s_{label}"] = median_rate(len(sample), checks)
        print(f"exact JE set, {size:,} keys: check+update {figures[f'exact_ops_per_s_{label}']:,}/s, "
              f"contains (present) {figures[f'exact_contains_per_s_{label}']:,}/s", flush=True)
        key_list = keys.tolist()
        figures[f"set_ops_per_s_{label}"] = median_rate(size, [timed(lambda items=key_list: set_check_update(items))])
        del key_list
        print(f"python set, {size:,} int keys: check+update {figures[f'set_ops_per_s_{label}']:,}/s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=10_000_000, help="Bloom capacity and pre-hashed keys added")
    parser.add_argument("--urls", type=int, default=2_000_000, help="URL strings added to a second filter")
    parser.add_argument("--fpr", type=float, default=0.01, help="target false-positive rate")
    parser.add_argument("--batch", type=int, default=1 << 20, help="keys per call (and per JVM crossing)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per Bloom figure (median)")
    parser.add_argument("--exact-keys", type=lambda s: [int(x) for x in s.split(",") if x], default=[1_000_000],
                        help="comma-separated sizes for the exact JE set (empty: skip)")
    parser.add_argument("--exact-repeat", type=int, default=1, help="runs per exact figure (median)")
    parser.add_argument("--je-cache-mb", type=int, default=256, help="JE cache for the exact set")
    parser.add_argument("--skip-bloom", action="store_true")
    args = parser.parse_args()
    figures: dict = {}
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-visited-") as tmp:
        if not args.skip_bloom:
            bench_bloom(args, figures, Path(tmp))
        if args.exact_keys:
            bench_exact(args, figures, Path(tmp))
    print(f"load average at end: {os.getloadavg()[0]:.1f}", flush=True)
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
