#!/usr/bin/env python3
"""URL caches: requests/s of CLOCK, LRU and RANDOM, with and without URL hashing, and the
time of cache-sim's full sweep, beside plain-Python caches in the same run.

    .venv/bin/python scripts/bench/cache.py                        # 10M requests, 50,000 entries
    .venv/bin/python scripts/bench/cache.py --requests 1000000 --sweep-requests 1000000 --rounds 1

The trace is the synthetic one of :mod:`pycrawler.cachesim.synthetic` (default model, seed 1).

- **pre-hashed keys**: each policy's ``access`` over the trace's 64-bit keys, in batches of
  ``--batch``; the baseline is the usual Python LRU (an ``OrderedDict``) and a Python ``set``
  (an unbounded cache), timed on a ``--python-requests`` prefix.
- **URLs**: the same caches fed URL strings (``http://h<host>.example/p<n>``, one per
  request), each batch hashed first: XXH64 (the key cache-sim gives URL lines) and the MD5
  fingerprint (the seen table's key, which a crawl's cache uses).
- **sweep**: every policy of ``cache-sim`` at 2^0..2^25 entries over ``--sweep-requests``
  requests, from the keys in memory (dense ids, every pass); one run.
- memory per entry: the cache's arrays over its capacity.

Rates are per second of wall time and per second of this process's CPU time (the loops are
single-threaded, so on a machine shared with other work the CPU figure is the steadier one);
figures are medians over ``--rounds``; the last line is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pycrawler.cachesim.sweep import POLICIES, Trace, parse_sizes, sweep
from pycrawler.cachesim.synthetic import synthetic_trace
from pycrawler.keys import fingerprints64
from pycrawler.keys.xxh64 import xxh64_urls
from pycrawler.seen.cache import ONLINE_POLICIES

HASHES = {"xxh64": xxh64_urls, "md5": fingerprints64}


@dataclasses.dataclass
class Rate:
    """Items per second of wall time and of this process's CPU time."""

    wall: float
    cpu: float


def timed(count: int, work) -> Rate:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return Rate(count / (time.perf_counter() - wall), count / max(time.process_time() - cpu, 1e-9))


def cache_rate(policy: str, keys: np.ndarray, size: int, batch: int) -> tuple[Rate, float]:
    """(requests/s, hit ratio) of one policy over ``keys`` from empty."""
    cache = ONLINE_POLICIES[policy](size)
    cache.access(keys[:batch])  # compiles (or loads) the kernel outside the timing
    cache = ONLINE_POLICIES[policy](size)
    rate = timed(len(keys), lambda: [cache.access(keys[i:i + batch]) for i in range(0, len(keys), batch)])
    return rate, cache.hits / len(keys)


def python_lru_rate(keys: list[int], size: int) -> Rate:
    def run():
        cache = collections.OrderedDict()
        for key in keys:
            if key in cache:
                cache.move_to_end(key)
            else:
                if len(cache) >= size:
                    cache.popitem(last=False)
                cache[key] = None

    return timed(len(keys), run)


def python_set_rate(keys: list[int]) -> Rate:
    def run():
        seen = set()
        for key in keys:
            if key not in seen:
                seen.add(key)

    return timed(len(keys), run)


def url_rate(policy: str, urls: list[str], hash_name: str, size: int, batch: int) -> Rate:
    """URLs/s of hashing each batch, then one cache access per batch."""
    cache = ONLINE_POLICIES[policy](size)
    to_keys = HASHES[hash_name]
    cache.access(to_keys(urls[:batch]))
    cache = ONLINE_POLICIES[policy](size)
    return timed(len(urls), lambda: [cache.access(to_keys(urls[i:i + batch])) for i in range(0, len(urls), batch)])


def fmt(rate: float) -> str:
    return f"{rate / 1e6:.2f}M/s"


def fmt_both(rate: Rate) -> str:
    return f"{fmt(rate.wall)} ({fmt(rate.cpu)} CPU)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000_000, help="requests for the pre-hashed rates")
    parser.add_argument("--size", type=int, default=50_000, help="cache entries (the paper's ~50,000)")
    parser.add_argument("--batch", type=int, default=100_000, help="keys per access call")
    parser.add_argument("--urls", type=int, default=2_000_000, help="URL strings for the hashing rates")
    parser.add_argument("--python-requests", type=int, default=2_000_000, help="requests for the Python baselines")
    parser.add_argument("--sweep-requests", type=int, default=10_000_000, help="requests of the full sweep (0: skip)")
    parser.add_argument("--sweep-sizes", default="2^0..2^25")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    keys = np.concatenate(list(synthetic_trace(max(args.requests, args.urls, args.sweep_requests))))
    trace_keys = keys[:args.requests]
    urls = [f"http://h{k >> 48}.example/p{k & 0xFFFFFFFFFFFF:x}" for k in keys[:args.urls].tolist()]
    python_keys = trace_keys[:args.python_requests].tolist()
    print(f"trace: synthetic, {args.requests:,} requests; cache {args.size:,} entries; batches of {args.batch:,}")

    rates: dict[str, list[Rate]] = collections.defaultdict(list)
    hit_ratios = {}
    for round_number in range(1, args.rounds + 1):
        for policy in ONLINE_POLICIES:
            rate, hit_ratios[policy] = cache_rate(policy, trace_keys, args.size, args.batch)
            rates[policy].append(rate)
            for hash_name in HASHES:
                rates[f"{policy}_{hash_name}"].append(url_rate(policy, urls, hash_name, args.size, args.batch))
        rates["python_lru"].append(python_lru_rate(python_keys, args.size))
        rates["python_set"].append(python_set_rate(python_keys))
        print(f"round {round_number}: " + ", ".join(f"{name} {fmt_both(values[-1])}" for name, values in rates.items()),
              flush=True)
    median = {name: Rate(statistics.median(r.wall for r in values), statistics.median(r.cpu for r in values))
              for name, values in rates.items()}
    bytes_per_entry = {policy: ONLINE_POLICIES[policy](args.size).bytes_per_entry for policy in ONLINE_POLICIES}
    for policy in ONLINE_POLICIES:
        print(f"{policy:6}: {fmt_both(median[policy])} keys ({hit_ratios[policy]:.1%} hits), "
              f"{fmt_both(median[f'{policy}_xxh64'])} URLs with XXH64, {fmt_both(median[f'{policy}_md5'])} with MD5; "
              f"{bytes_per_entry[policy]:.1f} bytes/entry; "
              f"{median[policy].cpu / median['python_lru'].cpu:.0f}x Python's LRU per CPU second")
    print(f"python: OrderedDict LRU {fmt_both(median['python_lru'])}, set {fmt_both(median['python_set'])}")

    sweep_s = sweep_cpu_s = None
    if args.sweep_requests:
        sweep_keys = keys[:args.sweep_requests]
        sizes = parse_sizes(args.sweep_sizes)
        started, cpu = time.perf_counter(), time.process_time()
        trace = Trace.of(sweep_keys)
        rows = sweep(trace, POLICIES, sizes)
        sweep_s, sweep_cpu_s = time.perf_counter() - started, time.process_time() - cpu
        print(f"sweep: {len(POLICIES)} policies x {len(sizes)} sizes over {len(sweep_keys):,} requests "
              f"({trace.distinct:,} distinct) in {sweep_s:.1f} s ({sweep_cpu_s:.1f} CPU s; {len(rows)} rows)")

    figures = {}
    for name in ("clock", "lru", "random", "python_lru", "python_set"):
        figures |= {f"{name}_per_s": round(median[name].wall), f"{name}_per_cpu_s": round(median[name].cpu)}
    for policy in ONLINE_POLICIES:
        for hash_name in HASHES:
            rate = median[f"{policy}_{hash_name}"]
            figures |= {f"{policy}_urls_{hash_name}_per_s": round(rate.wall),
                        f"{policy}_urls_{hash_name}_per_cpu_s": round(rate.cpu)}
    figures |= {f"{p}_bytes_per_entry": round(b, 1) for p, b in bytes_per_entry.items()}
    figures["sweep_s"] = round(sweep_s, 1) if sweep_s is not None else "NA"
    figures["sweep_cpu_s"] = round(sweep_cpu_s, 1) if sweep_cpu_s is not None else "NA"
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
