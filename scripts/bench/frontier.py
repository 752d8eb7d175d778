#!/usr/bin/env python3
"""Benchmark the work-queue frontier: schedule, then next() + completed() pairs.

    .venv/bin/python scripts/bench/frontier.py --urls 10000000 --queues 10000

``schedule`` phase: ``--urls`` URLs spread over ``--queues`` hosts go through
``schedule()`` in batches of ``--batch`` (canonicalise with ``--canon``, fingerprint, the
Visited table ``--visited``, assign a queue, enqueue in one transaction each). URL strings are
made batch by batch outside the clock. ``next`` phase: with politeness delays of zero,
``--pairs`` URLs are taken with ``next_batch(--take)`` and each finished with a single
``completed()`` call (group-committed every ``commit_every``), as an engine would.
Baselines in the same run: ``schedule()`` of one URL per call, and ``next()`` of one URL
per call, on ``--single`` URLs each.

The last line is ``key=value`` figures: ``schedule_per_s``, ``next_completed_per_s``,
``peak_rss_mb`` and the rest; ``*_per_cpu_s`` divide by the process's CPU time (every thread,
the JVM's included: its garbage collector and JIT compiler threads run beside the calls)
instead of the wall clock, which a loaded machine stretches; ``*_per_main_cpu_s`` divide by the
calling thread's CPU time only (Python and the Java code it calls). ``load_before`` /
``load_after`` are the one-minute load averages. ``--tracemalloc`` also measures the Python
heap (slower: the throughput figures of such a run are not comparable). JVM options (heap,
collector) come from ``PYCRAWLER_HEAP`` / ``PYCRAWLER_JVM_OPTS``. On a terminal each long phase
shows a live bar on stderr (pycrawler.progress); otherwise the schedule phase prints a line now
and then.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pycrawler.frontier.politeness import Outcome, Politeness  # noqa: E402
from pycrawler.frontier.todo import JE_CONFIG  # noqa: E402
from pycrawler.progress import meter  # noqa: E402
from pycrawler.frontier.workqueues import WorkQueueFrontier  # noqa: E402
from pycrawler.store import Environment  # noqa: E402


def urls(start: int, stop: int, queues: int, salt: str = "") -> list[str]:
    return [f"http://www.host{i % queues}.example.com/section{i % 97}/page{i}{salt}.html" for i in range(start, stop)]


def make_visited(kind: str, scratch: Path, capacity: int, env: Environment):
    if kind == "bloom":
        from pycrawler.seen.bloom import BloomFilter

        return BloomFilter.create(scratch / "seen.bloom", capacity=capacity, fpr=1e-4)
    if kind == "drum":
        from pycrawler.seen.drum import DrumVisited

        return DrumVisited(scratch / "drum", env=env)
    from pycrawler.seen.exact import ExactVisited

    return ExactVisited(env, "visited", create=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--queues", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=20_000, help="URLs per schedule() call")
    parser.add_argument("--pairs", type=int, default=500_000, help="next()+completed() pairs timed")
    parser.add_argument("--take", type=int, default=1000, help="URLs per next_batch() call")
    parser.add_argument("--single", type=int, default=5_000, help="URLs for the one-per-call baselines")
    parser.add_argument("--visited", choices=("bloom", "exact", "drum"), default="bloom")
    parser.add_argument("--canon", default="safe", help="canonicaliser: safe, w3lib, heritrix, none")
    parser.add_argument("--assignment", default="host")
    parser.add_argument("--queue-budget", type=int, metavar="N",
                        help="a queue budget (as crawl --queue-budget): the touched queues' records are then written "
                             "at every commit; make it larger than a queue's URLs to time only that")
    parser.add_argument("--prefetch", type=int, default=8)
    parser.add_argument("--cache-mb", type=int, help="JE cache (default JE's: 60%% of the JVM heap)")
    parser.add_argument("--dir", type=Path, help="where the store goes (default: a temporary directory)")
    parser.add_argument("--tracemalloc", action="store_true", help="measure the Python heap (slows the run)")
    args = parser.parse_args()

    figures: dict[str, float] = {"load_before": os.getloadavg()[0]}
    if args.tracemalloc:
        tracemalloc.start()
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        scratch = Path(scratch)
        env = Environment(scratch / "frontier", create=True, durability="write_no_sync",
                          cache_size=args.cache_mb and args.cache_mb << 20, config=JE_CONFIG)
        visited = make_visited(args.visited, scratch, args.urls + 2 * args.single, env)
        frontier = WorkQueueFrontier(env, visited, create=True, assignment=args.assignment,
                                     canonicalizer=args.canon, politeness=Politeness.none(), prefetch=args.prefetch,
                                     queue_budget=args.queue_budget)
        seconds = cpu = main_cpu = 0.0
        with meter("schedule", total=args.urls, unit="URLs") as bar:
            for start in range(0, args.urls, args.batch):
                batch = urls(start, min(args.urls, start + args.batch), args.queues)
                began, began_cpu, began_main = time.perf_counter(), time.process_time(), time.thread_time()
                frontier.schedule(batch)
                seconds += time.perf_counter() - began
                cpu += time.process_time() - began_cpu
                main_cpu += time.thread_time() - began_main
                bar.update(len(batch))
                if bar.disable and start // args.batch % 50 == 0:  # no terminal: a line now and then
                    print(f"  scheduled {start + len(batch):,} ({(start + len(batch)) / seconds:,.0f}/s)", flush=True)
        frontier.flush()
        # A Bloom filter drops the odd new URL as seen (its false-positive rate): count them.
        figures["dropped_as_seen"] = args.urls - len(frontier)
        figures["schedule_per_s"] = args.urls / seconds
        figures["schedule_per_cpu_s"] = args.urls / cpu
        figures["schedule_per_main_cpu_s"] = args.urls / main_cpu
        print(f"schedule: {args.urls:,} URLs over {len(frontier.queues):,} queues, batches of {args.batch:,}: "
              f"{figures['schedule_per_s']:,.0f}/s", flush=True)
        if args.tracemalloc:
            figures["python_heap_mb"] = tracemalloc.get_traced_memory()[0] / 2**20

        single = urls(0, args.single, args.queues, salt="-single")
        began = time.perf_counter()
        for url in single:
            frontier.schedule([url])
        figures["single_schedule_per_s"] = args.single / (time.perf_counter() - began)

        done, began, began_cpu, began_main = 0, time.perf_counter(), time.process_time(), time.thread_time()
        success = Outcome.success()
        with meter("next+completed", total=args.pairs, unit="pairs") as bar:
            while done < args.pairs:
                batch = frontier.next_batch(min(args.take, args.pairs - done))
                if not batch:
                    break
                for record in batch:
                    frontier.completed(record, success)
                done += len(batch)
                bar.update(len(batch))
        frontier.flush()
        figures["next_completed_per_s"] = done / (time.perf_counter() - began)
        figures["next_completed_per_cpu_s"] = done / (time.process_time() - began_cpu)
        figures["next_completed_per_main_cpu_s"] = done / (time.thread_time() - began_main)
        print(f"next+completed: {done:,} pairs, next_batch({args.take}) + completed() each: "
              f"{figures['next_completed_per_s']:,.0f}/s", flush=True)

        began = time.perf_counter()
        for _ in range(args.single):
            record = frontier.next()
            frontier.completed(record, success)
        figures["single_next_completed_per_s"] = args.single / (time.perf_counter() - began)
        figures["pending"] = len(frontier)
        figures["queues"] = len(frontier.queues)
        if args.tracemalloc:
            figures["python_heap_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        began = time.perf_counter()
        frontier.close()
        visited.close()
        env.close()
        figures["close_s"] = time.perf_counter() - began
        began = time.perf_counter()
        with WorkQueueFrontier.open(scratch / "frontier", read_only=True) as reopened:
            assert len(reopened) == figures["pending"]
        figures["reopen_clean_s"] = time.perf_counter() - began
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["load_after"] = os.getloadavg()[0]
    print(" ".join(f"{name}={value:.0f}" if value >= 10 else f"{name}={value:.2f}" for name, value in figures.items()))


if __name__ == "__main__":
    main()
