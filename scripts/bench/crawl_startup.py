#!/usr/bin/env python3
"""A crawl's fixed cost: its start-up and its end, against the fetches between, versions side by side.

    .venv/bin/python scripts/bench/crawl_startup.py --pages 300 2500 --rounds 5 \\
        --variant before=../base --variant after=.

On a small site the seconds before the first request and after the last weigh on a crawl's
pages/s as much as the fetching does (``vs_crawlers.py`` measures whole runs, start-up included).
Each ``--pages`` size is a one-host site of ``vs_crawlers.py``'s shape, generated into a
temporary folder and served by its nginx (which logs every request with its time). Each
``--variant NAME=FOLDER`` runs ``pycrawler crawl`` from that source tree (``PYTHONPATH=FOLDER``,
e.g. a ``git worktree`` of an older commit) at ``vs_crawlers.py``'s best settings
(``--concurrency 32 --queue-policy bkdr --delay 0``); the variants alternate, round after round,
so that the machine's drift hits them alike. Each run is split, by the clock and nginx's log, into:

- **head**: from the process's start to the first request nginx answered (robots.txt);
- **span**: from the first request to the last;
- **tail**: from the last request to the process's exit;
- **cpu**: the CPU seconds of the crawl's process tree (user and system, its fetchers included).

The output: a line per run, then per size the medians of each variant and their ratios to the
first variant's, and a last line of ``key=value`` medians.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vs_crawlers import Nginx, generate, pycrawler_settings
from pycrawler.local_servers import free_port

COLUMNS = ("wall", "head", "span", "tail", "cpu")


def crawl(source: Path, seeds: list[str], state: Path, log: Path) -> dict[str, float]:
    """One crawl from the code in ``source``; its seconds by part, read against nginx's ``log``."""
    offset = log.stat().st_size
    env = dict(os.environ, PYTHONPATH=str(source))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # run from compiled modules, as an installed pycrawler does
    started = time.time()
    cpu_before = _children_cpu()
    done = subprocess.run([sys.executable, "-m", "pycrawler", "crawl", *seeds, "--state", str(state),
                           "--no-progress", *pycrawler_settings("best", None)], env=env, cwd=source,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ended = time.time()
    if done.returncode != 0:
        sys.exit(f"crawl_startup: the crawl from {source} failed:\n{done.stdout.decode(errors='replace')}")
    with open(log, "rb") as f:
        f.seek(offset)
        stamps = [float(line.split(b" ", 1)[0]) for line in f.read().splitlines()]
    return {"wall": ended - started, "head": stamps[0] - started, "span": stamps[-1] - stamps[0],
            "tail": ended - stamps[-1], "cpu": _children_cpu() - cpu_before, "pages": len(stamps)}


def _children_cpu() -> float:
    """User and system seconds of the waited-for children so far: the crawl's whole process tree."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[300, 2500], help="sizes of the one-host sites")
    parser.add_argument("--variant", action="append", required=True, metavar="NAME=FOLDER",
                        help="a source tree to crawl with (repeat; alternated; the first is the baseline)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    variants = {name: Path(folder).resolve() for name, folder in (v.split("=", 1) for v in args.variant)}
    figures = {}
    with tempfile.TemporaryDirectory(prefix="crawl-startup-") as scratch:
        work = Path(scratch)
        for pages in args.pages:
            site = generate(work / f"site-{pages}", 1, pages, free_port())
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
            with Nginx(site, work / f"nginx-{pages}") as nginx:
                while not nginx.log.stat().st_size:  # its own probe's line, which nginx may write late
                    time.sleep(0.05)
                for round_ in range(args.rounds):
                    for name, source in variants.items():
                        run = crawl(source, site.seeds, work / f"state-{pages}-{name}-{round_}", nginx.log)
                        runs[name].append(run)
                        print(f"{pages} pages, round {round_ + 1}, {name}: {run['pages']:.0f} requests, "
                              + ", ".join(f"{c} {run[c]:.2f} s" for c in COLUMNS), flush=True)
            baseline = next(iter(variants))
            medians = {name: {c: statistics.median(r[c] for r in rows) for c in COLUMNS} for name, rows in runs.items()}
            for name, median in medians.items():
                ratios = " ".join(f"{c} {median[c] / medians[baseline][c]:.2f}x" for c in COLUMNS)
                print(f"{pages} pages, {name}, medians of {args.rounds}: "
                      + ", ".join(f"{c} {median[c]:.2f} s" for c in COLUMNS)
                      + f", {pages / median['wall']:.1f} pages/s over the whole run ({ratios} of {baseline})")
                figures.update({f"{name}_{pages}_{c}_s": f"{median[c]:.2f}" for c in COLUMNS})
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
