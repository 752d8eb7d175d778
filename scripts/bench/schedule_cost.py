#!/usr/bin/env python3
"""A link's cost on the crawl's schedule path: a new URL against a repeat, per seen table,
source trees side by side.

    .venv/bin/python scripts/bench/schedule_cost.py --variant before=../base --variant after=.

What is timed is what a crawl's flush calls (:class:`pycrawler.crawl.discovery.LinkScheduler`
over a :class:`~pycrawler.frontier.workqueues.WorkQueueFrontier` on a real JE environment in a
temporary folder, its Visited table opened as ``pycrawler crawl --seen`` opens it, queues
``bkdr:128`` as a 32-connection crawl's): batches of ``--links`` links, as the (url, layer,
hop path, via) tuples a flush builds, from pages of ``--links-per-page`` links each spread over
``--hosts`` hosts. Each round schedules ``--batches`` batches of links never seen (every link
new), then as many of links to the last round's URLs from other pages (every link a repeat);
with ``drum`` each half ends with the frontier's ``flush()``, in which DRUM answers and the new
URLs are enqueued, timed with it. The figures are microseconds a link, medians of ``--rounds``
rounds after ``--warmup`` uncounted ones.

Each ``--variant NAME=FOLDER`` runs in a process of its own with ``PYTHONPATH=FOLDER`` (e.g. a
``git worktree`` of an older commit); the variants alternate table by table, ``--repeats``
times, so that the machine's drift hits them alike; a variant's rounds of all its repeats make
its medians. ``--profile`` prints, per variant and table, where a new batch's time goes
(cProfile, functions by their own time, one more round). The last line is ``key=value``:
``<variant>_<table>_new_us`` and ``_repeat_us`` (wall clock), ``_new_cpu_us`` and
``_repeat_cpu_us`` (the calling thread's CPU: Python and the JE calls it makes, not the JVM's
collector threads; steadier than the wall clock on a loaded machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = ("exact", "bloom", "drum")
FIGURES = ("new_us", "repeat_us", "new_cpu_us", "repeat_cpu_us")


def page_links(first_page: int, pages: int, per_page: int, hosts: int, first_target: int) -> list[tuple]:
    """``pages`` pages' links, ``per_page`` each, to targets numbered from ``first_target`` up
    (each target once): a crawl's flush-sized batch, the link tuples a flush builds."""
    links = []
    target = first_target
    for page in range(first_page, first_page + pages):
        via = f"http://h{page % hosts}.example.com:8080/p{page}.html"
        for _ in range(per_page):
            links.append((f"http://h{target % hosts}.example.com:8080/p{target}.html", 3, "LLL", via))
            target += 1
    return links


def child(args) -> None:
    """One variant, one table: the rounds, in this process (its pycrawler from PYTHONPATH)."""
    import cProfile
    import io
    import pstats

    from pycrawler.crawl.discovery import LinkScheduler
    from pycrawler.frontier.politeness import Politeness
    from pycrawler.frontier.todo import JE_CONFIG
    from pycrawler.frontier.workqueues import WorkQueueFrontier
    from pycrawler.seen.tables import open_visited
    from pycrawler.store import Environment

    pages = max(1, args.links // args.links_per_page)
    batch_links = pages * args.links_per_page
    round_links = batch_links * args.batches
    total_rounds = 1 + args.warmup + args.rounds + (1 if args.profile else 0)
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        state = Path(scratch)
        env = Environment(state / "env", create=True, durability="write_no_sync", cache_size=64 << 20,
                          config=JE_CONFIG)
        visited = open_visited(args.table, env, state, bloom_capacity=4 * total_rounds * round_links + 1000)
        frontier = WorkQueueFrontier(env, visited, create=True, assignment="bkdr:128", canonicalizer="web",
                                     politeness=Politeness.none(), prefetch=16)
        schedule = LinkScheduler(frontier)

        def batches(first_page: int, first_target: int) -> list[list[tuple]]:
            return [page_links(first_page + b * pages, pages, args.links_per_page, args.hosts,
                               first_target + b * batch_links) for b in range(args.batches)]

        def timed(round_batches) -> tuple[float, float]:
            """(seconds, seconds of the calling thread's CPU) a link: the batches scheduled, then
            (DRUM) answered at the flush."""
            began, began_cpu = time.perf_counter(), time.thread_time()
            for links in round_batches:
                schedule(links)
            if args.table == "drum":
                frontier.flush()
            return (time.perf_counter() - began) / round_links, (time.thread_time() - began_cpu) / round_links

        new_us, repeat_us, new_cpu_us, repeat_cpu_us, profile = [], [], [], [], ""
        for round_ in range(total_rounds):
            fresh = batches(round_ * args.batches * pages, round_ * round_links)
            # Links to the last round's new URLs, from other pages: every one a repeat.
            repeats = batches(10**8 + round_ * args.batches * pages, max(0, round_ - 1) * round_links)
            if args.profile and round_ == total_rounds - 1:
                profiler = cProfile.Profile()
                profiler.enable()
                timed(fresh)
                profiler.disable()
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(args.profile)
                profile = out.getvalue()
                break
            before = frontier.totals["enqueued"]
            seconds_new = timed(fresh)
            enqueued = frontier.totals["enqueued"] - before
            seconds_repeat = timed(repeats) if round_ else None   # round 0: the last round's are its own
            if round_ > args.warmup:
                new_us.append(seconds_new[0] * 1e6)
                repeat_us.append(seconds_repeat[0] * 1e6)
                new_cpu_us.append(seconds_new[1] * 1e6)
                repeat_cpu_us.append(seconds_repeat[1] * 1e6)
            # A Bloom filter may call the odd new URL seen; anything else is a broken run.
            if enqueued < round_links * 0.99:
                raise SystemExit(f"only {enqueued} of {round_links} new links enqueued")
        frontier.close()
        visited.close()
        env.close()
    json.dump({"new_us": new_us, "repeat_us": repeat_us, "new_cpu_us": new_cpu_us, "repeat_cpu_us": repeat_cpu_us,
               "links": batch_links, "profile": profile,
               "enqueued": frontier.totals["enqueued"], "duplicates": frontier.totals["duplicates"]}, sys.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", metavar="NAME=FOLDER",
                        help="a source tree to time (default: this one, as 'this')")
    parser.add_argument("--seen", default=",".join(TABLES), help="tables, comma-separated: exact,bloom,drum")
    parser.add_argument("--links", type=int, default=5000, help="links a batch (a flush's)")
    parser.add_argument("--batches", type=int, default=4, help="batches a round (DRUM: then one flush)")
    parser.add_argument("--links-per-page", type=int, default=50)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2, help="processes per variant and table, alternated")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N costliest functions")
    parser.add_argument("--dir", type=Path, help="where the temporary stores go")
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.table:
        child(args)
        return

    variants = [v.split("=", 1) for v in (args.variant or [f"this={ROOT}"])]
    tables = [t for t in args.seen.split(",") if t]
    if bad := [t for t in tables if t not in TABLES]:
        parser.error(f"--seen takes {', '.join(TABLES)}, not {', '.join(bad)}")
    results: dict[tuple[str, str], dict] = {}
    figures = {"load_before": os.getloadavg()[0]}
    for repeat in range(args.repeats):
        for table in tables:
            order = variants if repeat % 2 == 0 else variants[::-1]
            for name, folder in order:
                command = [sys.executable, __file__, "--table", table, "--links", str(args.links),
                           "--links-per-page", str(args.links_per_page), "--batches", str(args.batches), "--hosts", str(args.hosts),
                           "--rounds", str(args.rounds), "--warmup", str(args.warmup),
                           "--profile", str(args.profile if repeat == args.repeats - 1 else 0)]
                if args.dir:
                    command += ["--dir", str(args.dir)]
                env = dict(os.environ, PYTHONPATH=str(Path(folder).resolve()))
                done = subprocess.run(command, env=env, capture_output=True, text=True)
                if done.returncode:
                    raise SystemExit(f"{name} {table} failed:\n{done.stderr}")
                out = json.loads(done.stdout)
                into = results.setdefault((name, table), {key: [] for key in FIGURES})
                for key in FIGURES:
                    into[key] += out[key]
                into["links"] = out["links"]
                into["totals"] = (out["enqueued"], out["duplicates"])
                if out["profile"]:
                    into["profile"] = out["profile"]
                print(f"{name} {table} repeat {repeat + 1}: new {statistics.median(out['new_us']):.1f} us, "
                      f"repeat {statistics.median(out['repeat_us']):.1f} us a link", flush=True)
    print(f"\n{'variant':<10} {'table':<6} {'links':>6} {'new us':>7} {'repeat us':>9} {'new/repeat':>10} "
          f"{'new cpu us':>10} {'repeat cpu us':>13} {'enqueued':>9} {'duplicates':>10}")
    for (name, table), got in results.items():
        new, repeat, new_cpu, repeat_cpu = (statistics.median(got[key]) for key in FIGURES)
        for key in FIGURES:
            figures[f"{name}_{table}_{key}"] = statistics.median(got[key])
        print(f"{name:<10} {table:<6} {got['links']:>6} {new:>7.1f} {repeat:>9.1f} {new / repeat:>10.2f} "
              f"{new_cpu:>10.1f} {repeat_cpu:>13.1f} {got['totals'][0]:>9} {got['totals'][1]:>10}")
    for (name, table), got in results.items():
        if "profile" in got:
            print(f"\n--- {name} {table}: a batch of {got['links']} new links, by function (own time)")
            print("\n".join(line for line in got["profile"].splitlines() if line.strip())[:6000])
    figures["load_after"] = os.getloadavg()[0]
    print(" ".join(f"{k}={v:.1f}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
