#!/usr/bin/env python3
"""What ``pycrawler crawl --fsync`` costs: the same crawl with and without it, in one run.

    .venv/bin/python scripts/bench/crawl_fsync.py                     # the JDK 17 API docs, 3 rounds
    .venv/bin/python scripts/bench/crawl_fsync.py --max-pages 500 --rounds 1

Both variants write every output a user keeps (crawl.log, WARC files, the link trace) and
differ only in ``--fsync``: without it each flush pushes the outputs to the operating system
before JE commits (enough for a kill -9); with it, each flush also fsyncs them (enough for a
power loss). The site is served by nginx on 127.0.0.1 as in ``crawl_vs_scrapy.py``, whose
measuring (wall time, CPU of the child and its children, peak RSS) and settings are reused;
the variants alternate, round after round, so that the machine's drift hits both alike.
Every run must cover the whole site: a variant that loses pages has no figures.

The last line is ``key=value`` figures: medians of pages/s per variant and their ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_vs_scrapy import Run, add_site_arguments, figure, measure, pycrawler_command, read_crawl_log  # noqa: E402

from pycrawler.crawl.ground_truth import coverage, reachable_pages  # noqa: E402
from pycrawler.crawl.site import StaticSite  # noqa: E402

VARIANTS = {"flush": (), "fsync": ("--fsync",)}


def crawl_once(name: str, start_url: str, work: Path, concurrency: int, max_pages: int | None) -> Run:
    run = Run(name)
    folder = work / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    command = pycrawler_command(start_url, folder / "state", concurrency, max_pages)
    command += ["--warc", str(folder / "warcs"), "--trace", str(folder / "trace.txt"), *VARIANTS[name]]
    measure(run, command, folder / "crawl.out")
    if run.ran:
        read_crawl_log(folder / "state" / "crawl.log", run)
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    add_site_arguments(parser)
    parser.add_argument("--rounds", type=int, default=3, help="crawls per variant (alternating)")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the crawls' states and outputs (default: a temporary one; "
                             "put it on the disk whose fsync you want to measure)")
    args = parser.parse_args(argv)

    scratch = None if args.work else tempfile.TemporaryDirectory(prefix="crawl-fsync-")
    work = args.work or Path(scratch.name)
    runs: dict[str, list[Run]] = {name: [] for name in VARIANTS}
    with StaticSite(args.docs, server="nginx") as base_url:
        start_url = base_url + args.seed
        truth = reachable_pages(args.docs, args.seed, base_url=base_url)
        print(f"site: {args.docs} at {base_url}; {len(truth)} pages reachable; outputs under {work}", flush=True)
        for round_number in range(1, args.rounds + 1):
            for name in VARIANTS:
                run = crawl_once(name, start_url, work, args.concurrency, args.max_pages)
                if run.ran:
                    run.coverage, run.covered = coverage(run.ok_urls, truth, args.docs, base_url)
                print(f"round {round_number} {name:5}: {run.responses} pages, {figure(run.pages_per_s)} pages/s, "
                      f"{figure(run.cpu_s)} CPU s, coverage {run.covered}/{len(truth)} {run.note}", flush=True)
                runs[name].append(run)
    complete = args.max_pages is not None or all(r.covered == len(truth) for rs in runs.values() for r in rs)
    medians = {name: (statistics.median(r.pages_per_s for r in rs) if all(r.ran for r in rs) and complete else None)
               for name, rs in runs.items()}
    ratio = medians["fsync"] / medians["flush"] if medians["fsync"] and medians["flush"] else None
    if scratch is not None:
        scratch.cleanup()
    print(f"flush_pages_per_s={figure(medians['flush'])} fsync_pages_per_s={figure(medians['fsync'])} "
          f"fsync_ratio={figure(ratio, 3)} rounds={args.rounds} complete={complete}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
