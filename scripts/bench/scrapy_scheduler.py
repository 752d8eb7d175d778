#!/usr/bin/env python3
"""Scrapy's schedulers against pycrawler's, one run: a crawl's pages/s and RSS, then RSS at scale.

    .venv/bin/python scripts/bench/scrapy_scheduler.py                      # JDK docs; 10M seen, 2M queued
    .venv/bin/python scripts/bench/scrapy_scheduler.py --max-pages 500 --seen 200000 --queued 40000

Variants, each a child process measured from here (wall time, CPU, peak RSS of its process
tree: :func:`crawl_vs_scrapy.measure`):

- ``memory``: Scrapy's default scheduler (memory queues, ``RFPDupeFilter``'s set);
- ``jobdir``: the same with ``JOBDIR`` (pickled disk queues, fingerprints in ``requests.seen``);
- ``exact``, ``bloom``, ``drum``: ``SCHEDULER = "pycrawler.scrapy.Scheduler"`` with that
  ``PYCRAWLER_SEEN`` (queue policy ``scrapy``).

**Crawl**: the spider of ``crawl_vs_scrapy.py`` (follow every same-host link) over the JDK API
docs served by nginx on loopback, ``--concurrency`` requests in flight, each variant in turn;
pages/s is responses over wall time, start-up included.

**Scale** (the generated spider): a child process plays Scrapy's engine against the scheduler,
with no network: it enqueues ``--seen`` distinct requests (a generated URL each, the default
callback) in rounds of :data:`ROUND`, and after each round takes requests out (and, for
pycrawler, lets them be finished, ``--concurrency`` at a time, as the engine does) until
``--queued`` are left waiting. So at the end ``--seen`` fingerprints are seen and ``--queued``
requests queued; its peak RSS is the figure. Every variant enqueues the same requests. With no
downloader in the process, Scrapy's scheduler uses ``ScrapyPriorityQueue`` (its priority queue
that does not ask the downloader for slots) rather than its default ``DownloaderAwarePriorityQueue``.

The last line is ``key=value`` figures: per variant ``<variant>_pages_per_s``,
``<variant>_pages_per_cpu_s`` (pages per second of the crawl's CPU: what a loaded machine
disturbs least), ``<variant>_peak_rss_mb``, ``<variant>_scale_peak_rss_mb``, ``<variant>_scale_s``; then
``exact_vs_memory_pages`` (pycrawler exact's pages/s over Scrapy's in memory) and
``exact_vs_memory_scale_rss`` (the ratio of the scale runs' peak RSS).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path

from crawl_vs_scrapy import Run, add_site_arguments, figure, measure, run_scrapy

VARIANTS = ("memory", "jobdir", "exact", "bloom", "drum")
ROUND = 10_000


def variant_settings(variant: str, work: Path) -> dict:
    """The Scrapy settings that make ``variant``, its state kept under ``work``."""
    if variant == "memory":
        return {}
    if variant == "jobdir":
        return {"JOBDIR": str(work / "jobdir")}
    return {"SCHEDULER": "pycrawler.scrapy.Scheduler", "PYCRAWLER_STATE": str(work / "state"),
            "PYCRAWLER_SEEN": variant}


# -- scale: a child process driving one scheduler ------------------------------------------------

def drive(variant: str, work: Path, seen: int, queued: int, concurrency: int) -> None:
    """Enqueue ``seen`` distinct requests, leaving ``queued`` waiting (see the module docstring)."""
    from scrapy import Request, Spider
    from scrapy.core.scheduler import Scheduler as ScrapyScheduler
    from scrapy.utils.misc import load_object
    from scrapy.utils.test import get_crawler

    class Generated(Spider):
        name = "generated"

    # No downloader here: Scrapy's scheduler takes the priority queue that does not ask one.
    settings = {"CONCURRENT_REQUESTS": concurrency, "LOG_LEVEL": "WARNING",
                "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue", **variant_settings(variant, work)}
    crawler = get_crawler(Generated, settings)
    crawler.spider = spider = Generated()
    spider.crawler = crawler
    in_progress: set = set()   # the engine's slot: what it holds of the requests it took
    crawler.engine = types.SimpleNamespace(
        _slot=types.SimpleNamespace(inprogress=in_progress, nextcall=types.SimpleNamespace(schedule=lambda d=0: None)))
    scheduler = load_object(settings.get("SCHEDULER", ScrapyScheduler)).from_crawler(crawler)
    scheduler.open(spider)
    started = time.monotonic()
    for first in range(0, seen, ROUND):
        for i in range(first, min(first + ROUND, seen)):
            scheduler.enqueue_request(Request(f"http://site{i % 1000}.example/page/{i}.html"))
        while len(scheduler) > queued:
            for _ in range(concurrency):
                request = scheduler.next_request()
                if request is None:
                    break
                in_progress.add(request)
            in_progress.clear()   # the engine processed them
    print(f"{variant}: {seen} seen, {len(scheduler)} queued in {time.monotonic() - started:.1f} s", flush=True)
    scheduler.close("finished")


def run_scale(variant: str, work: Path, args) -> Run:
    run = Run(variant)
    command = [sys.executable, __file__, "--drive", variant, "--work", str(work), "--seen", str(args.seen),
               "--queued", str(args.queued), "--concurrency", str(args.concurrency)]
    measure(run, command, work / "scale.log")
    return run


# -- the run -------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    add_site_arguments(parser)
    parser.add_argument("--seen", type=int, default=10_000_000, help="scale: distinct requests enqueued")
    parser.add_argument("--queued", type=int, default=2_000_000, help="scale: requests left waiting")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--skip-crawl", action="store_true", help="only the scale runs")
    parser.add_argument("--skip-scale", action="store_true", help="only the crawls")
    parser.add_argument("--keep", type=Path, default=None, help="keep logs and state in this directory")
    parser.add_argument("--drive", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        drive(args.drive, args.work, args.seen, args.queued, args.concurrency)
        return 0
    variants = [v for v in args.variants.split(",") if v]
    if unknown := set(variants) - set(VARIANTS):
        parser.error(f"unknown variants: {', '.join(sorted(unknown))}")

    scratch = None if args.keep else tempfile.TemporaryDirectory(prefix="scrapy-scheduler-")
    root = args.keep or Path(scratch.name)
    crawls: dict[str, Run] = {}
    scales: dict[str, Run] = {}
    if not args.skip_crawl:
        from pycrawler.crawl.ground_truth import coverage, reachable_pages
        from pycrawler.crawl.site import StaticSite

        with StaticSite(args.docs) as base_url:
            truth = reachable_pages(args.docs, args.seed, base_url=base_url)
            print(f"site: {args.docs} at {base_url}; {len(truth)} pages reachable", flush=True)
            for variant in variants:
                work = root / "crawl" / variant
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir(parents=True)
                run = crawls[variant] = run_scrapy(base_url + args.seed, work, args.concurrency, args.max_pages,
                                                   name=variant, extra=variant_settings(variant, work))
                if run.ran:
                    run.coverage, run.covered = coverage(run.ok_urls, truth, args.docs, base_url)
                print(f"crawl {variant}: {run.responses} pages in {run.wall_s:.1f} s, "
                      f"{figure(run.pages_per_s)} pages/s, {figure(run.pages_per_cpu_s)} pages/CPU s, "
                      f"peak RSS {figure(run.peak_rss_mb, 0)} MB, "
                      f"coverage {run.covered}/{len(truth)} {run.note}", flush=True)
    if not args.skip_scale:
        for variant in variants:
            work = root / "scale" / variant
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            run = scales[variant] = run_scale(variant, work, args)
            print(f"scale {variant}: {args.seen} seen, {args.queued} queued: {run.wall_s:.1f} s, "
                  f"peak RSS {figure(run.peak_rss_mb, 0)} MB {run.note}", flush=True)
    if scratch is not None:
        scratch.cleanup()

    figures = {}
    for variant in variants:
        crawl, scale = crawls.get(variant, Run(variant)), scales.get(variant, Run(variant))
        figures[f"{variant}_pages_per_s"] = figure(crawl.pages_per_s)
        figures[f"{variant}_pages_per_cpu_s"] = figure(crawl.pages_per_cpu_s)
        figures[f"{variant}_peak_rss_mb"] = figure(crawl.peak_rss_mb, 0)
        figures[f"{variant}_scale_peak_rss_mb"] = figure(scale.peak_rss_mb, 0)
        figures[f"{variant}_scale_s"] = figure(scale.wall_s if scale.ran else None)

    def ratio(runs: dict[str, Run], attribute: str) -> float | None:
        ours, theirs = (getattr(runs[v], attribute) if v in runs else None for v in ("exact", "memory"))
        return ours / theirs if ours is not None and theirs else None

    figures["exact_vs_memory_pages"] = figure(ratio(crawls, "pages_per_s"), 2)
    figures["exact_vs_memory_scale_rss"] = figure(ratio(scales, "peak_rss_mb"), 2)
    print(" ".join(f"{key}={value}" for key, value in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
