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
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_vs_scrapy import add_site_arguments, alternate, figure, median

VARIANTS = {"flush": (), "fsync": ("--fsync",)}


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
    runs, complete = alternate(VARIANTS, args, work, outputs=lambda folder: [
        "--warc", str(folder / "warcs"), "--trace", str(folder / "trace.txt")])
    medians = {name: median(rs, complete) for name, rs in runs.items()}
    ratio = medians["fsync"] / medians["flush"] if medians["fsync"] and medians["flush"] else None
    if scratch is not None:
        scratch.cleanup()
    print(f"flush_pages_per_s={figure(medians['flush'])} fsync_pages_per_s={figure(medians['fsync'])} "
          f"fsync_ratio={figure(ratio, 3)} rounds={args.rounds} complete={complete}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
