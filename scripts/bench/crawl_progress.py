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
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_vs_scrapy import add_site_arguments, alternate, figure, median

VARIANTS = {"plain": ("--no-progress",), "live": ()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    add_site_arguments(parser)
    parser.add_argument("--rounds", type=int, default=3, help="crawls per variant (alternating)")
    args = parser.parse_args(argv)

    def drawn(run, folder: Path) -> str:
        """Check that the display was drawn in the live runs only: a run that differs has no figures."""
        shown = "crawl: " in (folder / "crawl.out").read_text(errors="replace")
        if shown != (run.name == "live"):
            run.exit_code, run.note = None, f"the display was {'' if shown else 'not '}drawn"
        return ""

    with tempfile.TemporaryDirectory(prefix="crawl-progress-") as scratch:
        runs, complete = alternate(VARIANTS, args, Path(scratch), terminal=True, after=drawn)
    medians = {name: median(rs, complete) for name, rs in runs.items()}
    ratio = medians["live"] / medians["plain"] if medians["live"] and medians["plain"] else None
    print(f"plain_pages_per_s={figure(medians['plain'])} live_pages_per_s={figure(medians['live'])} "
          f"live_ratio={figure(ratio, 3)} rounds={args.rounds} complete={complete}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
