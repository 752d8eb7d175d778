#!/usr/bin/env python3
"""What the crawl's live display costs: the same crawl in a terminal with and without it, in one run.

    .venv/bin/python scripts/bench/crawl_progress.py                     # the JDK 17 API docs, 3 rounds
    .venv/bin/python scripts/bench/crawl_progress.py --max-pages 2000 --rounds 1

Both variants run ``pycrawler crawl`` with stdout and stderr on a pseudo-terminal (as in a
user's shell) and differ only in the display: ``live`` draws it (the default on a terminal),
``plain`` has ``--no-progress``. The site is served by nginx on 127.0.0.1 as in
``crawl_vs_scrapy.py``, whose measuring (wall time, CPU of the child and its children, peak RSS)
and settings are reused; the variants alternate, round after round, so that the machine's drift
hits both alike. Every run must cover the whole site: a variant that loses pages has no figures.

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

VARIANTS = {"plain": ("--no-progress",), "live": ()}


def crawl_once(name: str, start_url: str, work: Path, concurrency: int, max_pages: int | None) -> Run:
    run = Run(name)
    folder = work / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    command = pycrawler_command(start_url, folder / "state", concurrency, max_pages) + list(VARIANTS[name])
    measure(run, command, folder / "terminal.out", terminal=True)
    if run.ran:
        read_crawl_log(folder / "state" / "crawl.log", run)
        drawn = "crawl: " in (folder / "terminal.out").read_text(errors="replace")
        if drawn != (name == "live"):
            run.exit_code, run.note = None, f"the display was {'' if drawn else 'not '}drawn"
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    add_site_arguments(parser)
    parser.add_argument("--rounds", type=int, default=3, help="crawls per variant (alternating)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="crawl-progress-") as scratch, \
            StaticSite(args.docs, server="nginx") as base_url:
        work = Path(scratch)
        start_url = base_url + args.seed
        truth = reachable_pages(args.docs, args.seed, base_url=base_url)
        print(f"site: {args.docs} at {base_url}; {len(truth)} pages reachable", flush=True)
        runs: dict[str, list[Run]] = {name: [] for name in VARIANTS}
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
    ratio = medians["live"] / medians["plain"] if medians["live"] and medians["plain"] else None
    print(f"plain_pages_per_s={figure(medians['plain'])} live_pages_per_s={figure(medians['live'])} "
          f"live_ratio={figure(ratio, 3)} rounds={args.rounds} complete={complete}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
