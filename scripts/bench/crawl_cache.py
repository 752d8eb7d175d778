#!/usr/bin/env python3
"""What ``pycrawler crawl --url-cache`` saves a real crawl: seen-table operations, pages/s, RSS.

    .venv/bin/python scripts/bench/crawl_cache.py                      # JDK 17 API docs, 3 rounds
    .venv/bin/python scripts/bench/crawl_cache.py --max-pages 500 --rounds 1 --cache clock:1000

Four variants crawl the same site, alternating round after round so the machine's drift hits
them alike: ``--seen exact`` and ``--seen drum``, each without and with ``--url-cache``.
Serving, settings and measuring (wall time, CPU, peak RSS of the crawl and its children) are
``crawl_vs_scrapy.py``'s. Seen-table operations: every link the frontier dedupes is one key
checked (the URL cache's hits plus misses, from the crawl's summary); with the cache, only
the misses reach the table. Every run must cover the whole site, or its figures are NA.

The last line is ``key=value`` figures: medians of pages/s and peak RSS per variant, and the
share of seen-table operations the cache saved.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_vs_scrapy import add_site_arguments, alternate, figure, median

CACHE_LINE = re.compile(r"url cache:\s+\S+: ([\d,]+) hits .*?, ([\d,]+) misses")


def variants(cache: str) -> dict[str, tuple[str, ...]]:
    return {f"{seen}{suffix}": ("--seen", seen, *extra) for seen in ("exact", "drum")
            for suffix, extra in (("", ()), ("+cache", ("--url-cache", cache)))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    add_site_arguments(parser)
    parser.add_argument("--cache", default="clock:50000", help="the --url-cache of the cached variants")
    parser.add_argument("--rounds", type=int, default=3, help="crawls per variant (alternating)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the crawls (default: a temporary one)")
    args = parser.parse_args(argv)

    scratch = None if args.work else tempfile.TemporaryDirectory(prefix="crawl-cache-")
    work = args.work or Path(scratch.name)
    chosen = variants(args.cache)
    saved: list[float] = []

    def cache_note(run, folder: Path) -> str:
        """The URL cache's hits and misses, from the summary the crawl printed."""
        found = CACHE_LINE.search((folder / "crawl.out").read_text(errors="replace"))
        if not found:
            return ""
        hits, misses = int(found[1].replace(",", "")), int(found[2].replace(",", ""))
        saved.append(hits / max(hits + misses, 1))
        return f", seen-table operations {hits + misses:,} -> {misses:,} ({saved[-1]:.1%} saved)"

    print(f"cache {args.cache}", flush=True)
    runs, complete = alternate(chosen, args, work, after=cache_note)
    if scratch is not None:
        scratch.cleanup()
    figures = {}
    for name in chosen:
        key = name.replace("+", "_")
        figures[f"{key}_pages_per_s"] = figure(median(runs[name], complete))
        figures[f"{key}_rss_mb"] = figure(median(runs[name], complete, lambda r: r.peak_rss_mb))
    figures["seen_ops_saved"] = figure(statistics.median(saved), 4) if saved else "NA"
    figures |= {"rounds": args.rounds, "complete": complete}
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
