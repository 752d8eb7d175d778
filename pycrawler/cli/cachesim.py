"""``pycrawler cache-sim TRACE``: miss rates of URL-cache policies at many sizes over a trace."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..errors import BadInput
from ..progress import add_option as add_progress_option
from .plain import first_line

DEFAULT_SIZES = "2^0..2^25"
TARGET_HITS = 0.8
"""The paper's aim (misses under 20%): the summary names the smallest size reaching it."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache-sim", help="simulate URL caches over a trace: miss rate per policy and size",
                       description=first_line(__doc__))
    p.add_argument("trace", type=Path, metavar="TRACE",
                   help="URLs one per line (crawl --trace; gzip accepted) or raw little-endian 64-bit keys (.u64)")
    p.add_argument("--format", choices=("urls", "u64"),
                   help="how to read TRACE (default: u64 for names ending .u64 or .u64.gz, else urls)")
    p.add_argument("--policies", default="all", metavar="LIST",
                   help="comma list of lru, clock, random, static (the k most requested URLs pinned from the start, "
                        "as the paper counts it), static-cold (the same, each one's first request a miss), "
                        "min (Belady, demand paging), min-bypass (MIN that may leave a missed URL out), "
                        "infinite; or all (the default)")
    p.add_argument("--sizes", default=DEFAULT_SIZES, metavar="LIST",
                   help=f"cache sizes: counts (50000, 64k, 2^16) and ranges of powers (default {DEFAULT_SIZES})")
    p.add_argument("--csv", type=Path, metavar="FILE",
                   help="write policy,size,requests,hits,misses,miss_rate rows to FILE (default: stdout)")
    p.add_argument("--plot", type=Path, metavar="PNG", help="draw the miss-rate curves into PNG")
    p.add_argument("--title", help="the plot's title (default: the trace's name and size)")
    add_progress_option(p)
    p.set_defaults(run=run_cache_sim)


def run_cache_sim(args: argparse.Namespace) -> int:
    from ..progress import meter

    from ..cachesim.sweep import (CSV_HEADER, Trace, parse_policies, parse_sizes, passes, smallest_size_reaching,
                                  sweep_by_policy)
    from ..cachesim.trace import read_trace

    policies, sizes = parse_policies(args.policies), parse_sizes(args.sizes)
    for target in (args.csv, args.plot):
        if target is not None and not target.parent.is_dir():
            raise BadInput(f"{target.parent} is not a directory")
    keys = read_trace(args.trace, args.format)
    if not len(keys):
        raise BadInput(f"trace {args.trace} holds no requests")
    trace = Trace.of(keys)
    total = passes(policies, sizes, trace.distinct) * trace.requests
    rows, seconds = [], {}
    with meter("cache-sim", total=total, unit="req", unit_scale=True, enabled=args.progress) as bar:
        started = time.perf_counter()
        for policy, policy_rows in sweep_by_policy(trace, policies, sizes, bar.update):
            rows += policy_rows
            done = time.perf_counter()
            seconds[policy], started = done - started, done
    lines = [CSV_HEADER] + [row.csv() for row in rows]
    if args.csv is not None:
        args.csv.write_text("\n".join(lines) + "\n")
    else:
        print("\n".join(lines))
    if args.plot is not None:
        from ..cachesim.plot import plot_curves

        title = args.title or f"{args.trace.name}: {trace.requests:,} requests, {trace.distinct:,} distinct"
        plot_curves(rows, args.plot, title)
    print(f"cache-sim: {trace.requests:,} requests, {trace.distinct:,} distinct keys", file=sys.stderr)
    reaching = {p: smallest_size_reaching(rows, p, TARGET_HITS) for p in policies if p != "infinite"}
    print(f"cache-sim: {TARGET_HITS:.0%} hits from size " + ", ".join(
        f"{p} {'-' if k is None else f'{k:,}'}" for p, k in reaching.items()), file=sys.stderr)
    print("cache-sim: seconds per policy, all sizes: " + ", ".join(f"{p} {t:.1f}" for p, t in seconds.items()),
          file=sys.stderr)
    return 0
