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

**Scale** (the generated spider, no network): what holding ``--seen`` fingerprints and
``--queued`` waiting requests costs each scheduler, in minutes rather than the hours a crawl of
10M pages would take. First one child process computes, with Scrapy's default request
fingerprinter, the fingerprints of ``--seen`` minus ``--queued`` generated requests
(``http://site<i mod 1000>.example/page/<i>.html``) into a file. Then, per variant, a child
process opens the scheduler as Scrapy does (``from_crawler``, ``open``; no engine or
downloader) and (1) marks those fingerprints seen the way its duplicate filter stores them,
:data:`ROUND` at a time: Scrapy's ``RFPDupeFilter`` gets them in its set as its
``request_seen`` adds them (bytes in Scrapy 2.19, hex strings in 2.11), pycrawler's seen table
their 64-bit keys (what the scheduler's batch writes add); (2) enqueues ``--queued`` further
generated requests through ``enqueue_request`` (fingerprinted, filtered, queued: in memory for
Scrapy, in JE for pycrawler, whose buffer is written every ``PYCRAWLER_BATCH`` =
:data:`SCALE_BATCH` requests here: a bulk load, where a crawl writes it every few pages). At
the end ``--seen`` fingerprints are seen and ``--queued`` requests queued; the child's peak RSS
is the figure. With no downloader in the process, Scrapy's scheduler uses
``ScrapyPriorityQueue`` (its priority queue that does not ask the downloader for slots) rather
than its default ``DownloaderAwarePriorityQueue``.

The last line is ``key=value`` figures: per variant ``<variant>_pages_per_s``,
``<variant>_pages_per_cpu_s`` (pages per second of the crawl's CPU: what a loaded machine
disturbs least), ``<variant>_peak_rss_mb``, ``<variant>_scale_peak_rss_mb``,
``<variant>_scale_s``; then
``exact_vs_memory_pages`` (pycrawler exact's pages/s over Scrapy's in memory) and
``exact_vs_memory_scale_rss`` (the ratio of the scale runs' peak RSS).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

from crawl_vs_scrapy import Run, add_site_arguments, figure, measure, run_scrapy

VARIANTS = ("memory", "jobdir", "exact", "bloom", "drum")
SCRAPY_VARIANTS = ("memory", "jobdir")
ROUND = 100_000
SCALE_BATCH = 10_000   # the scale runs' PYCRAWLER_BATCH: below the batch size that loads numba
FINGERPRINT_BYTES = 20   # SHA1, what Scrapy's default fingerprinter returns


def variant_settings(variant: str, work: Path) -> dict:
    """The Scrapy settings that make ``variant``, its state kept under ``work``."""
    if variant == "memory":
        return {}
    if variant == "jobdir":
        return {"JOBDIR": str(work / "jobdir")}
    return {"SCHEDULER": "pycrawler.scrapy.Scheduler", "PYCRAWLER_STATE": str(work / "state"),
            "PYCRAWLER_SEEN": variant}


# -- scale: child processes driving one scheduler each -------------------------------------------

def generated_url(i: int) -> str:
    """Request ``i`` of the generated spider: 1,000 sites, a page each."""
    return f"http://site{i % 1000}.example/page/{i}.html"


def fingerprint_file(path: Path, first: int, last: int) -> None:
    """Write the request fingerprints (Scrapy's default fingerprinter, 20 bytes each) of the
    generated requests ``first`` .. ``last - 1`` to ``path``."""
    from scrapy import Request, Spider
    from scrapy.utils.test import get_crawler

    fingerprinter = get_crawler(Spider, {}).request_fingerprinter
    with open(path, "wb") as out:
        for start in range(first, last, ROUND):
            out.write(b"".join(fingerprinter.fingerprint(Request(generated_url(i)))
                               for i in range(start, min(start + ROUND, last))))


def fingerprint_batches(path: Path):
    """The fingerprints :func:`fingerprint_file` wrote, :data:`ROUND` at a time."""
    with open(path, "rb") as source:
        while chunk := source.read(ROUND * FINGERPRINT_BYTES):
            yield [chunk[i:i + FINGERPRINT_BYTES] for i in range(0, len(chunk), FINGERPRINT_BYTES)]


def add_to_rfp_set(dupefilter, fingerprints: list[bytes]) -> None:
    """Add ``fingerprints`` to an ``RFPDupefilter``'s set as its ``request_seen`` does: the
    fingerprint bytes in ``_fingerprints`` (Scrapy 2.19), else their hex strings in
    ``fingerprints`` (Scrapy 2.11)."""
    if isinstance(getattr(dupefilter, "_fingerprints", None), set):
        dupefilter._fingerprints.update(fingerprints)
    else:
        dupefilter.fingerprints.update(fp.hex() for fp in fingerprints)


def drive(variant: str, work: Path, fingerprints: Path, queued: int, concurrency: int) -> None:
    """Open ``variant``'s scheduler as Scrapy does, mark the fingerprints in ``fingerprints``
    seen the way its duplicate filter stores them, then enqueue ``queued`` new generated
    requests through ``enqueue_request`` (see the module docstring)."""
    from scrapy import Request, Spider
    from scrapy.core.scheduler import Scheduler as ScrapyScheduler
    from scrapy.utils.misc import load_object
    from scrapy.utils.test import get_crawler

    from pycrawler.scrapy.fingerprints import seen_keys
    from pycrawler.seen.synchronous import SynchronousVisited

    class Generated(Spider):
        name = "generated"

    # No downloader here: Scrapy's scheduler takes the priority queue that does not ask one.
    settings = {"CONCURRENT_REQUESTS": concurrency, "LOG_LEVEL": "WARNING",
                "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue", "PYCRAWLER_BATCH": SCALE_BATCH,
                **variant_settings(variant, work)}
    crawler = get_crawler(Generated, settings)
    crawler.spider = spider = Generated()
    spider.crawler = crawler
    crawler.engine = types.SimpleNamespace(   # the engine's slot: nothing in progress, no wake-up
        _slot=types.SimpleNamespace(inprogress=set(), nextcall=types.SimpleNamespace(schedule=lambda d=0: None)))
    scheduler = load_object(settings.get("SCHEDULER", ScrapyScheduler)).from_crawler(crawler)
    scheduler.open(spider)
    started = time.monotonic()
    seen = 0
    for batch in fingerprint_batches(fingerprints):
        if variant in SCRAPY_VARIANTS:   # what RFPDupeFilter.request_seen adds to its set
            add_to_rfp_set(scheduler.df, batch)
        else:
            visited = scheduler.frontier.visited
            if isinstance(visited, SynchronousVisited):
                visited.add_many(seen_keys(batch))
            else:
                visited.add_batch(seen_keys(batch))
                visited.flush()
        seen += len(batch)
    marked = time.monotonic()
    print(f"{variant}: {seen} fingerprints marked seen in {marked - started:.1f} s", flush=True)
    for i in range(queued):
        scheduler.enqueue_request(Request(generated_url(i)))
    if hasattr(scheduler, "_write_buffer"):
        scheduler._write_buffer()
    print(f"{variant}: {queued} requests enqueued in {time.monotonic() - marked:.1f} s; {len(scheduler)} queued",
          flush=True)
    scheduler.close("finished")


def run_scale(variant: str, work: Path, fingerprints: Path, args) -> Run:
    run = Run(variant)
    command = [sys.executable, __file__, "--drive", variant, "--work", str(work), "--fingerprints", str(fingerprints),
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
    parser.add_argument("--fingerprints", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        drive(args.drive, args.work, args.fingerprints, args.queued, args.concurrency)
        return 0
    if args.fingerprints:
        fingerprint_file(args.fingerprints, args.queued, args.seen)
        return 0
    if not 0 <= args.queued <= args.seen:
        parser.error("--queued must be between 0 and --seen")
    variants = [v for v in args.variants.split(",") if v]
    if unknown := set(variants) - set(VARIANTS):
        parser.error(f"unknown variants: {', '.join(sorted(unknown))}")

    scratch = None if args.keep else tempfile.TemporaryDirectory(prefix="scrapy-scheduler-")
    root = args.keep or Path(scratch.name)
    crawls: dict[str, Run] = {}
    scales: dict[str, Run] = {}
    if not args.skip_crawl:
        from pycrawler.static_site.ground_truth import coverage, reachable_pages
        from pycrawler.static_site.server import StaticSite

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
        fingerprints = root / "scale" / "fingerprints.bin"
        fingerprints.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        subprocess.run([sys.executable, __file__, "--fingerprints", str(fingerprints), "--seen", str(args.seen),
                        "--queued", str(args.queued)], check=True)
        print(f"scale: {args.seen - args.queued} fingerprints computed in {time.monotonic() - started:.1f} s",
              flush=True)
        for variant in variants:
            work = root / "scale" / variant
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            run = scales[variant] = run_scale(variant, work, fingerprints, args)
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
